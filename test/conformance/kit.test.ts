/**
 * The conformance kit against the reference server: the whole suite passes (in under a
 * minute), again on the same long-lived server (transcripts make their own ids, so they
 * can run any number of times), and the upstream area passes against a reference server
 * whose models are routed to a misbehaving upstream.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runConformance, textReport, type RunReport } from "../../conformance/index.ts";
import { startReferenceServer, startUpstreamFaultServer, type Reference } from "./reference.ts";

describe("against the reference server", () => {
  let ref: Reference;
  let report: RunReport;
  let seconds: number;
  before(async () => {
    ref = await startReferenceServer();
    const started = performance.now();
    report = await runConformance({ profile: ref.profile });
    seconds = (performance.now() - started) / 1000;
  });
  after(() => ref?.close());

  test("the whole suite passes", (t) => {
    t.diagnostic(`full run: ${seconds.toFixed(1)} s, ${report.passed} passed, ${report.skipped} skipped, ${report.requests} requests`);
    assert.equal(report.failed, 0, textReport(report));
    assert.ok(report.passed >= 90, `${report.passed} transcripts passed`);
  });

  test("in under a minute", () => assert.ok(seconds < 60, `${seconds} s`));

  test("only transcripts that need an upstream fault recipe are skipped, and they are reported as skipped", () => {
    const skipped = report.details.filter((r) => r.status === "skipped");
    assert.ok(skipped.length > 0);
    for (const r of skipped) assert.match(r.reason ?? "", /profile lacks faults\./, r.transcript);
    assert.equal(report.skipped, skipped.length);
  });

  test("every operation of the contract is touched, and every rule but the upstream ones", () => {
    assert.deepEqual(report.coverage.operations.missing, []);
    assert.deepEqual(report.coverage.rules.missing.sort(), ["errors.rule-4", "inference.upstream"]);
  });

  test("the suite passes again on the same server", async () => {
    const again = await runConformance({ profile: ref.profile, areas: ["datasets", "finetune", "limits", "tenant", "auth"] });
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
      for (const code of ["UPSTREAM_RATE_LIMITED", "UPSTREAM_UNAVAILABLE", "UPSTREAM_TIMEOUT", "UPSTREAM_CONTENT_REJECTED", "PARTIAL_RESPONSE_TIMEOUT", "CONTENT_BLOCKED_OUTPUT", "REQUEST_DEADLINE_EXCEEDED", "INTERNAL"]) {
        assert.ok(!report.coverage.errorCodes.missing.includes(code), code);
      }
    } finally {
      await ref.close();
    }
  });
});
