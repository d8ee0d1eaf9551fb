/**
 * GET /docs in headless Chromium (Debian's `chromium`, which .ci/run installs): the page
 * must render one block per operation of the generated contract, with no network but
 * the server's own. Without Chromium the test is skipped, unless REQUIRE_CHROMIUM=1
 * (as in CI), where a missing browser fails it.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { skipping } from "../support/skip.ts";
import type { Browser } from "playwright-core";
import { contractDocument } from "../../server/http/contract.ts";
import { launchBrowser, NO_CHROMIUM, requireChromiumWhenAsked } from "../support/chromium.ts";
import { startTestServer, type TestServer } from "./harness.ts";

requireChromiumWhenAsked();

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (NO_CHROMIUM) return;
  server = await startTestServer();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Every method and path of the contract, as Swagger UI shows them. */
function contractOperations(): string[] {
  const paths = (contractDocument() as { paths: Record<string, Record<string, unknown>> }).paths;
  const methods = new Set(["get", "put", "post", "delete", "patch"]);
  return Object.entries(paths).flatMap(([p, item]) =>
    Object.keys(item)
      .filter((m) => methods.has(m))
      .map((m) => `${m.toUpperCase()} ${p}`),
  );
}

test("the docs page renders every operation of the contract, offline", { skip: skipping(NO_CHROMIUM) }, async () => {
  const page = await browser.newPage();
  const foreign: string[] = [];
  page.on("request", (request) => {
    if (!request.url().startsWith(server.origin)) foreign.push(request.url());
  });
  await page.goto(`${server.origin}/docs`);
  const expected = contractOperations();
  await page.waitForFunction((n) => document.querySelectorAll(".opblock").length >= n, expected.length, {
    timeout: 20_000,
  });
  const rendered = await page.$$eval(".opblock", (blocks) =>
    blocks.map(
      (b) =>
        `${b.querySelector(".opblock-summary-method")?.textContent?.trim()} ${b.querySelector(".opblock-summary-path")?.getAttribute("data-path")}`,
    ),
  );
  assert.deepEqual([...rendered].sort(), [...expected].sort());
  assert.match(await page.title(), /API reference/);
  assert.deepEqual(foreign, [], "the page loads nothing from outside the server");
  await page.close();
});
