/**
 * Runs that share an account: two kits at once against one reference server, with the same
 * profile (the same accounts), both pass. Every transcript looks only at what it made
 * itself, so the other run's datasets and jobs, appearing in the same lists at the same
 * time, change no verdict; and neither run's cleanup removes what the other is using.
 */
import assert from "node:assert/strict";
import { afterAll, test } from "vitest";
import { runConformance, textReport } from "../../conformance/index.ts";
import { startReferenceServer } from "../../harness/conformance-reference.ts";

const ref = await startReferenceServer();
afterAll(() => ref.close());

test("two runs on one account at once both pass", { timeout: 300_000 }, async () => {
  const [first, second] = await Promise.all([
    runConformance({ profile: ref.profile }),
    runConformance({ profile: ref.profile }),
  ]);
  for (const report of [first, second]) {
    assert.equal(report.failed, 0, textReport(report));
    assert.ok(report.passed >= 90, `${report.passed} passed`);
    assert.deepEqual(report.leftBehind, []);
  }
  assert.notEqual(first?.runId, second?.runId);
});
