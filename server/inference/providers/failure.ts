/**
 * How a provider says it failed. `retryable` failures before the first output let the
 * router move to a standby provider; the code is what the caller sees if none can serve.
 */
import type { SentErrorCode } from "../../api-error.ts";

export class ProviderFailure extends Error {
  readonly code: SentErrorCode;
  readonly retryable: boolean;
  /** Seconds the upstream asked us to wait (its Retry-After), passed on with 429/503. */
  readonly retryAfter: number | undefined;

  constructor(code: SentErrorCode, message: string, options: { retryable: boolean; retryAfter?: number }) {
    super(message);
    this.name = "ProviderFailure";
    this.code = code;
    this.retryable = options.retryable;
    this.retryAfter = options.retryAfter;
  }
}
