/**
 * The conformance kit against the reference server, run the way an implementer runs it in
 * their own repository: the kit's vitest entry (conformance/vitest.ts), one test per
 * transcript grouped by area. Then what the whole run says (every operation and rule touched,
 * nothing skipped), the suite again on the same long-lived server
 * (transcripts make their own ids), and the upstream area against a reference server
 * whose models are routed to a misbehaving upstream.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import { runConformance, textReport, type RunReport } from "../../conformance/index.ts";
import { conformanceSuite } from "../../conformance/vitest.ts";
import { startReferenceServer, startUpstreamFaultServer } from "../../harness/conformance-reference.ts";

const ref = await startReferenceServer();
afterAll(() => ref.close());

// What the README's "Validate your implementation" shows, with a profile object for the test server.
const suite = conformanceSuite({ profile: ref.profile });

describe("the whole run against the reference server", () => {
  let report: RunReport;
  beforeAll(async () => {
    report = await suite.report();
  });

  test("passes, with every transcript run (the dev seed's fault models serve the upstream ones)", () => {
    console.log(
      `full run: ${(report.durationMs / 1000).toFixed(1)} s, ${report.passed} passed, ${report.skipped} skipped, ${report.requests} requests`,
    );
    assert.equal(report.failed, 0, textReport(report));
    assert.ok(report.passed >= 90, `${report.passed} transcripts passed`);
  });

  test("the reference profile skips nothing: every transcript, the upstream ones included, runs", () => {
    const skipped = report.details.filter((r) => r.status === "skipped").map((r) => `${r.transcript}: ${r.reason}`);
    assert.deepEqual(skipped, []);
    assert.ok(report.details.some((r) => r.transcript.startsWith("upstream/") && r.status === "passed"));
  });

  test("every operation and every rule of the contract is touched", () => {
    assert.deepEqual(report.coverage.operations.missing, []);
    assert.deepEqual(report.coverage.rules.missing, []);
  });

  test("the suite passes again on the same server", async () => {
    const again = await runConformance({
      profile: ref.profile,
      areas: ["datasets", "finetune", "limits", "tenant", "auth"],
    });
    assert.equal(again.failed, 0, textReport(again));
  });
});
describe("against a reference server with a misbehaving upstream", () => {
  test("the upstream area passes: every upstream error code, mid-stream error events, fallback", async () => {
    const ref = await startUpstreamFaultServer();
    try {
      const report = await runConformance({ profile: ref.profile, areas: ["upstream"] });
      assert.equal(report.failed, 0, textReport(report));
      assert.equal(report.skipped, 0);
      for (const code of [
        "UPSTREAM_RATE_LIMITED",
        "UPSTREAM_UNAVAILABLE",
        "UPSTREAM_TIMEOUT",
        "UPSTREAM_CONTENT_REJECTED",
        "PARTIAL_RESPONSE_TIMEOUT",
        "CONTENT_BLOCKED_OUTPUT",
        "REQUEST_DEADLINE_EXCEEDED",
        "INTERNAL",
      ]) {
        assert.ok(!report.coverage.errorCodes.missing.includes(code), code);
      }
    } finally {
      await ref.close();
    }
  });
});
