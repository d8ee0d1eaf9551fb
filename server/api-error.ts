/**
 * The error envelope of the interface document, `{error: {message, type, code, param}}`,
 * and the one exception type every layer throws to produce it. It sits at the server's root,
 * not in server/http/, because inference, datasets and fine-tuning throw it too: every layer
 * may import it, and it imports only the generated contract.
 */
import type { components } from "../generated/api.d.ts";
import { ERROR_STATUS, ERROR_TYPE } from "../generated/contract-values.ts";

export type ErrorCode = components["schemas"]["ErrorCode"];
export type ErrorType = components["schemas"]["ErrorType"];

/** Every code but `REQUEST_CANCELLED`, which is only logged (499): nobody is listening. */
export type SentErrorCode = Exclude<ErrorCode, "REQUEST_CANCELLED">;

export interface ErrorBody {
  error: { message: string; type: ErrorType; code: ErrorCode; param: string | null };
}

/** Thrown anywhere; the HTTP layer turns it into the envelope with the code's status. */
export class ApiError extends Error {
  readonly code: SentErrorCode;
  readonly status: number;
  readonly param: string | null;
  /** Seconds, sent as Retry-After on 429 and 503. */
  readonly retryAfter: number | undefined;

  /** `cause`: the failure this answer stands for (a provider's, the store's), for the server's log; never sent. */
  constructor(
    code: SentErrorCode,
    message: string,
    options: { param?: string | null; retryAfter?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.param = options.param ?? null;
    // 429 and 503 always carry Retry-After (interface document, Errors rule 3).
    this.retryAfter = options.retryAfter ?? (this.status === 429 || this.status === 503 ? 1 : undefined);
  }

  get type(): ErrorType {
    return errorTypeFor(this.status);
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

/** The contract's type for an error status; `server_error` for a status it gives none. */
export function errorTypeFor(status: number): ErrorType {
  return (ERROR_TYPE as Record<number, ErrorType | undefined>)[status] ?? "server_error";
}

export function statusFor(code: SentErrorCode): number {
  return ERROR_STATUS[code];
}
