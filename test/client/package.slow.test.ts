/**
 * The client as a package of its own: built with client/scripts/build.ts (tsc with no
 * Node types, so a Node-only API fails the build), installed by name next to a consumer,
 * and then
 * - type-checked from its published declarations (package `exports` → `types`),
 * - run by plain Node without type stripping,
 * - run in headless Chromium (Debian's `chromium`; skipped without it, unless
 *   REQUIRE_CHROMIUM=1), loaded as ES modules through an import map.
 * All three talk to the reference server.
 */
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { skipping } from "../support/skip.ts";
import { promisify } from "node:util";
import { launchBrowser, NO_CHROMIUM, requireChromiumWhenAsked } from "../support/chromium.ts";
import { installBuiltPackage } from "../support/package.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CLIENT = path.join(ROOT, "client");
requireChromiumWhenAsked();

let server: TestServer;
let scratch: string;
/** The built package, as `npm pack` would ship it. */
let pkg: string;

beforeAll(async () => {
  ({ scratch, pkg } = installBuiltPackage("@inference-toolkit/client", "client/scripts/build.ts", [
    "openapi-fetch",
    "openapi-typescript-helpers",
    "eventsource-parser",
  ]));
  cpSync(path.join(CLIENT, "package.json"), path.join(pkg, "package.json"));
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test("the client's sources, and the shared modules it ships (common/), import nothing from Node", () => {
  const sources = [CLIENT, path.join(ROOT, "common")].flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith(".ts"))
      .map((f) => path.join(dir, f)),
  );
  for (const file of sources) {
    const source = readFileSync(file, "utf8");
    assert.doesNotMatch(source, /from\s+["']node:|require\(|\bprocess\.|\bBuffer\b/, file);
  }
  const manifest = JSON.parse(readFileSync(path.join(CLIENT, "package.json"), "utf8"));
  assert.deepEqual(Object.keys(manifest.dependencies).sort(), ["eventsource-parser", "openapi-fetch"]);
  assert.equal(manifest.sideEffects, false, "tree-shakable");
});

test("the build holds JavaScript with .js imports, declarations, and the contract's types", () => {
  const dist = path.join(pkg, "dist");
  for (const file of ["index.js", "index.d.ts", "streams.js", "errors.d.ts"])
    assert.ok(existsSync(path.join(dist, file)), file);
  for (const file of ["api.d.ts", "contract-values.js", "contract-values.d.ts"])
    assert.ok(existsSync(path.join(pkg, "generated", file)), `generated/${file}`);
  // The resource names the client shares with the server, imported from dist/ as ../common/.
  for (const file of ["resource-names.js", "resource-names.d.ts"])
    assert.ok(existsSync(path.join(pkg, "common", file)), `common/${file}`);
  for (const file of readdirSync(dist).filter((f) => f.endsWith(".js")))
    assert.doesNotMatch(readFileSync(path.join(dist, file), "utf8"), /from "\.[^"]*\.ts"/, file);
});

test("a consumer type-checks against the published declarations", { timeout: 120_000 }, () => {
  const consumer = path.join(scratch, "consumer-types.mts");
  writeFileSync(
    consumer,
    `import { createClient, ok, paginate, type TrainingJob } from "@inference-toolkit/client";
const client = createClient({ baseUrl: "http://127.0.0.1:8080/v1", apiKey: "k" });
const response = await ok(client.POST("/responses", { body: { model: "tiny-chat", input: "Hi", store: false } }));
const text: string = response.model;
for await (const job of paginate(client, "/accounts/{account}/dpoJobs", { params: { path: { account: "acme" } } })) { const j: TrainingJob = job; }
// @ts-expect-error a misspelt field is an error for the package's users too
await ok(client.POST("/responses", { body: { model: "tiny-chat", inptu: "Hi", store: false } }));
export { text };
`,
  );
  writeFileSync(
    path.join(scratch, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2022",
        module: "nodenext",
        moduleResolution: "nodenext",
        lib: ["es2022", "dom", "dom.iterable"],
        types: [],
        strict: true,
        noEmit: true,
      },
      files: [consumer],
    }),
  );
  const run = spawnSync(
    process.execPath,
    [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", scratch, "--pretty", "false"],
    { encoding: "utf8" },
  );
  assert.equal(run.status, 0, run.stdout + run.stderr);
});

test("plain Node (no type stripping) runs the built package against the server", { timeout: 60_000 }, async () => {
  const script = path.join(scratch, "consumer.mjs");
  writeFileSync(
    script,
    `import { createClient, ok, streamResponse, ApiError } from "@inference-toolkit/client";
const client = createClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
const models = await ok(client.GET("/models"));
const stream = await streamResponse(client, { model: "tiny-chat", input: "Hi", store: false, max_output_tokens: 6 });
let events = 0;
for await (const _ of stream) events++;
const final = await stream.finalResponse();
let code = null;
try { await ok(client.GET("/models/{model}", { params: { path: { model: "nope" } } })); } catch (e) { code = e instanceof ApiError ? e.code : String(e); }
console.log(JSON.stringify({ models: models.data.length, events, status: final.status, code }));
`,
  );
  // Asynchronously: the server answering it runs in this process.
  const run = await promisify(execFile)(process.execPath, ["--no-experimental-strip-types", script], {
    encoding: "utf8",
    env: { ...process.env, BASE_URL: server.baseUrl, API_KEY: server.keys.acme },
    timeout: 30_000,
  });
  const result = JSON.parse(run.stdout);
  assert.ok(result.models > 0);
  assert.ok(result.events >= 6);
  assert.equal(result.code, "MODEL_NOT_FOUND");
});

test(
  "a browser runs the built package: a call, a streamed response, an ApiError, an aborted stream",
  { skip: skipping(NO_CHROMIUM), timeout: 60_000 },
  async () => {
    // One origin for the page, the modules and the API (proxied to the server), as a web app
    // served next to its API would have it; no CORS involved.
    const modules: Record<string, string> = {
      // The whole package, as published: dist/ imports its generated/ and common/ siblings.
      "/pkg/": pkg,
      "/openapi-fetch/": path.join(ROOT, "node_modules/openapi-fetch/dist"),
      "/eventsource-parser/": path.join(ROOT, "node_modules/eventsource-parser/dist"),
    };
    const page = `<!doctype html><script type="importmap">${JSON.stringify({
      imports: {
        "@inference-toolkit/client": "/pkg/dist/index.js",
        "openapi-fetch": "/openapi-fetch/index.mjs",
        "eventsource-parser": "/eventsource-parser/index.js",
        "eventsource-parser/stream": "/eventsource-parser/stream.js",
      },
    })}</script><script type="module">
import { createClient, ok, streamResponse, ApiError } from "@inference-toolkit/client";
window.run = async (apiKey) => {
  const client = createClient({ baseUrl: location.origin + "/v1", apiKey });
  const models = await ok(client.GET("/models"));
  const stream = await streamResponse(client, { model: "tiny-chat", input: "Hello!", store: false, max_output_tokens: 8 });
  let deltas = "";
  for await (const event of stream) if (event.type === "response.output_text.delta") deltas += event.delta;
  const final = await stream.finalResponse();
  const text = final.output.filter((i) => i.type === "message").flatMap((i) => i.content.map((c) => c.text)).join("");
  let error = null;
  try { await streamResponse(client, { model: "nope", input: "Hi", store: false }); } catch (e) { error = e instanceof ApiError ? { status: e.status, code: e.code, requestId: e.requestId } : String(e); }
  const abort = new AbortController();
  const long = await streamResponse(client, { model: "tiny-chat", input: "Tell me a story.", store: false, max_output_tokens: 200 }, { signal: abort.signal });
  let aborted = null;
  try { for await (const event of long) if (event.type === "response.output_text.delta") abort.abort(); } catch (e) { aborted = e.name; }
  return { models: models.data.length, same: deltas === text && text.length > 0, error, aborted, key: crypto.randomUUID().length };
};
window.ready = true;
</script>`;
    const site = http.createServer(async (req, res) => {
      const url = req.url ?? "/";
      if (url.startsWith("/v1/")) {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(
            ([k]) => !["host", "connection", "content-length", "origin", "referer"].includes(k),
          ),
        ) as Record<string, string>;
        const answer = await fetch(server.origin + url, {
          method: req.method,
          headers,
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        });
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        if (answer.body)
          for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
        return res.end();
      }
      if (url === "/") return res.writeHead(200, { "content-type": "text/html" }).end(page);
      const prefix = Object.keys(modules).find((p) => url.startsWith(p));
      const file = prefix && path.join(modules[prefix] as string, url.slice(prefix.length));
      if (!file || !existsSync(file)) return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "text/javascript" }).end(readFileSync(file));
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    const browser = await launchBrowser();
    try {
      const tab = await browser.newPage();
      const problems: string[] = [];
      tab.on("pageerror", (e) => problems.push(String(e)));
      await tab.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
      await tab.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, undefined, {
        timeout: 20_000,
      });
      const result = await tab.evaluate(
        (key) => (window as unknown as { run(key: string): Promise<unknown> }).run(key),
        server.keys.acme as string,
      );
      assert.deepEqual(problems, []);
      const { models, same, error, aborted, key } = result as {
        models: number;
        same: boolean;
        error: { status: number; code: string; requestId: string };
        aborted: string;
        key: number;
      };
      assert.ok(models > 0);
      assert.equal(same, true, "the deltas add up to the final text");
      assert.equal(error.status, 404);
      assert.equal(error.code, "MODEL_NOT_FOUND");
      assert.match(error.requestId, /^req_/);
      assert.equal(aborted, "APIUserAbortError");
      assert.equal(key, 36, "Web Crypto's randomUUID is there for Idempotency-Keys");
    } finally {
      await browser.close();
      await new Promise<void>((resolve) => site.close(() => resolve()));
    }
  },
);
