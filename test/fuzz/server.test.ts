/**
 * Hostile-input fuzzing of the reference server, bounded for CI: the kit's stateless engine
 * (`conformance fuzz`, conformance/fuzz/stateless.ts) pointed at a reference server this test
 * starts (reference.ts), a fixed seed and CI_RUNS requests over every operation. A finding
 * prints its rule, the request, a curl reproduction and the replay
 * (`npm run fuzz -- --seed S --quick --path P`); `npm run fuzz` runs ten times as long.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { findingText } from "../../conformance/fuzz/findings.ts";
import { formatStateless, fuzzStateless } from "../../conformance/fuzz/stateless.ts";
import { startFuzzReference, type FuzzReference } from "../../harness/fuzz/reference.ts";
import { CI_RUNS, CI_SEED } from "../../harness/fuzz/settings.ts";

let ref: FuzzReference;
beforeAll(async () => {
  ref = await startFuzzReference();
});
afterAll(() => ref.close());

test(
  `hostile input: ${CI_RUNS} fuzzed requests over every operation never get a 5xx, a hang or a bare error (seed ${CI_SEED})`,
  { timeout: 300_000 },
  async () => {
    const report = await fuzzStateless({
      profile: ref.profile,
      runs: CI_RUNS,
      seed: CI_SEED,
      serverLog: ref.serverLog,
    });
    console.log(formatStateless(report));
    assert.deepEqual(report.findings.map(findingText), []);
    assert.equal(report.error, undefined);
    assert.equal(report.tally.requests, CI_RUNS);
    for (const [operationId, tried] of report.tally.tried) assert.ok(tried > 0, `${operationId} was never tried`);
    assert.deepEqual(report.leftBehind, []);
  },
);
