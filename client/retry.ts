/**
 * When a failed call is sent again, and after how long.
 *
 * The rule that matters: a request that may already have been applied is never sent a
 * second time unless the service can recognise the repeat (an `Idempotency-Key`), because
 * a repeated POST /responses is billed twice and a repeated job create trains twice.
 * So:
 * - 429 and 503 answers are retried for every method: the service refused the request
 *   before applying it (rate limit, budget, a deployment scaling up, storage down).
 * - A connection failure is retried for idempotent methods and for requests that carry
 *   an `Idempotency-Key`; for other requests only when it proves the request never left
 *   (the connection was refused or the host not found), never after a reset mid-request.
 * - `Retry-After` is honoured first; without it, exponential backoff with jitter and a cap.
 */
import { APIConnectionError, APIUserAbortError } from "./connection-errors.ts";
import { parseRetryAfter } from "./errors.ts";

export interface RetryOptions {
  /** Retries after the first attempt. Default 2. 0 turns retrying off. */
  maxRetries?: number;
  /** Backoff before the first retry when the answer has no `Retry-After`. Default 500 ms. */
  initialDelayMs?: number;
  /** Cap of the client's own backoff. Default 8 s. */
  maxDelayMs?: number;
  /**
   * The longest `Retry-After` the client waits for. A longer one (a daily budget spent)
   * is not waited out: the 429 is returned at once, carrying `retryAfterMs`. Default 60 s.
   */
  maxRetryAfterMs?: number;
  /** Called before each retry, for logs and metrics. */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  /** How long the client waits before sending again. */
  delayMs: number;
  /** Whether `delayMs` came from the answer's `Retry-After`. */
  fromRetryAfter: boolean;
  method: string;
  url: string;
  /** The status that is retried, or the connection error. */
  cause: number | APIConnectionError;
}

export const RETRY_DEFAULTS: Required<Omit<RetryOptions, "onRetry">> = {
  maxRetries: 2,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/** Methods whose repetition has the same effect as one call (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

/** Statuses that say the request was refused, not applied. */
const RETRYABLE_STATUSES = new Set([429, 503]);

export interface Attempt {
  method: string;
  /** Whether the request carries an `Idempotency-Key`. */
  idempotencyKey: boolean;
  /** Retries already made (0 after the first attempt). */
  retries: number;
}

/** An answer, or the error of a call that got none (typed by connection-errors.ts). */
export type Outcome = { response: Response } | { error: unknown };

/** The wait before the next attempt, or null when the outcome is final. */
export function retryDelay(
  outcome: Outcome,
  attempt: Attempt,
  options: RetryOptions = {},
): { delayMs: number; fromRetryAfter: boolean } | null {
  const settings = { ...RETRY_DEFAULTS, ...options };
  if (attempt.retries >= settings.maxRetries) return null;
  if ("response" in outcome) {
    if (!RETRYABLE_STATUSES.has(outcome.response.status)) return null;
    const retryAfter = parseRetryAfter(outcome.response.headers.get("retry-after"));
    if (retryAfter !== null)
      return retryAfter <= settings.maxRetryAfterMs ? { delayMs: retryAfter, fromRetryAfter: true } : null;
    return { delayMs: backoff(attempt.retries, settings), fromRetryAfter: false };
  }
  // An abort is the caller's wish, and anything but a connection failure (a bug, a body
  // that is not JSON) would fail again the same way.
  if (!(outcome.error instanceof APIConnectionError)) return null;
  const replayable =
    IDEMPOTENT_METHODS.has(attempt.method.toUpperCase()) || attempt.idempotencyKey || outcome.error.neverSent;
  return replayable ? { delayMs: backoff(attempt.retries, settings), fromRetryAfter: false } : null;
}

/** Exponential backoff with "equal jitter": half fixed, half random, so clients spread out but never retry at once. */
export function backoff(retries: number, settings: { initialDelayMs: number; maxDelayMs: number }): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.initialDelayMs * 2 ** retries);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** Waits `ms`, or rejects with an APIUserAbortError (whose cause is the signal's reason) as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError({ cause: signal.reason }));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError({ cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
