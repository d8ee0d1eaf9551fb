/**
 * Hostile-input fuzzing of the whole reference server, bounded for CI: a fixed seed and
 * CI_RUNS requests drawn over every operation of the generated OpenAPI (test/fuzz/run.ts
 * says what is generated and checked). It stops at the first finding and prints the seed,
 * the replay path and the request; `node scripts/fuzz.ts --seed S --quick --path P` replays
 * it, and `node scripts/fuzz.ts` runs ten times as long with huge values too.
 */
import assert from "node:assert/strict";
import { test } from "vitest";
import { formatReport, fuzzServer } from "./run.ts";
import { CI_RUNS, CI_SEED } from "./settings.ts";

test(
  `hostile input: ${CI_RUNS} fuzzed requests over every operation never get a 5xx, a hang or a bare error (seed ${CI_SEED})`,
  { timeout: 300_000 },
  async () => {
    const report = await fuzzServer({ runs: CI_RUNS, seed: CI_SEED });
    console.log(formatReport(report));
    const path = report.failure === undefined ? "" : (/path: "([^"]*)"/.exec(report.failure)?.[1] ?? "");
    assert.equal(
      report.failure,
      undefined,
      `${report.failure}\n\nreplay: node scripts/fuzz.ts --seed ${CI_SEED} --quick --path ${path}`,
    );
    assert.equal(report.requests, CI_RUNS);
    for (const [operationId, count] of report.perOperation)
      assert.ok(count.tried > 0, `${operationId} was never tried`);
  },
);
