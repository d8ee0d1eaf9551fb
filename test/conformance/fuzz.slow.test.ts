/**
 * `conformance fuzz` (conformance/fuzz/) as an implementer runs it: only the profile, no
 * reference hook, against a reference server. A bounded run finds nothing and leaves nothing
 * of its own behind; through the fault proxy, with no golden transcript, it catches a
 * representative handful of faults (scripts/fuzz-faults.ts gives the figure for the whole
 * catalogue).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, test } from "vitest";
import { FAULTS } from "../../conformance/faults/catalogue.ts";
import { findingText } from "../../conformance/fuzz/findings.ts";
import { fuzz } from "../../conformance/fuzz/index.ts";
import { loadRules, textReport } from "../../conformance/index.ts";
import { fuzzThroughProxy, ofTheServer } from "../../conformance/fuzz/fault-matrix.ts";
import { REFERENCE_PROFILE, startReferenceServer, type Reference } from "../../harness/conformance-reference.ts";

const CLI = fileURLToPath(new URL("../../conformance/cli.ts", import.meta.url));

let ref: Reference;
beforeAll(async () => {
  ref = await startReferenceServer();
});
afterAll(() => ref.close());

async function datasetIds(): Promise<string[]> {
  const { id, key } = ref.profile.accounts.primary;
  const response = await fetch(`${ref.server.baseUrl}/accounts/${id}/datasets?pageSize=100`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return ((await response.json()) as { datasets: { datasetId: string; state: string }[] }).datasets
    .filter((d) => d.state !== "DATASET_STATE_DELETED")
    .map((d) => d.datasetId)
    .sort();
}

test(
  "a bounded run of both engines against the reference server finds nothing and leaves nothing behind",
  { timeout: 240_000 },
  async () => {
    const before = await datasetIds();
    const result = await fuzz({ profile: ref.profile, seed: 46, requests: 300, sequences: 6 });
    assert.deepEqual(result.findings.map(findingText), []);
    assert.deepEqual(result.notes, []);
    assert.equal(result.report.failed, 0, textReport(result.report));
    assert.equal(result.stateless?.tally.requests, 300);
    assert.ok((result.stateful?.sequences ?? 0) >= 6, `${result.stateful?.sequences} sequences`);
    assert.deepEqual(result.report.leftBehind, []);
    assert.deepEqual(await datasetIds(), before);
  },
);

/** Faults of different kinds, each of which the fuzzer alone must catch. */
const HANDFUL = [
  "headers.request-id-missing-on-errors",
  "errors.no-envelope",
  "headers.provider-class-missing",
  "datasets.int64-as-number",
  "jobs.undeclared-field",
];

describe("through the fault proxy, with no golden transcript", () => {
  test("a pass-through proxy (no fault): nothing found", { timeout: 240_000 }, async () => {
    const { result } = await fuzzThroughProxy({ origin: ref.server.origin, profile: ref.profile }, undefined, {
      seed: 46,
      requests: 200,
      sequences: 2,
    });
    assert.deepEqual(ofTheServer(result.findings).map(findingText), []);
  });

  for (const id of HANDFUL) {
    test(`fuzz catches ${id}`, { timeout: 240_000 }, async () => {
      const fault = FAULTS.find((f) => f.id === id);
      assert.ok(fault, `no fault ${id} in the catalogue`);
      const { result, hits } = await fuzzThroughProxy({ origin: ref.server.origin, profile: ref.profile }, fault, {
        seed: 46,
        requests: 200,
        sequences: 2,
      });
      assert.ok(hits > 0, "the fault never fired");
      const findings = ofTheServer(result.findings);
      assert.ok(findings.length > 0, `not caught (fired ${hits}×)`);
      // Each finding names a rule of rules.yaml (or the operation's schema) and carries a curl to reproduce it.
      const rules = new Set(loadRules().map((r) => r.id));
      for (const finding of findings) {
        assert.ok(rules.has(finding.rule) || finding.rule.startsWith("contract:"), finding.rule);
        assert.match(finding.curl, /curl -sS -i/);
      }
    });
  }
});

test(
  "the command: conformance fuzz --base-url --profile, exit 0, and the JSON report of a run",
  { timeout: 240_000 },
  async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "conformance-fuzz-"));
    try {
      const profile = path.join(dir, "profile.json");
      writeFileSync(
        profile,
        JSON.stringify({ ...JSON.parse(readFileSync(REFERENCE_PROFILE, "utf8")), baseUrl: ref.server.baseUrl }),
      );
      const json = path.join(dir, "fuzz.json");
      const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            CLI,
            "fuzz",
            "--profile",
            profile,
            "--engine",
            "stateless",
            "--requests",
            "60",
            "--seed",
            "5",
            "--json-report",
            json,
          ],
          { stdio: ["ignore", "pipe", "pipe"] },
        );
        let out = "";
        child.stdout.on("data", (c: Buffer) => (out += c.toString()));
        child.on("exit", (exitCode) => resolve({ code: exitCode, stdout: out }));
      });
      assert.equal(code, 0, stdout);
      assert.match(stdout, /conformance fuzz, seed 5/);
      const report = JSON.parse(readFileSync(json, "utf8")) as { failed: number; requests: number };
      assert.equal(report.failed, 0);
      assert.equal(report.requests, 60);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
