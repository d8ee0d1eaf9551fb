/**
 * Running one transcript: its `requires` checked against the profile, the setups it uses
 * (each run once per run, shared), its variables, its steps and always its cleanup steps;
 * its outcome and the rules it proved counted.
 */
import { createHash } from "node:crypto";
import { loadGolden } from "./golden.ts";
import { profileHas } from "./profile.ts";
import type { StepFailure, TranscriptResult } from "./results.ts";
import { Interrupted, StepFailed, type RunContext, type SetupOutcome } from "./run-context.ts";
import { TranscriptRun } from "./step-run.ts";
import { interpolate, type Scope } from "./template.ts";
import type { Transcript } from "./transcript.ts";

export function runSetup(id: string, ctx: RunContext): Promise<SetupOutcome & { result?: TranscriptResult }> {
  let pending = ctx.setups.get(id);
  if (!pending) {
    const t = ctx.byId.get(id);
    pending = t
      ? (async () => {
          const exports: Record<string, unknown> = {};
          const result = await runOne(t, ctx, exports);
          return {
            status: result.status,
            ...(result.reason !== undefined ? { reason: result.reason } : {}),
            exports,
            result,
          };
        })()
      : Promise.resolve({ status: "failed" as const, reason: `setup ${id} does not exist`, exports: {} });
    ctx.setups.set(id, pending);
  }
  return pending;
}

export async function runOne(
  t: Transcript,
  ctx: RunContext,
  exportsOut?: Record<string, unknown>,
): Promise<TranscriptResult> {
  const started = performance.now();
  const base: Omit<TranscriptResult, "status" | "durationMs"> = {
    transcript: t.id,
    title: t.title,
    rules: t.rules,
    requests: 0,
    failures: [],
  };
  const done = (status: TranscriptResult["status"], reason?: string): TranscriptResult => ({
    ...base,
    status,
    ...(reason !== undefined ? { reason } : {}),
    durationMs: Math.round(performance.now() - started),
  });

  const missing = t.requires.filter((r) => !profileHas(ctx.options.profile, r));
  if (missing.length) return done("skipped", `the profile lacks ${missing.join(", ")}`);

  const setups: Record<string, Record<string, unknown>> = {};
  for (const [alias, id] of Object.entries(t.uses)) {
    const outcome = await runSetup(id, ctx);
    if (outcome.status === "skipped" || outcome.status === "not-implemented")
      return done("skipped", `setup ${id} was skipped: ${outcome.reason ?? ""}`);
    // The setup's failure is reported once, as the setup's; what needed it cannot run.
    if (outcome.status === "failed") return done("skipped", `setup ${id} failed (see its failures)`);
    setups[alias] = outcome.exports;
  }

  const target = ctx.options.targetFor?.(t) ?? {
    baseUrl: ctx.options.profile.baseUrl,
    origin: ctx.options.profile.origin,
  };
  const vars: Record<string, unknown> = {};
  const tag = `${ctx.runId}-${createHash("sha256").update(t.id).digest("hex").slice(0, 6)}`;
  const scope = makeScope(ctx, t, vars, setups, tag, target);
  const golden = loadGolden(ctx.goldensDir, t.id);
  const runner = new TranscriptRun(t, ctx, scope, vars, target, golden, base);

  let status: TranscriptResult["status"] = "passed";
  let reason: string | undefined;
  try {
    for (const [name, value] of Object.entries(t.vars)) vars[name] = interpolate(value, scope);
    for (const step of t.steps) await runner.step(step);
    if (exportsOut) for (const [name, value] of Object.entries(t.exports)) exportsOut[name] = interpolate(value, scope);
  } catch (error) {
    const where = ctx.running.get(t.id);
    if (error instanceof Interrupted && ctx.timedOut) {
      status = "failed";
      base.failures.push(timeLimitFailure(ctx, t, where?.step ?? runner.currentLabel, where?.request));
      reason = base.failures[0]?.message;
    } else if (error instanceof Interrupted) {
      status = "skipped";
      reason = `interrupted at step ${runner.currentLabel}`;
    } else {
      status = "failed";
      if (error instanceof StepFailed) base.failures.push(...error.failures);
      else
        base.failures.push({
          transcript: t.id,
          step: runner.currentLabel,
          rule: "kit.error",
          message:
            error instanceof Error
              ? `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`
              : String(error),
        });
      reason = base.failures[0]?.message;
    }
  } finally {
    ctx.running.delete(t.id);
    // A setup's cleanup waits for the end of the run: the transcripts using what it made come first.
    const cleanup = () => runner.cleanup(t.cleanup);
    if (t.setup) ctx.deferredCleanups.push(cleanup);
    else await cleanup();
  }
  const result = done(status, reason);
  ctx.coverage.rules([...t.rules, ...t.steps.flatMap((s) => s.rules), ...runner.rulesChecked], status === "passed");
  return result;
}

function makeScope(
  ctx: RunContext,
  t: Transcript,
  vars: Record<string, unknown>,
  setups: Record<string, unknown>,
  tag: string,
  target: { baseUrl: string; origin: string },
): Scope {
  const p = ctx.options.profile;
  const builtins: Record<string, unknown> = {
    run: ctx.runId,
    tag,
    transcript: t.id,
    baseUrl: target.baseUrl,
    origin: target.origin,
    account: p.accounts.primary.id,
    otherAccount: p.accounts.secondary.id,
    accounts: p.accounts,
    models: p.models,
    settings: p.settings,
    capabilities: p.capabilities,
    timeouts: p.timeouts,
    faults: p.faults,
  };
  return (name) => {
    if (name in vars) return vars[name];
    if (name in setups) return setups[name];
    return builtins[name];
  };
}

/** The failure of a transcript that was still running when the run's time limit passed: where it was. */
function timeLimitFailure(ctx: RunContext, t: Transcript, step: string, request: string | undefined): StepFailure {
  const ms = ctx.options.timeLimitMs ?? 0;
  const limit = ms >= 60_000 ? `${Math.round(ms / 6_000) / 10} min` : `${Math.round(ms / 100) / 10} s`;
  return {
    transcript: t.id,
    step,
    rule: "kit.time-limit",
    message: `the run's time limit (${limit}) passed at step ${step}${request ? `, waiting for the answer to ${request}` : ", between requests"}`,
  };
}
