/**
 * The per-fault figure of `conformance fuzz`: for every fault of the catalogue
 * (conformance/faults/), whether the fuzzer alone (no golden transcript, only the profile,
 * bounded) catches it through the fault proxy (conformance/fuzz/fault-matrix.ts).
 *
 *   node scripts/fuzz-faults.ts [fault-id or prefix …] [--requests N] [--sequences N] [--seed S] [--json file]
 *
 * Starts the two reference servers of the kit's tests (harness/conformance-reference.ts). Prints
 * each fault as it is done and the figure; exit 1 when the clean runs found something.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { FAULTS } from "../conformance/faults/catalogue.ts";
import { findingText } from "../conformance/fuzz/findings.ts";
import { fuzzFaultMatrix } from "../conformance/fuzz/fault-matrix.ts";
import { startReferenceServer, startUpstreamFaultServer } from "../harness/conformance-reference.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: "string", default: "150" },
    sequences: { type: "string", default: "4" },
    seed: { type: "string", default: "46" },
    json: { type: "string" },
  },
});
const faults = positionals.length === 0 ? FAULTS : FAULTS.filter((f) => positionals.some((id) => f.id.startsWith(id)));
const budget = { seed: Number(values.seed), requests: Number(values.requests), sequences: Number(values.sequences) };
const main = await startReferenceServer();
const upstream = await startUpstreamFaultServer();
try {
  console.log(
    `fuzz alone against ${faults.length} faults: ${budget.requests} stateless requests and ${budget.sequences} stateful sequences each, seed ${budget.seed}`,
  );
  const started = Date.now();
  const { clean, results } = await fuzzFaultMatrix({
    main: { origin: main.server.origin, profile: main.profile },
    // On that server tiny-chat is routed to a provider that crashes (the internalError recipe): the fuzzer's chat
    // model is the one whose primary refuses and whose standby serves, so the clean run there finds nothing.
    upstream: {
      origin: upstream.server.origin,
      profile: {
        ...upstream.profile,
        models: { ...upstream.profile.models, chat: "tiny-chat-community", agreementRequired: "tiny-chat-community" },
      },
    },
    faults,
    budget,
    onResult: (r) =>
      console.log(
        `${(r.caught ? "caught" : r.hits === 0 ? "not fired" : "NOT CAUGHT").padEnd(10)} ${r.id} (${r.rule}) — fired ${r.hits}×${r.caughtBy.length ? `, found as ${r.caughtBy.join(", ")}` : ""}${r.error ? `, error: ${r.error.split("\n")[0]}` : ""}, ${Math.round(r.durationMs / 1000)} s`,
      ),
  });
  const caught = results.filter((r) => r.caught).length;
  const fired = results.filter((r) => r.hits > 0).length;
  const cleanFindings = clean.flatMap((c) => c.findings);
  console.log(
    `\nfuzz alone: ${caught}/${results.length} faults caught (${fired} fired at all during the fuzz runs); clean runs: ${cleanFindings.length} finding(s); ${Math.round((Date.now() - started) / 60_000)} min`,
  );
  for (const f of cleanFindings) console.log(findingText(f));
  if (values.json)
    writeFileSync(values.json, JSON.stringify({ budget, caught, total: results.length, fired, results }, null, 2));
  process.exitCode = cleanFindings.length > 0 ? 1 : 0;
} finally {
  await main.close();
  await upstream.close();
}
