/**
 * The command line: a run against the reference server writes JUnit and JSON reports and
 * exits 0; a run with failures exits 8 (the toolkit CLI's code for it) and names the
 * transcript, step, rule and request id; a bad selection exits 2 with the closest names;
 * `init` writes a starter profile from what the service answers; the coverage command passes.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { fileURLToPath } from "node:url";
import { REFERENCE_PROFILE, startReferenceServer, type Reference } from "../../harness/conformance-reference.ts";

const CLI = fileURLToPath(new URL("../../conformance/cli.ts", import.meta.url));
let ref: Reference;
let dir: string;

beforeAll(async () => {
  ref = await startReferenceServer();
  dir = mkdtempSync(path.join(os.tmpdir(), "conformance-cli-"));
});
afterAll(async () => {
  await ref?.close();
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

test("a passing run exits 0 and writes JUnit and JSON", async () => {
  const junit = path.join(dir, "report.xml");
  const json = path.join(dir, "report.json");
  // The reference profile without the largest body size: its one transcript is skipped, and JUnit says why.
  const { maxRequestBytes: _max, ...settings } = JSON.parse(readFileSync(REFERENCE_PROFILE, "utf8")).settings;
  const profile = path.join(dir, "without-max-request-bytes.json");
  writeFileSync(profile, JSON.stringify({ ...JSON.parse(readFileSync(REFERENCE_PROFILE, "utf8")), settings }));
  const run = await cli([
    "--base-url",
    ref.server.baseUrl,
    "--profile",
    profile,
    "--area",
    "responses",
    "--area",
    "auth",
    "--junit",
    junit,
    "--json-report",
    json,
    "--no-color",
  ]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /\d+ passed, 0 failed, \d+ skipped/);
  assert.match(run.stdout, /operations\s+\d+\/25/);
  const xml = readFileSync(junit, "utf8");
  assert.match(xml, /<testsuites name="conformance" tests="\d+" failures="0"/);
  assert.match(xml, /<testcase classname="responses" name="responses\/store-required"/);
  assert.match(xml, /<skipped message="the profile lacks settings.maxRequestBytes"\/>/);
  const report = JSON.parse(readFileSync(json, "utf8"));
  assert.equal(report.failed, 0);
  assert.ok(report.passed > 20);
  assert.ok(Array.isArray(report.results) && report.results.every((r: any) => typeof r.durationMs === "number"));
});

test("a failing run exits 8 and shows transcript, step, rule, expected, received and request id", async () => {
  const profile = JSON.parse(readFileSync(REFERENCE_PROFILE, "utf8"));
  profile.accounts.primary.key = "sk-not-a-key-000000000000";
  const file = path.join(dir, "broken.json");
  writeFileSync(file, JSON.stringify(profile));
  const junit = path.join(dir, "failed.xml");
  const run = await cli([
    "--base-url",
    ref.server.baseUrl,
    "--profile",
    file,
    "--transcript",
    "responses/store-required",
    "--junit",
    junit,
    "--no-color",
  ]);
  assert.equal(run.code, 8, run.stdout + run.stderr);
  assert.match(run.stdout, /responses\/store-required, step 1/);
  assert.match(run.stdout, /rule: +responses\.rule-1/);
  assert.match(run.stdout, /expected: 400/);
  assert.match(run.stdout, /received: 401/);
  assert.match(run.stdout, /request id: req_/);
  assert.match(readFileSync(junit, "utf8"), /<failure message=/);
});

test("Ctrl-C stops the run, removes what it made, and exits 130", async () => {
  const key = ref.profile.accounts.primary.key;
  const datasets = async () =>
    (
      (await (
        await fetch(`${ref.server.baseUrl}/accounts/${ref.profile.accounts.primary.id}/datasets?pageSize=100`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as { datasets?: unknown[] }
    ).datasets ?? [];
  const before = (await datasets()).length;
  const child = spawn(
    process.execPath,
    [
      CLI,
      "--base-url",
      ref.server.baseUrl,
      "--profile",
      REFERENCE_PROFILE,
      "--area",
      "datasets",
      "--area",
      "finetune",
      "--no-color",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  // Interrupt once the run has made something.
  const deadline = Date.now() + 60_000;
  while ((await datasets()).length <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.ok((await datasets()).length > before, "the run made no dataset within a minute");
  child.kill("SIGINT");
  const code = await closed;
  assert.equal(code, 130, stdout + stderr);
  assert.match(stderr, /Interrupted: cleaning up/);
  assert.match(stdout, /INTERRUPTED, cleanups ran/);
  assert.equal((await datasets()).length, before, "datasets the interrupted run made are still there");
});

test("bad arguments and profiles exit 2 with a message", async () => {
  const missing = await cli(["--profile", path.join(dir, "nope.json")]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read profile/);
  const unknown = await cli(["--base-url", ref.server.baseUrl, "--transcript", "inference/chat-completion"]);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stderr.trim().split("\n").length, 1, unknown.stderr);
  assert.match(unknown.stderr, /no transcript "inference\/chat-completion" \(did you mean inference\/chat-completions/);
  const area = await cli(["--base-url", ref.server.baseUrl, "--area", "chat"]);
  assert.equal(area.code, 2, "an area that matches nothing is an error, not an empty pass");
  const profile = JSON.parse(readFileSync(REFERENCE_PROFILE, "utf8"));
  profile.modles = profile.models;
  const typo = path.join(dir, "typo.json");
  writeFileSync(typo, JSON.stringify(profile));
  const unknownKey = await cli(["--profile", typo]);
  assert.equal(unknownKey.code, 2);
  assert.match(unknownKey.stderr, /unknown profile key modles \(did you mean models\?\)/);
});

test("coverage and help", async () => {
  const coverage = await cli(["coverage"]);
  assert.equal(coverage.code, 0, coverage.stdout);
  assert.match(coverage.stdout, /operations: 25\/25/);
  const help = await cli(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage/);
});
