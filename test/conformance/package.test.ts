/**
 * The kit as a package of its own: built with conformance/scripts/build.ts, installed by
 * name beside a consumer, it runs on plain Node without type stripping — the CLI (what
 * `npx @inference-toolkit/conformance` starts) and the library — against the reference server.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { installBuiltPackage } from "../support/package.ts";
import { startReferenceServer, type Reference } from "./reference.ts";

let scratch: string;
let pkg: string;
let ref: Reference;

beforeAll(async () => {
  ({ scratch, pkg } = installBuiltPackage("@inference-toolkit/conformance", "conformance/scripts/build.ts", [
    "ajv",
    "yaml",
    "eventsource-parser",
    "fast-check",
  ]));
  ref = await startReferenceServer();
});
afterAll(async () => {
  await ref?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function node(args: string[], cwd = scratch): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--no-experimental-strip-types", ...args], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.on("close", (code) => resolve({ code, out }));
  });
}

test("the package holds JavaScript, declarations, the contract and the transcripts", () => {
  for (const file of [
    "dist/cli.js",
    "dist/index.js",
    "dist/index.d.ts",
    "generated/openapi.3.2.yaml",
    "rules.yaml",
    "profiles/template.json",
    "transcripts/events/stream-text.yaml",
    "goldens/events/stream-text.yaml",
    "fixtures/sft-20.jsonl",
  ]) {
    assert.ok(existsSync(path.join(pkg, file)), file);
  }
  const manifest = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8"));
  assert.equal(manifest.bin.conformance, "./dist/cli.js");
  assert.match(readFileSync(path.join(pkg, "dist/cli.js"), "utf8"), /^#!\/usr\/bin\/env node/);
});

test("its CLI runs on plain Node against the reference server", async () => {
  const run = await node([
    path.join(pkg, "dist/cli.js"),
    "--base-url",
    ref.server.baseUrl,
    "--profile",
    path.join(pkg, "profiles/reference.json"),
    "--area",
    "events",
    "--no-color",
  ]);
  assert.equal(run.code, 0, run.out);
  assert.match(run.out, /\d+ passed, 0 failed/);
});

test("its library is imported by name", async () => {
  const consumer = path.join(scratch, "consumer.mjs");
  writeFileSync(
    consumer,
    `import { loadProfile, runConformance } from "@inference-toolkit/conformance";
const profile = loadProfile(process.argv[2], { baseUrl: process.argv[3] });
const report = await runConformance({ profile, transcripts: ["responses/basic", "auth/missing-key"] });
console.log(JSON.stringify({ passed: report.passed, failed: report.failed }));
`,
  );
  const run = await node([consumer, path.join(pkg, "profiles/reference.json"), ref.server.baseUrl]);
  assert.equal(run.code, 0, run.out);
  assert.deepEqual(JSON.parse(run.out.trim().split("\n").at(-1) as string), { passed: 2, failed: 0 });
});
