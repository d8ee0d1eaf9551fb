/**
 * Model-based fuzzing of whole lifecycles: the kit's stateful engine (conformance/fuzz/stateful)
 * pointed at the reference server's processes with the reference hooks
 * (harness/fuzz/stateful/reference.ts), at full length:
 *
 *   npm run fuzz:stateful -- [--store sqlite|postgres|both] [--runs N] [--seed S] [--path P --replay-paths R1,R2] [--clients C] [--max-commands M] [--minutes T] [--no-crashes]
 *
 * Each run is C command sequences run at once on fresh accounts, then the invariants; --runs
 * counts runs, so N runs are N × C command sequences. The defaults are npm test's pass
 * (settings.ts: 2 clients, up to 8 commands each) with ten times its runs. --path with
 * --replay-paths replays one failure (with the --seed, --clients and --max-commands it printed;
 * the clients' timing is not replayed, so a race may need a few tries). --minutes stops starting runs after T minutes per store
 * (the summary says how many ran). Prints a summary per store; exits 1 on a finding.
 */
import { parseArgs } from "node:util";
import { findingText } from "../conformance/fuzz/findings.ts";
import { formatStateful } from "../conformance/fuzz/stateful/run.ts";
import { fuzzReferenceStateful, replayCommand } from "../harness/fuzz/stateful/reference.ts";
import { STATEFUL_CI } from "../harness/fuzz/stateful/settings.ts";

const { values } = parseArgs({
  options: {
    store: { type: "string", default: "both" },
    runs: { type: "string" },
    seed: { type: "string" },
    path: { type: "string" },
    "replay-paths": { type: "string" },
    clients: { type: "string" },
    "max-commands": { type: "string" },
    minutes: { type: "string" },
    "no-crashes": { type: "boolean", default: false },
  },
});

const stores = values.store === "both" ? (["sqlite", "postgres"] as const) : ([values.store] as const);
const runs = values.runs !== undefined ? Number(values.runs) : STATEFUL_CI.runs * 10;
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
const clients = values.clients === undefined ? STATEFUL_CI.clients : Number(values.clients);
const maxCommands = values["max-commands"] === undefined ? STATEFUL_CI.maxCommands : Number(values["max-commands"]);
if (
  !stores.every((s) => s === "sqlite" || s === "postgres") ||
  ![runs, seed, clients, maxCommands].every((n) => Number.isInteger(n) && n >= 0) ||
  runs < 1 ||
  clients < 1
) {
  console.error(
    "usage: npm run fuzz:stateful -- [--store sqlite|postgres|both] [--runs N] [--seed S] [--path P --replay-paths R1,R2] [--clients C] [--max-commands M] [--minutes T] [--no-crashes]",
  );
  process.exit(2);
}
let failed = false;
const started = performance.now();
for (const store of stores as readonly ("sqlite" | "postgres")[]) {
  console.log(
    `stateful fuzzing on ${store}: seed ${seed}, ${runs} runs of ${clients} sequences of up to ${maxCommands} commands${values["no-crashes"] ? "" : ", kill -9 at random steps"} (CI uses seed ${STATEFUL_CI.seed})`,
  );
  const report = await fuzzReferenceStateful(store, {
    runs,
    seed,
    path: values.path,
    replayPaths: values["replay-paths"]?.split(","),
    clients,
    maxCommands,
    crashes: !values["no-crashes"],
    ...(values.minutes === undefined ? {} : { timeLimitMs: Number(values.minutes) * 60_000 }),
    onProgress: (r: { runs: number; sequences: number; commands: number; tally: { total: number } }) => {
      if (r.runs % 10 === 0)
        console.log(
          `  … ${r.runs} runs, ${r.sequences} sequences, ${r.commands} commands, ${r.tally.total} requests, ${Math.round((performance.now() - started) / 1000)} s`,
        );
    },
  });
  console.log(formatStateful(report));
  if (report.processLog.length) console.log(`  processes logged:\n    ${report.processLog.join("\n    ")}`);
  if (report.failure) {
    failed = true;
    console.log(
      `\nFINDING (replay: ${replayCommand(report)}):\n${report.finding ? findingText(report.finding) : report.failure}`,
    );
  } else console.log("no finding");
}
process.exit(failed ? 1 : 0);
