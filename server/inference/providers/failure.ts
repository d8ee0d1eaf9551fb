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

  /** `cause`: what the upstream did (the connection's error, its status and error code), for the server's log only. */
  constructor(
    code: SentErrorCode,
    message: string,
    options: { retryable: boolean; retryAfter?: number; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProviderFailure";
    this.code = code;
    this.retryable = options.retryable;
    this.retryAfter = options.retryAfter;
  }
}
