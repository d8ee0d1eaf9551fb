/**
 * A run never hangs: against a server that accepts connections and never answers, with a
 * request timeout far longer than the test, the run's time limit ends it. What was in
 * flight fails under kit.time-limit naming its transcript, step and request, what had not
 * started is skipped, and the kit's command still writes its reports and exits 8.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { loadProfile, runConformance } from "../../conformance/index.ts";
import { REFERENCE_PROFILE } from "../../harness/conformance-reference.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
let silent: http.Server;
let baseUrl: string;
let dir: string;

beforeAll(async () => {
  // Takes every request and never answers it.
  silent = http.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
  dir = mkdtempSync(path.join(os.tmpdir(), "time-limit-"));
});
afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

test("the time limit ends a run whose requests are never answered, naming what was in flight", async () => {
  const profile = loadProfile(REFERENCE_PROFILE, { baseUrl });
  profile.timeouts = { ...profile.timeouts, requestMs: 600_000 };
  const started = performance.now();
  const report = await runConformance({
    profile,
    transcripts: ["responses/basic", "auth/missing-key", "events/stream-text"],
    concurrency: 2,
    timeLimitMs: 1500,
  });
  const seconds = (performance.now() - started) / 1000;
  assert.ok(seconds < 10, `the run took ${seconds} s`);
  assert.equal(report.timedOut, true);
  assert.equal(report.failed, 2, "the two transcripts in flight failed");
  assert.equal(report.skipped, 1, "the one never started is skipped");
  for (const failure of report.failures) {
    assert.equal(failure.rule, "kit.time-limit");
    assert.match(
      failure.message,
      /time limit \(1\.5 s\) passed at step 1, waiting for the answer to (POST|GET) http:\/\/127\.0\.0\.1:\d+\/v1\//,
    );
  }
  assert.equal(report.inFlight.length, 2);
  for (const f of report.inFlight) assert.match(f.request ?? "", /^(POST|GET) http:\/\/127\.0\.0\.1/);
  assert.match(report.details.find((r) => r.status === "skipped")?.reason ?? "", /time limit passed first/);
});

test("the kit's command stops at --timeout-minutes, prints what was in flight, writes its reports and exits 8", async () => {
  const json = path.join(dir, "report.json");
  const junit = path.join(dir, "report.xml");
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, "conformance/cli.ts"),
      "run",
      "--base-url",
      baseUrl,
      "--transcript",
      "responses/basic",
      "--timeout-minutes",
      "0.03",
      "--json-report",
      json,
      "--junit",
      junit,
      "--no-color",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.equal(code, 8, out);
  assert.match(out, /time limit passed: 1 transcript was running/);
  assert.match(out, /responses\/basic, step 1: waiting for POST http:\/\/127\.0\.0\.1:\d+\/v1\/responses/);
  const report = JSON.parse(readFileSync(json, "utf8"));
  assert.equal(report.timedOut, true);
  assert.equal(report.inFlight[0].transcript, "responses/basic");
  assert.match(readFileSync(junit, "utf8"), /kit\.time-limit/);
});
