/**
 * Hostile-input fuzzing of the reference server at full length: the same generators and
 * properties as test/fuzz/server.test.ts (see test/fuzz/run.ts), ten times the runs by
 * default, with megabyte values, 100k-level nesting and 1 MB headers as well.
 *
 *   node scripts/fuzz.ts [--runs N] [--seed S] [--path P] [--quick] [--keep-going]
 *
 * --path replays one failure: the same request (with the --seed it printed), against a fresh
 * server; a finding that needs the requests before it shows with the whole run instead.
 * --quick leaves the huge values out (what the CI test generates). --keep-going records every finding instead of stopping
 * at the first. Prints counts per operation; exits 1 on a finding.
 */
import { parseArgs } from "node:util";
import { formatReport, fuzzServer } from "../test/fuzz/run.ts";
import { CI_RUNS, CI_SEED } from "../test/fuzz/settings.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string" },
    seed: { type: "string" },
    path: { type: "string" },
    quick: { type: "boolean", default: false },
    "keep-going": { type: "boolean", default: false },
  },
});

// A replay (--path) is the one request at that path, unless --runs asks for more after it.
const runs = values.runs !== undefined ? Number(values.runs) : values.path !== undefined ? 1 : CI_RUNS * 10;
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
if (
  !Number.isInteger(runs) ||
  runs < 1 ||
  !Number.isInteger(seed) ||
  (values.path !== undefined && values.seed === undefined)
) {
  console.error("usage: node scripts/fuzz.ts [--runs N] [--seed S] [--path P] [--quick] [--keep-going]");
  process.exit(2);
}
console.log(
  `fuzzing with seed ${seed}, ${runs} runs${values.path ? `, replaying path ${values.path}` : ""}${values.quick ? "" : ", huge values included"} (CI uses seed ${CI_SEED})`,
);
const report = await fuzzServer({
  runs,
  seed,
  path: values.path,
  huge: !values.quick,
  keepGoing: values["keep-going"],
  progressEvery: 1000,
  onProgress: (done, r) => console.log(`  … ${done} requests, ${r.healthChecks} health checks`),
});
console.log(formatReport(report));
if (report.findings.length > 0) {
  console.log(`\n${report.findings.length} FINDINGS:`);
  for (const finding of report.findings) console.log(`\n${finding}`);
  process.exit(1);
}
if (report.failure) {
  const path = /path: "([^"]*)"/.exec(report.failure)?.[1] ?? "<path above>";
  console.log(
    `\nFINDING (replay: node scripts/fuzz.ts --seed ${seed}${values.quick ? " --quick" : ""} --path ${path}):\n${report.failure}`,
  );
  process.exit(1);
}
console.log("no finding");
