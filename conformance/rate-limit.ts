/**
 * The service's rate limit during a run: a 429 `TENANT_RATE_LIMITED` that no step expects
 * is not a verdict. The kit honours its `Retry-After` and sends the request again, within a
 * budget per request and per run; the time waited is counted as wall time.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Exchange } from "./http.ts";
import type { RunContext } from "./run-context.ts";
import type { Step } from "./transcript.ts";

/** Retries of one request after a rate limit. */
const RETRIES = 3;

/**
 * How long to wait before sending a step's request again, "budget spent" when the kit
 * gives up, or undefined when the answer is no unexpected rate limit (at most 3 retries
 * per request and the profile's timeouts.rateLimitWaitMs per run).
 */
export function rateLimitWait(
  ctx: RunContext,
  step: Step,
  ex: Exchange,
  attempt: number,
): number | "budget spent" | undefined {
  if (ex.status !== 429) return undefined;
  const code = (ex.json as { error?: { code?: unknown } } | undefined)?.error?.code;
  if (code !== "TENANT_RATE_LIMITED") return undefined;
  if (/429|TENANT_RATE_LIMITED/.test(JSON.stringify([step.expect, step.poll]))) return undefined;
  const seconds = Number(ex.headers.get("retry-after"));
  if (!Number.isInteger(seconds) || seconds < 0) return undefined;
  const wait = Math.max(seconds * 1000, 100);
  if (attempt >= RETRIES || ctx.rateLimitWaitedMs + wait > ctx.options.profile.timeouts.rateLimitWaitMs)
    return "budget spent";
  return wait;
}

/** Adds a wait to the run's total as wall time: waits of concurrent transcripts that overlap count once. */
export function noteRateLimitWait(ctx: RunContext, wait: number): void {
  const now = performance.now();
  const end = now + wait;
  ctx.rateLimitWaitedMs += Math.max(0, end - Math.max(now, ctx.rateLimitWaitingUntil));
  ctx.rateLimitWaitingUntil = Math.max(ctx.rateLimitWaitingUntil, end);
}

/** A wait of the cleanup for a Retry-After, counted like the run's; false when the cleanup's own time is up. */
export async function waitRetryAfter(ctx: RunContext, ms: number): Promise<boolean> {
  noteRateLimitWait(ctx, ms);
  try {
    await sleep(ms, undefined, ctx.cleanupSignal ? { signal: ctx.cleanupSignal } : {});
    return true;
  } catch {
    return false;
  }
}
