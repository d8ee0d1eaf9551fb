/**
 * Model-based fuzzing of whole lifecycles, bounded for CI: on SQLite (one server that also
 * trains) and on PostgreSQL (two servers and a worker), STATEFUL_CI.runs runs with a fixed seed,
 * each several command sequences at once on fresh accounts, kill -9 at a random step, and the
 * invariants after every run: the kit's stateful engine (conformance/fuzz/stateful/run.ts) with
 * the reference hooks (reference-hooks.ts). A finding prints its rule, the shrunk sequences, a
 * curl of the last request and the command that replays it; `npm run fuzz:stateful` runs ten
 * times as long.
 */
import assert from "node:assert/strict";
import { describe, test } from "vitest";
import { skipping } from "../../support/skip.ts";
import { POSTGRES_SKIP } from "../../../harness/postgres-cluster.ts";
import { findingText } from "../../../conformance/fuzz/findings.ts";
import { formatStateful } from "../../../conformance/fuzz/stateful/run.ts";
import { fuzzReferenceStateful, replayCommand } from "../../../harness/fuzz/stateful/reference.ts";
import { STATEFUL_CI } from "../../../harness/fuzz/stateful/settings.ts";

for (const store of ["sqlite", "postgres"] as const) {
  describe(`stateful fuzzing on ${store}`, { skip: skipping(store === "postgres" ? POSTGRES_SKIP : false) }, () => {
    test(
      `${STATEFUL_CI.runs} runs of ${STATEFUL_CI.clients} concurrent command sequences agree with the model, and money, states, idempotency and isolation hold after each (seed ${STATEFUL_CI.seed})`,
      { timeout: 300_000 },
      async () => {
        const report = await fuzzReferenceStateful(store, STATEFUL_CI);
        console.log(formatStateful(report));
        assert.equal(
          report.failure,
          undefined,
          `${report.finding ? findingText(report.finding) : report.failure}\n\nreplay: ${replayCommand(report)}`,
        );
        assert.equal(report.runs, STATEFUL_CI.runs);
        const created =
          (report.tally.calls.get("POST supervisedFineTuningJobs")?.get(201) ?? 0) +
          (report.tally.calls.get("POST dpoJobs")?.get(201) ?? 0);
        assert.ok(created > 0, "the run reached job creation");
      },
    );
  });
}
