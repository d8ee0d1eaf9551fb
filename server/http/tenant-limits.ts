/**
 * The per-account limits checked before an operation runs: requests per minute on every
 * call; on paid calls also the balance and the spend budget. Requests are counted in
 * process and written to the store in batches (store/cache/rate-counter.ts); the balance
 * and the spend come from the server's caches (store/cache/cached-store.ts). README
 * "Caches and consistency" says how far each may lag across processes.
 */
import type { RateCounter } from "../store/cache/rate-counter.ts";
import type { Account, Store } from "../store/store.ts";
import { formatMoney } from "../store/money.ts";
import { ApiError } from "../api-error.ts";

/** The requests-per-minute window. */
export const RATE_WINDOW_MS = 60_000;
const DAY_MS = 86_400_000;

/** 429 TENANT_RATE_LIMITED past the account's requests per minute; Retry-After until its window ends. */
export async function enforceRateLimit(rates: RateCounter, account: Account, now: Date): Promise<void> {
  if (account.requestsPerMinute === null) return;
  const admission = await rates.admit(account.id, account.requestsPerMinute, now.getTime());
  if (admission.allowed) return;
  const retryAfter = secondsUntil(admission.windowEndMs, now);
  throw new ApiError("TENANT_RATE_LIMITED", `Rate limit of ${account.requestsPerMinute} requests per minute reached.`, {
    retryAfter,
  });
}

/** 402 INSUFFICIENT_BALANCE when the prepaid balance is used up (at or below zero). */
export function enforceBalance(account: Account): void {
  if (account.balanceMicros <= 0) {
    throw new ApiError(
      "INSUFFICIENT_BALANCE",
      `The account's balance is ${formatMoney(account.balanceMicros)}; top it up to continue.`,
    );
  }
}

/** 429 TENANT_BUDGET_EXCEEDED once the period's spend reaches the budget; Retry-After until the period ends. */
export async function enforceBudget(store: Store, account: Account, now: Date): Promise<void> {
  if (account.budgetMicros === null) return;
  const period = budgetPeriod(now);
  const spent = await store.usage.spentSince(account.id, period.start);
  if (spent < account.budgetMicros) return;
  const message = `The daily budget of ${formatMoney(account.budgetMicros)} is spent; it renews at ${period.end.toISOString()}.`;
  throw new ApiError("TENANT_BUDGET_EXCEEDED", message, { retryAfter: secondsUntil(period.end.getTime(), now) });
}

/** The budget period containing `now`: the UTC day. */
export function budgetPeriod(now: Date): { start: Date; end: Date } {
  const start = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return { start: new Date(start), end: new Date(start + DAY_MS) };
}

/** Whole seconds until `atMs`, rounded up so that a retry then is never early; at least 1. */
function secondsUntil(atMs: number, now: Date): number {
  return Math.max(1, Math.ceil((atMs - now.getTime()) / 1000));
}
