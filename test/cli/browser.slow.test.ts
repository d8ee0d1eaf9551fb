/**
 * The files the CLI writes for people to look at, opened in headless Chromium (Debian's
 * `chromium`) and checked for what a reader needs: the loss chart (SVG and PNG) with its
 * labelled axes and both curves, and the conformance report page with its compatibility
 * tables, failures and coverage, loading nothing from anywhere. A screenshot of each is
 * kept under reports/screenshots/ (a CI artefact).
 *
 * Skipped without Chromium, unless REQUIRE_CHROMIUM=1 (then a missing browser fails).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, test } from "vitest";
import { skipping } from "../support/skip.ts";
import type { Browser, Page } from "playwright-core";
import { htmlReport } from "../../conformance/report-html.ts";
import { SERIES_COLORS } from "../../cli/plot.ts";
import { ahoyRows, jsonl } from "../finetune/fixtures.ts";
import type { TestServer } from "../../harness/test-server.ts";
import { FIXTURE_REPORT, FIXTURE_RULES } from "./fixtures.ts";
import { launchBrowser, NO_CHROMIUM, requireChromiumWhenAsked } from "../support/chromium.ts";
import { cli, createJob, ROOT, scratchDir, screenshotPath, startCliServer, userEnv } from "./helpers.ts";

requireChromiumWhenAsked();

let browser: Browser;
let server: TestServer;
let env: Record<string, string>;
const scratch = scratchDir("cli-browser-");
const file = (name: string) => path.join(scratch.dir, name);

beforeAll(async () => {
  if (NO_CHROMIUM) return;
  browser = await launchBrowser();
  server = await startCliServer();
  env = userEnv(server);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  scratch.remove();
});

/** A page that may load file: URLs only; every other request is refused and remembered. */
async function offlinePage(viewport = { width: 1280, height: 900 }): Promise<{ page: Page; foreign: string[] }> {
  const page = await browser.newPage({ viewport });
  const foreign: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file:") || url.startsWith("data:")) return route.continue();
    foreign.push(url);
    return route.abort();
  });
  return { page, foreign };
}

describe("the loss chart", { skip: skipping(NO_CHROMIUM) }, () => {
  let jobId: string;

  beforeAll(async () => {
    if (NO_CHROMIUM) return;
    writeFileSync(file("ahoy.jsonl"), jsonl(ahoyRows(40)));
    const upload = await cli(["datasets", "upload", "ahoy", file("ahoy.jsonl"), "--create"], { env });
    assert.equal(upload.code, 0, upload.stderr);
    const job = await createJob(
      env,
      "ahoy",
      "ahoy-chat",
      "--watch",
      "--interval",
      "0.2",
      "--epochs",
      "2",
      "--batch-size",
      "4",
      "--eval-split",
      "20",
    );
    assert.equal(job.state, "JOB_STATE_SUCCEEDED");
    jobId = job.jobId;
  });

  test("SVG: labelled axes, the training and evaluation curves, the epochs", async () => {
    const result = await cli(["jobs", "metrics", jobId, "--plot", file("loss.svg")], { env });
    assert.equal(result.code, 0, result.stderr);
    const { page, foreign } = await offlinePage({ width: 800, height: 480 });
    await page.goto(pathToFileURL(file("loss.svg")).href);
    const texts = await page.$$eval("text", (nodes) => nodes.map((n) => n.textContent ?? ""));
    for (const label of [
      "Training step",
      "Loss",
      "Loss measured on",
      "training",
      "evaluation",
      "epoch 2",
      `Loss of job ${jobId}`,
    ]) {
      assert.ok(texts.includes(label), `the chart shows "${label}"; it shows ${JSON.stringify(texts)}`);
    }
    assert.ok(
      texts.some((t) => /^SFT: (?:accounts\/maas\/models\/)?tiny-chat → ahoy-chat, \d+ steps$/.test(t)),
      "the subtitle says what was trained",
    );
    // Both curves are drawn, as lines of their colour with some length.
    const lines = await page.$$eval("path", (paths) =>
      paths.map((p) => ({
        stroke: p.getAttribute("stroke") ?? getComputedStyle(p).stroke,
        length: (p as SVGPathElement).getTotalLength(),
      })),
    );
    for (const colour of Object.values(SERIES_COLORS)) {
      assert.ok(
        lines.some((l) => l.stroke === colour && l.length > 50),
        `a curve drawn in ${colour}: ${JSON.stringify(lines.filter((l) => l.length > 50))}`,
      );
    }
    await page.screenshot({ path: screenshotPath("cli-loss-curve-svg.png") });
    assert.deepEqual(foreign, []);
    await page.close();
  });

  test("PNG: the same chart drawn by Chromium, sharp and not blank", async () => {
    const result = await cli(["jobs", "metrics", jobId, "--plot", file("loss.png"), "--log"], { env });
    assert.equal(result.code, 0, result.stderr);
    const png = readFileSync(file("loss.png"));
    assert.equal(png.subarray(1, 4).toString(), "PNG");
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    assert.ok(width >= 1400 && height >= 700, `drawn at twice the chart's size: ${width}×${height}`);
    const { page, foreign } = await offlinePage();
    await page.goto(pathToFileURL(file("loss.png")).href);
    // Pixels of each curve's colour, counted on a canvas.
    const counts = await page.evaluate(async (colours) => {
      const img = document.querySelector("img") as HTMLImageElement;
      await img.decode();
      const canvas = document.createElement("canvas");
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const context = canvas.getContext("2d") as CanvasRenderingContext2D;
      context.drawImage(img, 0, 0);
      const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
      const rgb = colours.map((c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)));
      const found = rgb.map(() => 0);
      for (let i = 0; i < data.length; i += 4) {
        rgb.forEach(([r, g, b], k) => {
          if (Math.abs(data[i]! - r!) < 24 && Math.abs(data[i + 1]! - g!) < 24 && Math.abs(data[i + 2]! - b!) < 24)
            found[k]!++;
        });
      }
      return found;
    }, Object.values(SERIES_COLORS));
    assert.ok(
      counts.every((n) => n > 200),
      `both curves have pixels of their colour: ${counts}`,
    );
    await page.screenshot({ path: screenshotPath("cli-loss-curve-png.png") });
    assert.deepEqual(foreign, []);
    await page.close();
  });
});

describe("the conformance report page", { skip: skipping(NO_CHROMIUM) }, () => {
  test("compatibility by area and rule, every failure with request, expected and received, coverage; self-contained", async () => {
    const html = htmlReport(FIXTURE_REPORT, {
      baseUrl: "https://api.example.com/v1",
      rules: FIXTURE_RULES,
      date: new Date("2026-11-23T10:00:00Z"),
    });
    writeFileSync(file("report.html"), html);
    const { page, foreign } = await offlinePage();
    await page.goto(pathToFileURL(file("report.html")).href);

    assert.equal(await page.title(), "Conformance report: fixture");
    assert.match((await page.textContent("#verdict")) ?? "", /Not conformant: 2 transcripts failed/);
    const tiles = await page.$$eval("#summary .tile", (ts) =>
      ts.map((t) => (t as HTMLElement).innerText.replace(/\s+/g, " ").trim()),
    );
    assert.deepEqual(tiles, ["2 passed", "2 failed", "1 skipped", "1 not implemented"]);

    const areas = await page.$$eval("table.areas tbody tr", (rows) =>
      rows.map((r) => [
        r.getAttribute("data-area"),
        r.getAttribute("data-status"),
        ...[...r.querySelectorAll("td.n")].map((c) => c.textContent),
      ]),
    );
    assert.deepEqual(areas, [
      ["datasets", "skipped", "0", "0", "1", "0", "1"],
      ["errors", "fail", "1", "1", "0", "0", "2"],
      ["responses", "fail", "1", "1", "0", "1", "3"],
    ]);
    const rules = Object.fromEntries(
      await page.$$eval("table.rules tbody tr", (rows) =>
        rows.map((r) => [r.getAttribute("data-rule"), r.getAttribute("data-status")]),
      ),
    );
    assert.deepEqual(rules, {
      "errors-2": "fail",
      "paging-1": "skipped",
      "reasoning-summary": "not-implemented",
      "responses-1": "pass",
      "stream-order": "fail",
    });
    assert.match((await page.textContent('tr[data-rule="errors-2"]')) ?? "", /Every error answer carries error\.code/);

    const failures = await page.$$("article.failure");
    assert.equal(failures.length, 2);
    const first = await page.$eval('article.failure[data-transcript="errors/unknown-model"]', (a) => ({
      request: a.querySelector(".pane.request pre")?.textContent,
      expected: a.querySelector(".pane.expected pre")?.textContent,
      received: a.querySelector(".pane.received pre")?.textContent,
      requestId: a.querySelector(".request-id")?.textContent,
      rule: a.querySelector("dd code")?.textContent,
    }));
    assert.match(first.request ?? "", /^POST \/responses/);
    assert.match(first.expected ?? "", /"code": "MODEL_NOT_FOUND"/);
    assert.match(first.received ?? "", /"code": "NOT_FOUND"/);
    assert.match(first.received ?? "", /No such thing <b>here<\/b>/, "bodies are shown as text, never as markup");
    assert.equal(first.requestId, "req_0123456789abcdef01234567");
    assert.equal(first.rule, "errors-2");

    const coverage = await page.$$eval("[data-coverage]", (ms) =>
      ms.map((m) => [
        m.getAttribute("data-coverage"),
        m.querySelector(".figure")?.textContent,
        m.querySelector(".pct")?.textContent,
      ]),
    );
    assert.deepEqual(coverage, [
      ["operations", "18 / 24", "(75%)"],
      ["status codes", "77 / 120", "(64%)"],
      ["error codes", "29 / 33", "(88%)"],
      ["rules", "4 / 5", "(80%)"],
    ]);
    assert.equal(
      await page.$$eval("script, link[rel=stylesheet], img, iframe", (xs) => xs.length),
      0,
      "nothing outside the file",
    );
    await page.screenshot({ path: screenshotPath("conformance-report-fixture.png"), fullPage: true });
    assert.deepEqual(foreign, []);
    await page.close();
  });

  const kit =
    existsSync(path.join(ROOT, "conformance/index.ts")) &&
    existsSync(path.join(ROOT, "conformance/profiles/reference.json"));
  test(
    "conformance run --html against the reference server writes the page",
    { skip: skipping(!kit && "the conformance kit is not in this tree") },
    async () => {
      const result = await cli(
        ["--base-url", server.baseUrl, "conformance", "run", "--area", "auth", "--html", file("run.html")],
        { env },
      );
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      assert.match(result.stdout, /\d+ passed, 0 failed/);
      assert.match(result.stdout, /Wrote HTML: /);
      const { page, foreign } = await offlinePage();
      await page.goto(pathToFileURL(file("run.html")).href);
      assert.match((await page.textContent("#verdict")) ?? "", /No failures/);
      const areas = await page.$$eval("table.areas tbody tr", (rows) =>
        rows.map((r) => [r.getAttribute("data-area"), r.getAttribute("data-status")]),
      );
      assert.ok(
        areas.some(([area, status]) => area === "auth" && status === "pass"),
        JSON.stringify(areas),
      );
      assert.ok(
        (await page.$$('table.rules tr[data-status="pass"]')).length > 0,
        "rules the run proved are listed as pass",
      );
      await page.screenshot({ path: screenshotPath("conformance-report.png"), fullPage: true });
      assert.deepEqual(foreign, []);
      await page.close();
    },
  );
});
