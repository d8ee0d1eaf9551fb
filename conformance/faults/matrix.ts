/**
 * The fault matrix: the conformance kit run through a pass-through proxy (it must pass)
 * and through one proxy per fault of the catalogue (each must be caught: the run reports
 * at least one failure). Used by test/conformance/faults.slow.test.ts (fast: only the fault's
 * areas, stopping at the first failure) and by `node conformance/faults/run-all.ts` (every
 * transcript per fault, listing each transcript that caught it).
 *
 * Two correct servers take part, as in the kit's own tests: the reference server (every
 * area) and the reference server routed to a misbehaving upstream (the `upstream` area,
 * whose transcripts need the profile's fault recipes). A fault with `target: "upstream"`
 * runs against the second.
 */
import {
  Contract,
  loadRules,
  loadTranscripts,
  runConformance,
  type Profile,
  type RunOptions,
  type RunReport,
  type StepFailure,
} from "../index.ts";
import { FAULTS } from "./catalogue.ts";
import { startFaultProxy, type Fault } from "./proxy.ts";
import type { TourAccounts } from "./tour.ts";

/** A correct server and the profile that describes it (its keys, models, recipes). */
export interface MatrixTarget {
  origin: string;
  profile: Profile;
  /** Extra keys by account id (the seed's), for faults that act as another account. */
  keys?: Record<string, string>;
}

export interface FaultResult {
  id: string;
  rule: string;
  areas: string[];
  caught: boolean;
  /** How many messages the fault changed (0: the run never reached what it breaks). */
  hits: number;
  /** The kit could not run (for example a transcript the fault names no longer exists). */
  error?: string;
  passed: number;
  failed: number;
  /** The failures the fault caused: which transcripts (and checks) caught it. */
  caughtBy: StepFailure[];
  durationMs: number;
}

export interface MatrixResult {
  /** The clean runs (pass-through proxy), one per target. */
  clean: { target: string; report: RunReport }[];
  cleanFailed: number;
  faults: FaultResult[];
  caught: number;
  total: number;
  durationMs: number;
  /** A readable report: the score, and each fault not caught with its rule. */
  summary: string;
}

export interface MatrixOptions {
  main: MatrixTarget;
  /** The server routed to a misbehaving upstream; without it, faults targeting it are left out. */
  upstream?: MatrixTarget;
  faults?: Fault[];
  /** Stop each run at its first failure (fast); false runs every transcript. */
  stopOnFirstFailure: boolean;
  /**
   * Run each fault against only the transcripts it names (`transcripts`), or else its own
   * areas (default: true when stopping at the first failure). False: every transcript.
   */
  targeted?: boolean;
  /** Skip the clean runs (a caller that made them already). */
  skipClean?: boolean;
  /** Timeouts for faulted runs (a fault that freezes a job must not make the run wait minutes). */
  faultTimeouts?: Partial<Profile["timeouts"]>;
  onResult?(result: FaultResult): void;
}

/** The seed's accounts in the roles the tour uses. */
export function tourAccounts(keys: Record<string, string>): TourAccounts {
  const ref = (id: string) => ({ id, key: keys[id] as string });
  return {
    primary: ref("acme"),
    secondary: ref("globex"),
    suspended: ref("initech"),
    zeroBalance: ref("umbrella"),
    budgetExhausted: ref("vandelay"),
    rateLimited: ref("wonka"),
  };
}

/** The keys a proxy may act with, by account id: the profile's roles (primary first), then the extra ones. */
function keysOf(target: MatrixTarget): Record<string, string> {
  const keys: Record<string, string> = {};
  const accounts = target.profile.accounts as Record<string, { id: string; key: string } | undefined>;
  for (const role of ["primary", "secondary", ...Object.keys(accounts)]) {
    const account = accounts[role];
    if (account && keys[account.id] === undefined) keys[account.id] = account.key;
  }
  for (const [id, key] of Object.entries(target.keys ?? {})) if (keys[id] === undefined) keys[id] = key;
  return keys;
}

/** The target's profile pointed at a proxy. */
function throughProxy(
  target: MatrixTarget,
  proxy: { baseUrl: string; origin: string },
  timeouts?: Partial<Profile["timeouts"]>,
): Profile {
  const profile = structuredClone(target.profile);
  profile.baseUrl = proxy.baseUrl;
  profile.origin = proxy.origin;
  if (timeouts) profile.timeouts = { ...profile.timeouts, ...timeouts };
  return profile;
}

/** Cancels every job still queued or running in the profile's two main accounts, directly on the server. */
async function cancelLiveJobs(target: MatrixTarget): Promise<void> {
  for (const account of [target.profile.accounts.primary, target.profile.accounts.secondary]) {
    const headers = { authorization: `Bearer ${account.key}` };
    for (const collection of ["supervisedFineTuningJobs", "dpoJobs"]) {
      const base = `${target.origin}/v1/accounts/${account.id}/${collection}`;
      for (const state of ["QUEUED", "RUNNING", "CHECKPOINTING"]) {
        const list = await fetch(`${base}?filter=state:${state}&pageSize=200`, { headers });
        if (!list.ok) {
          await list.arrayBuffer();
          continue;
        }
        const jobs = ((await list.json()) as Record<string, { jobId: string }[]>)[collection] ?? [];
        for (const job of jobs)
          await fetch(`${base}/${job.jobId}:cancel`, { method: "POST", headers }).then((r) => r.arrayBuffer());
      }
    }
  }
}

/** Every area of a target's clean run: the main server runs everything, the upstream one its own area. */
const targetAreas = (name: "main" | "upstream") => (name === "upstream" ? ["upstream"] : undefined);

/** What every faulted run of one matrix shares. */
interface FaultRunSetup {
  target: MatrixTarget;
  shared: Pick<RunOptions, "contract" | "rules" | "transcriptList">;
  targeted: boolean;
  stopOnFirstFailure: boolean;
}

interface FaultRun {
  report: Pick<RunReport, "passed" | "failed" | "failures">;
  error?: string;
  hits: number;
}

/** One run of the kit through a proxy that breaks `fault`; live jobs it leaves are cancelled. */
async function runFaulted(
  run: FaultRunSetup,
  fault: Fault,
  timeouts: Partial<Profile["timeouts"]> | undefined,
): Promise<FaultRun> {
  const target = run.target;
  const proxy = await startFaultProxy({ upstream: target.origin, fault, keys: keysOf(target) });
  try {
    const selection = !run.targeted
      ? { areas: targetAreas(fault.target ?? "main") }
      : fault.transcripts?.length
        ? { transcripts: fault.transcripts }
        : { areas: fault.areas };
    const report = await runConformance({
      ...run.shared,
      profile: throughProxy(target, proxy, timeouts),
      ...selection,
      stopOnFirstFailure: run.stopOnFirstFailure,
    });
    return { report, hits: proxy.hits };
  } catch (thrown) {
    // Not a catch: the run did not happen (a transcript named by the fault is gone, a bad profile…).
    return {
      report: { passed: 0, failed: 0, failures: [] },
      error: (thrown as Error).stack ?? String(thrown),
      hits: proxy.hits,
    };
  } finally {
    await proxy.close();
    // Jobs a stopped run left behind would queue ahead of the next run's on the one trainer.
    await cancelLiveJobs(target);
  }
}

export async function runFaultMatrix(options: MatrixOptions): Promise<MatrixResult> {
  const started = Date.now();
  const targets = { main: options.main, upstream: options.upstream };
  const faults = (options.faults ?? FAULTS).filter((f) => f.target !== "upstream" || options.upstream);
  const targeted = options.targeted ?? options.stopOnFirstFailure;
  // Loaded once: the contract's schemas are compiled once, not once per run.
  const shared: Pick<RunOptions, "contract" | "rules" | "transcriptList"> = {
    contract: Contract.load(),
    rules: loadRules(),
    transcriptList: loadTranscripts(),
  };

  const clean: MatrixResult["clean"] = [];
  if (!options.skipClean) {
    for (const name of ["main", "upstream"] as const) {
      const target = targets[name];
      if (!target) continue;
      const proxy = await startFaultProxy({ upstream: target.origin });
      try {
        const areas = targetAreas(name);
        clean.push({
          target: name,
          report: await runConformance({
            ...shared,
            profile: throughProxy(target, proxy),
            ...(areas ? { areas } : {}),
          }),
        });
      } finally {
        await proxy.close();
      }
      await cancelLiveJobs(target);
    }
  }

  const results: FaultResult[] = [];
  for (const fault of faults) {
    const t0 = Date.now();
    const setup = {
      target: targets[fault.target ?? "main"] as MatrixTarget,
      shared,
      targeted,
      stopOnFirstFailure: options.stopOnFirstFailure,
    };
    let run = await runFaulted(setup, fault, options.faultTimeouts);
    // A run that failed while the fault changed nothing failed on its own, most often a job
    // slower than the fault run's short timeouts on a busy machine: that says nothing about
    // the fault. Once more with the profile's own timeouts.
    if (run.error === undefined && run.report.failed > 0 && run.hits === 0 && options.faultTimeouts)
      run = await runFaulted(setup, fault, undefined);
    const result: FaultResult = {
      id: fault.id,
      rule: fault.rule,
      areas: fault.areas,
      caught: run.error === undefined && run.report.failed > 0,
      ...(run.error !== undefined ? { error: run.error } : {}),
      hits: run.hits,
      passed: run.report.passed,
      failed: run.report.failed,
      caughtBy: run.report.failures,
      durationMs: Date.now() - t0,
    };
    results.push(result);
    options.onResult?.(result);
  }

  const caught = results.filter((r) => r.caught).length;
  const cleanFailed = clean.reduce((n, c) => n + c.report.failed, 0);
  const cleanText = clean
    .map((c) => `${c.target} ${c.report.passed} passed, ${c.report.failed} failed, ${c.report.skipped} skipped`)
    .join("; ");
  const lines = [
    `fault matrix: ${caught}/${results.length} faults caught${cleanText ? `; clean runs: ${cleanText}` : ""} (${Date.now() - started} ms)`,
  ];
  for (const r of results.filter((x) => !x.caught)) {
    const where = r.error
      ? `the kit could not run: ${r.error.split("\n")[0]}`
      : `fired ${r.hits}×; ran ${faults.find((f) => f.id === r.id)?.transcripts?.join(", ") ?? `areas ${r.areas.join(", ")}`}`;
    lines.push(`  NOT CAUGHT ${r.id}: ${r.rule} (${where})`);
  }
  for (const r of results.filter((x) => x.caught && x.hits === 0))
    lines.push(
      `  CAUGHT WITHOUT FIRING ${r.id}: the run failed although the fault changed nothing (a flaky transcript?)`,
    );
  return {
    clean,
    cleanFailed,
    faults: results,
    caught,
    total: results.length,
    durationMs: Date.now() - started,
    summary: lines.join("\n"),
  };
}
