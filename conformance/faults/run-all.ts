/**
 * The slow fault matrix: `node conformance/faults/run-all.ts [fault-id or prefix …] [--stop] [--fast] [--json file]`.
 *
 * Starts the two reference servers of the kit's tests, runs the whole conformance kit
 * through a pass-through proxy (it must pass), then through one proxy per fault of the
 * catalogue, every transcript each time, and prints for each fault the transcripts and
 * checks that caught it (what a fault's `transcripts` should name). `--stop` stops each
 * run at its first failure; `--fast` is what the fault test does (only the fault's
 * `transcripts`, stopping at the first failure). Exit code 1 when a fault was not caught
 * or a clean run failed.
 */
import { writeFileSync } from "node:fs";
import { FAULTS } from "./catalogue.ts";
import { runFaultMatrix, type FaultResult } from "./matrix.ts";
import { startReferenceServer, startUpstreamFaultServer } from "../../harness/conformance-reference.ts";

const args = process.argv.slice(2);
const fast = args.includes("--fast");
const stop = fast || args.includes("--stop");
const jsonAt = args.indexOf("--json");
const jsonFile = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
// Without --json, jsonAt + 1 is 0: the first argument is an id, not the file of --json.
const ids = args.filter((a, i) => !a.startsWith("--") && (jsonAt < 0 || i !== jsonAt + 1));
const unknown = ids.filter((id) => !FAULTS.some((f) => f.id.startsWith(id)));
if (unknown.length > 0) {
  console.error(`unknown fault ids: ${unknown.join(", ")}\nknown: ${FAULTS.map((f) => f.id).join(" ")}`);
  process.exit(2);
}
const faults = ids.length === 0 ? FAULTS : FAULTS.filter((f) => ids.some((id) => f.id.startsWith(id)));

function describe(result: FaultResult): string {
  const mark = result.caught ? "caught" : "NOT CAUGHT";
  const head = `${mark.padEnd(10)} ${result.id}  (${result.rule}) — fired ${result.hits}×, ${result.failed} failed / ${result.passed} passed, ${result.durationMs} ms`;
  const by = new Map<string, Set<string>>();
  for (const failure of result.caughtBy) {
    const checks = by.get(failure.transcript) ?? new Set<string>();
    checks.add(`step ${failure.step}${failure.rule ? ` [${failure.rule}]` : ""}`);
    by.set(failure.transcript, checks);
  }
  const lines = [...by].map(
    ([transcript, checks]) =>
      `             ${transcript}: ${[...checks].slice(0, 4).join(", ")}${checks.size > 4 ? ", …" : ""}`,
  );
  return [head, ...lines].join("\n");
}

const main = await startReferenceServer();
const upstream = await startUpstreamFaultServer();
try {
  console.log(
    `fault matrix: ${faults.length} faults${fast ? " (fast: each fault's own transcripts, stopping at the first failure)" : stop ? " (each run stops at its first failure)" : " (every transcript per fault)"}`,
  );
  const result = await runFaultMatrix({
    main: { origin: main.server.origin, profile: main.profile, keys: main.server.keys },
    upstream: { origin: upstream.server.origin, profile: upstream.profile, keys: upstream.server.keys },
    faults,
    stopOnFirstFailure: stop,
    targeted: fast,
    faultTimeouts: fast ? { pollMs: 8_000, jobMs: 10_000 } : { pollMs: 15_000, jobMs: 30_000 },
    onResult: (r) => console.log(describe(r)),
  });
  console.log("");
  for (const { target, report } of result.clean) {
    console.log(`clean run (${target}): ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`);
    for (const f of report.failures)
      console.log(`  ${f.transcript} step ${f.step}${f.rule ? ` [${f.rule}]` : ""}: ${f.message}`);
  }
  console.log(result.summary);
  if (jsonFile) {
    // The failures without their (possibly large) expected and received values.
    const slim = {
      ...result,
      clean: result.clean.map((c) => ({
        target: c.target,
        report: {
          ...c.report,
          failures: c.report.failures.map(({ expected: _e, received: _r, ...f }) => f),
          details: undefined,
        },
      })),
      faults: result.faults.map((f) => ({
        ...f,
        caughtBy: f.caughtBy.map(({ expected: _e, received: _r, ...x }) => x),
      })),
    };
    writeFileSync(jsonFile, JSON.stringify(slim, null, 2));
  }
  process.exitCode = result.cleanFailed === 0 && result.caught === result.total ? 0 : 1;
} finally {
  await main.close();
  await upstream.close();
}
