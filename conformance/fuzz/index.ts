/**
 * `conformance fuzz` as a library: the contract and the service's rules as an oracle against
 * any base URL and profile. Two engines, both seeded and bounded by count and time:
 * - stateless (stateless.ts): hostile and boundary requests for every operation the profile
 *   implements;
 * - stateful (stateful/run.ts): lifecycles checked against a model of the document's state
 *   machines, idempotency, paging and isolation rules (when the profile implements datasets,
 *   fine-tuning and inference).
 * The result is the kit's RunReport (report.ts prints it, as text, JUnit or JSON) and the
 * findings, each with its rule, its request and a curl reproduction.
 */
import { randomBytes } from "node:crypto";
import { capabilityOperations, implementedOperations } from "../capabilities.ts";
import { Contract } from "../contract.ts";
import { CoverageTracker, loadRules } from "../coverage.ts";
import type { Profile } from "../profile.ts";
import type { RunReport } from "../index.ts";
import { toRunReport, type EngineTally, type Finding } from "./findings.ts";
import { RULE } from "./check.ts";
import { fuzzStateless, type StatelessReport } from "./stateless.ts";
import { fuzzStateful, type StatefulReport } from "./stateful/run.ts";
import type { ReferenceHooks } from "./stateful/model.ts";

export type FuzzEngine = "stateless" | "stateful";

export interface FuzzOptions {
  profile: Profile;
  /** Default: a new one each run (printed, so a run can be repeated). */
  seed?: number;
  engines?: FuzzEngine[];
  /** Stateless requests (default 500). */
  requests?: number;
  /** Stateful command sequences (default 20), run `clients` at a time. */
  sequences?: number;
  clients?: number;
  /** Longest stateful sequence (default 12 commands). */
  maxCommands?: number;
  /** Stop drawing after this long, per engine. */
  timeLimitMs?: number;
  /** Record every stateless finding instead of stopping at the first and shrinking it. */
  keepGoing?: boolean;
  /** Only well-formed HTTP sent whole (a server behind a proxy that answers malformed requests itself). */
  wellFormed?: boolean;
  /** Megabyte values and 100k-level nesting too. */
  huge?: boolean;
  /** Plugins for what a black-box client cannot do (the reference server's tests supply them). */
  hooks?: ReferenceHooks;
  shrinkMs?: number;
  signal?: AbortSignal;
  onProgress?: (line: string) => void;
}

export interface FuzzResult {
  seed: number;
  report: RunReport;
  findings: Finding[];
  stateless?: StatelessReport;
  stateful?: StatefulReport;
  /** Why an engine did not run. */
  notes: string[];
}

/** The operations the stateful engine drives; it runs only when the profile implements them all. */
const STATEFUL_OPERATIONS = ["datasets", "fineTuning", "responses"];

export async function fuzz(options: FuzzOptions): Promise<FuzzResult> {
  const started = performance.now();
  const seed = options.seed ?? Date.now() % 2 ** 31;
  const engines = options.engines ?? ["stateless", "stateful"];
  const contract = Contract.load();
  // Unique per run, not per seed: a deleted dataset's id stays taken, so a repeated seed needs new ids.
  const runId = `fz${seed.toString(36)}-${randomBytes(2).toString("hex")}`;
  const budget = { ms: options.profile.timeouts.rateLimitWaitMs };
  const notes: string[] = [];
  const findings: Finding[] = [];
  const tallies: { name: FuzzEngine; tally: EngineTally }[] = [];
  const tracker = new CoverageTracker(contract, loadRules());
  let stateless: StatelessReport | undefined;
  let stateful: StatefulReport | undefined;
  if (engines.includes("stateless")) {
    stateless = await fuzzStateless({
      profile: options.profile,
      runs: options.requests ?? 500,
      seed,
      idPrefix: `${runId}`,
      retryAfterBudget: budget,
      ...(options.timeLimitMs ? { timeLimitMs: options.timeLimitMs } : {}),
      ...(options.keepGoing ? { keepGoing: true } : {}),
      ...(options.huge ? { huge: true } : {}),
      ...(options.wellFormed ? { wellFormed: true } : {}),
      ...(options.shrinkMs ? { shrinkMs: options.shrinkMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      progressEvery: 100,
      onProgress: (r) => options.onProgress?.(`stateless: ${r.tally.requests} requests`),
      onAnswer: (op, status, json) =>
        tracker.exchange(
          contract.operations.find((o) => o.id === op),
          status,
          json,
        ),
    });
    findings.push(...stateless.findings);
    tallies.push({ name: "stateless", tally: stateless.tally });
    if (stateless.error) notes.push(`the stateless engine stopped: ${stateless.error.split("\n")[0]}`);
  }
  if (engines.includes("stateful")) {
    const implemented = implementedOperations(contract, options.profile.implements);
    const capabilities = capabilityOperations(contract);
    const needed = STATEFUL_OPERATIONS.flatMap((c) => capabilities.get(c) ?? []);
    const missing = implemented ? needed.filter((op) => !implemented.has(op)) : [];
    if (missing.length > 0)
      notes.push(`the stateful engine did not run: the profile does not implement ${missing.join(", ")}`);
    else {
      const clients = options.clients ?? 2;
      stateful = await fuzzStateful({
        profile: options.profile,
        contract,
        ...(options.hooks ? { hooks: options.hooks } : {}),
        runs: Math.max(1, Math.ceil((options.sequences ?? 20) / clients)),
        seed,
        clients,
        maxCommands: options.maxCommands ?? 12,
        crashes: options.hooks?.crash !== undefined,
        idPrefix: `${runId}-sf`,
        ...(options.timeLimitMs ? { timeLimitMs: options.timeLimitMs } : {}),
        ...(options.shrinkMs ? { shrinkMs: options.shrinkMs } : {}),
        onProgress: (r) => options.onProgress?.(`stateful: ${r.sequences} sequences, ${r.tally.total} requests`),
      });
      if (stateful.finding) findings.push(stateful.finding);
      else if (stateful.failure) notes.push(`the stateful engine failed: ${stateful.failure.split("\n")[0]}`);
      const tried = new Map<string, number>();
      for (const [label, byStatus] of stateful.tally.calls)
        tried.set(
          label,
          [...byStatus.values()].reduce((a, b) => a + b, 0),
        );
      tallies.push({
        name: "stateful",
        tally: { tried, requests: stateful.tally.total, durationMs: stateful.durationMs },
      });
    }
  }
  const cited = new Set<string>([...Object.values(RULE), ...findings.map((f) => f.rule)]);
  tracker.rules(
    [...cited].filter((r) => !findings.some((f) => f.rule === r)),
    true,
  );
  tracker.rules(
    findings.map((f) => f.rule),
    false,
  );
  const report = toRunReport({
    runId,
    profile: options.profile.name,
    contractVersion: contract.version,
    findings,
    engines: tallies,
    coverage: tracker.summary(),
    durationMs: performance.now() - started,
    leftBehind: [...(stateless?.leftBehind ?? []), ...(stateful?.leftBehind ?? [])],
    modelsLeft: stateful?.modelsLeft ?? [],
    made: stateless?.made ?? { datasets: 0, jobs: 0 },
    rateLimitWaitedMs: options.profile.timeouts.rateLimitWaitMs - budget.ms,
    interrupted: options.signal?.aborted === true,
  });
  return {
    seed,
    report,
    findings,
    ...(stateless ? { stateless } : {}),
    ...(stateful ? { stateful } : {}),
    notes,
  };
}

export { findingText, type Finding } from "./findings.ts";
export { formatStateless, fuzzStateless, type StatelessOptions, type StatelessReport } from "./stateless.ts";
export { formatStateful, fuzzStateful, type StatefulOptions, type StatefulReport } from "./stateful/run.ts";
export type { ReferenceHooks } from "./stateful/model.ts";
