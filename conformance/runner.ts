/**
 * The runner: replays transcripts as a client against a server. It selects the transcripts
 * (selection.ts), runs them a few at a time and the exclusive ones alone (execution.ts,
 * step-run.ts, step-modes.ts), removes what the run made (cleanup.ts) and returns the
 * report (results.ts), whose count of transcripts is the one announced at the start.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { removeCreated, type LeftBehind } from "./cleanup.ts";
import { Contract } from "./contract.ts";
import { CoverageTracker, loadRules } from "./coverage.ts";
import { runOne } from "./execution.ts";
import type { InFlight, RunReport, TranscriptResult } from "./results.ts";
import type { RunContext, RunOptions } from "./run-context.ts";
import { partitionByImplements, plannedSetups, select, SelectionError } from "./selection.ts";
import { kitRoot, loadTranscripts, transcriptsDir, type Transcript } from "./transcript.ts";

export type { RunOptions } from "./run-context.ts";
export { select, SelectionError, partitionByImplements, plannedSetups } from "./selection.ts";
export {
  groupByRule,
  OUTCOMES,
  type FailureExchange,
  type InFlight,
  type Outcome,
  type RunReport,
  type StepFailure,
  type TranscriptResult,
} from "./results.ts";

/** How long the cleanup may take after a time limit or Ctrl-C cut the run short. */
const CLEANUP_AFTER_STOP_MS = 120_000;

export async function runConformance(options: RunOptions): Promise<RunReport> {
  const started = performance.now();
  const contract = options.contract ?? Contract.load();
  const rules = options.rules ?? loadRules();
  const all = options.transcriptList ?? loadTranscripts(transcriptsDir());
  const stop = new AbortController();
  const ctx: RunContext = {
    options,
    contract,
    coverage: new CoverageTracker(contract, rules),
    runId: options.runId ?? `r${randomBytes(5).toString("hex")}`,
    fixturesDir: options.fixturesDir ?? path.join(kitRoot(), "fixtures"),
    goldensDir: options.goldensDir ?? path.join(kitRoot(), "goldens"),
    byId: new Map(all.map((t) => [t.id, t])),
    setups: new Map(),
    requests: 0,
    rateLimitWaitedMs: 0,
    rateLimitWaitingUntil: 0,
    deferredCleanups: [],
    created: [],
    ruleIds: new Set(rules.map((r) => r.id)),
    requestIds: new Map(),
    stopped: false,
    // A listener, not AbortSignal.any: see http.ts's send for what any does on Node 20.
    signal: stop.signal,
    timedOut: false,
    running: new Map(),
  };

  const selected = select(all, options);
  const { runnable, notImplemented } = partitionByImplements(selected, all, contract, options.profile);
  if (runnable.length === 0)
    throw new SelectionError(
      `nothing to run: the ${selected.length} selected transcripts all call operations outside the profile's implements (${options.profile.implements?.join(", ")})`,
    );
  const setups = plannedSetups(runnable, all);
  options.onStart?.({ total: selected.length + setups.length });
  const results: TranscriptResult[] = [];
  const finish = (r: TranscriptResult) => {
    results.push(r);
    if (r.status === "failed" && options.stopOnFirstFailure) ctx.stopped = true;
    options.onResult?.(r);
  };
  for (const { transcript: t, missing } of notImplemented)
    finish(notRun(t, "not-implemented", `calls ${missing.join(", ")}, which the profile does not implement`));

  const onCallerAbort = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onCallerAbort, { once: true });
  if (options.signal?.aborted) onCallerAbort();
  let inFlight: InFlight[] = [];
  const timer =
    options.timeLimitMs === undefined
      ? undefined
      : setTimeout(() => {
          inFlight = [...ctx.running.values()];
          ctx.timedOut = true;
          stop.abort();
        }, options.timeLimitMs);
  try {
    await runAll(runnable, ctx, finish);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onCallerAbort);
  }
  const left = await cleanUp(ctx);
  const interrupted = options.signal?.aborted === true;
  const ran = new Set(results.map((r) => r.transcript));
  const why = ctx.timedOut
    ? "not run: the run's time limit passed first"
    : interrupted
      ? "not run: the run was interrupted"
      : "not run: the run stopped at the first failure (--bail)";
  for (const t of runnable) if (!ran.has(t.id)) finish(notRun(t, "skipped", why));
  // Setups count as transcripts too: a failed setup is a failure of the implementation.
  for (const id of setups) {
    const outcome = await ctx.setups.get(id);
    const t = ctx.byId.get(id);
    if (outcome?.result) finish(outcome.result);
    else if (outcome?.status === "failed" || !t) {
      const reason = outcome?.reason ?? `setup ${id} does not exist`;
      finish({
        transcript: id,
        title: id,
        status: "failed",
        reason,
        durationMs: 0,
        rules: [],
        requests: 0,
        failures: [],
      });
    } else
      finish(notRun(t, "skipped", ctx.stopped || ctx.signal.aborted ? why : "not run: no transcript that uses it ran"));
  }
  results.sort((a, b) => a.transcript.localeCompare(b.transcript));
  return report(ctx, results, left, { started, interrupted, inFlight });
}

/** The shared transcripts a few at a time (the concurrency), then the exclusive ones alone. */
async function runAll(runnable: Transcript[], ctx: RunContext, finish: (r: TranscriptResult) => void): Promise<void> {
  const shared = runnable.filter((t) => !t.exclusive);
  const exclusive = runnable.filter((t) => t.exclusive);
  const going = () => !ctx.stopped && !ctx.signal.aborted;
  const concurrency = Math.max(1, ctx.options.concurrency ?? ctx.options.profile.concurrency);
  let next = 0;
  const worker = async () => {
    while (going() && next < shared.length) finish(await runOne(shared[next++] as Transcript, ctx));
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, shared.length) }, worker));
  for (const t of exclusive) {
    if (!going()) break;
    finish(await runOne(t, ctx));
  }
}

/**
 * The setups' own cleanups (last made first), then whatever the run made. After a time
 * limit or Ctrl-C the cleanup gets a time of its own, so that a run always ends.
 */
async function cleanUp(ctx: RunContext): Promise<LeftBehind> {
  const bounded = ctx.signal.aborted ? AbortSignal.timeout(CLEANUP_AFTER_STOP_MS) : undefined;
  if (bounded) ctx.cleanupSignal = bounded;
  const work = (async () => {
    for (const cleanup of ctx.deferredCleanups.reverse()) await cleanup();
    if (ctx.options.cleanUp === false) return { resources: ctx.created.map((c) => c.name), models: [] };
    return removeCreated(ctx);
  })();
  if (!bounded) return work;
  const cut = new Promise<LeftBehind>((resolve) =>
    bounded.addEventListener("abort", () =>
      resolve({ resources: ctx.created.map((c) => `${c.name} (the cleanup's time ran out)`), models: [] }),
    ),
  );
  return Promise.race([work, cut]);
}

function notRun(t: Transcript, status: TranscriptResult["status"], reason: string): TranscriptResult {
  return { transcript: t.id, title: t.title, status, reason, durationMs: 0, rules: t.rules, requests: 0, failures: [] };
}

function report(
  ctx: RunContext,
  results: TranscriptResult[],
  left: LeftBehind,
  run: { started: number; interrupted: boolean; inFlight: InFlight[] },
): RunReport {
  const count = (status: TranscriptResult["status"]) => results.filter((r) => r.status === status).length;
  return {
    passed: count("passed"),
    failed: count("failed"),
    skipped: count("skipped"),
    notImplemented: count("not-implemented"),
    interrupted: run.interrupted,
    timedOut: ctx.timedOut,
    inFlight: run.inFlight,
    leftBehind: left.resources,
    modelsLeft: left.models,
    made: {
      datasets: ctx.created.filter((c) => c.kind === "dataset").length,
      jobs: ctx.created.filter((c) => c.kind === "job").length,
    },
    failures: results.flatMap((r) => r.failures),
    results: results.map((r) => ({
      transcript: r.transcript,
      status: r.status,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      durationMs: r.durationMs,
    })),
    coverage: ctx.coverage.summary(),
    durationMs: performance.now() - run.started,
    details: results,
    profile: ctx.options.profile.name,
    contractVersion: ctx.contract.version,
    runId: ctx.runId,
    requests: ctx.requests,
    rateLimitWaitedMs: ctx.rateLimitWaitedMs,
  };
}
