/**
 * Hostile-input fuzzing of the reference server at full length: the kit's stateless engine
 * (`conformance fuzz --engine stateless`) pointed at a reference server this script starts
 * (harness/fuzz/reference.ts), ten times the CI test's runs by default, with megabyte values,
 * 100k-level nesting and 1 MB headers as well.
 *
 *   npm run fuzz -- [--runs N] [--seed S] [--path P] [--quick] [--keep-going] [--minutes T]
 *
 * --path replays one failure (with the --seed it printed) against a fresh server. --quick
 * leaves the huge values out (what the CI test generates). --keep-going records every
 * finding instead of stopping at the first and shrinking it. Exits 1 on a finding.
 */
import { parseArgs } from "node:util";
import { findingText } from "../conformance/fuzz/findings.ts";
import { formatStateless, fuzzStateless } from "../conformance/fuzz/stateless.ts";
import { startFuzzReference } from "../harness/fuzz/reference.ts";
import { CI_RUNS, CI_SEED } from "../harness/fuzz/settings.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string" },
    seed: { type: "string" },
    path: { type: "string" },
    quick: { type: "boolean", default: false },
    "keep-going": { type: "boolean", default: false },
    minutes: { type: "string" },
  },
});

const runs = values.runs !== undefined ? Number(values.runs) : values.path !== undefined ? 1 : CI_RUNS * 10;
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
if (
  !Number.isInteger(runs) ||
  runs < 1 ||
  !Number.isInteger(seed) ||
  (values.path !== undefined && values.seed === undefined)
) {
  console.error("usage: npm run fuzz -- [--runs N] [--seed S] [--path P] [--quick] [--keep-going] [--minutes T]");
  process.exit(2);
}
console.log(
  `fuzzing with seed ${seed}, ${runs} runs${values.path ? `, replaying path ${values.path}` : ""}${values.quick ? "" : ", huge values included"} (CI uses seed ${CI_SEED})`,
);
const ref = await startFuzzReference();
try {
  const report = await fuzzStateless({
    profile: ref.profile,
    runs,
    seed,
    path: values.path,
    huge: !values.quick,
    keepGoing: values["keep-going"],
    serverLog: ref.serverLog,
    ...(values.minutes ? { timeLimitMs: Number(values.minutes) * 60_000 } : {}),
    progressEvery: 1000,
    onProgress: (r) => console.log(`  … ${r.tally.requests} requests, ${r.healthChecks} health checks`),
  });
  console.log(formatStateless(report));
  for (const finding of report.findings)
    console.log(`\nFINDING${values.quick ? " (replay with --quick)" : ""}:\n${findingText(finding)}`);
  process.exitCode = report.findings.length > 0 || report.error ? 1 : 0;
} finally {
  await ref.close();
}
