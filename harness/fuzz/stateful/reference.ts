/**
 * The kit's stateful engine (conformance/fuzz/stateful) pointed at the reference server as
 * real processes (deployment.ts: one server on SQLite, or two servers and a worker on
 * PostgreSQL), with the reference hooks (reference-hooks.ts): a fresh account per sequence,
 * operator changes, kill -9, and invariants over the store. Shared by the bounded test and
 * `npm run fuzz:stateful`.
 */
import { Contract, loadProfile } from "../../../conformance/index.ts";
import { fuzzStateful, type StatefulOptions, type StatefulReport } from "../../../conformance/fuzz/stateful/run.ts";
import { REFERENCE_PROFILE } from "../../conformance-reference.ts";
import { startDeployment, type StoreKind } from "./deployment.ts";
import { referenceHooks } from "./reference-hooks.ts";

export interface ReferenceStatefulReport extends StatefulReport {
  store: StoreKind;
  /** What the processes logged as failures during the whole session. */
  processLog: string[];
}

export async function fuzzReferenceStateful(
  store: StoreKind,
  options: Omit<StatefulOptions, "profile" | "hooks" | "baseUrls" | "contract">,
): Promise<ReferenceStatefulReport> {
  const deployment = await startDeployment(store);
  try {
    const profile = loadProfile(REFERENCE_PROFILE, { baseUrl: deployment.baseUrls()[0] as string });
    const report = await fuzzStateful({
      ...options,
      profile,
      contract: Contract.load(),
      hooks: referenceHooks(deployment, { crashes: options.crashes ?? true }),
      baseUrls: () => deployment.baseUrls(),
    });
    return { ...report, store, processLog: deployment.failureLog().slice(0, 30) };
  } finally {
    await deployment.close();
  }
}

/** The replay command of a report's failure. */
export function replayCommand(report: ReferenceStatefulReport): string {
  const sequences =
    report.replayPaths && report.replayPaths.length > 0 ? ` --replay-paths '${report.replayPaths.join(",")}'` : "";
  return `npm run fuzz:stateful -- --store ${report.store} --seed ${report.seed} --clients ${report.clients} --max-commands ${report.maxCommands} --path ${report.path ?? "<path>"}${sequences}`;
}
