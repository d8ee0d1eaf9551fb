/**
 * The error envelope of the interface document, `{error: {message, type, code, param}}`,
 * and the one exception type every layer throws to produce it.
 */
import type { components } from "../../generated/api.d.ts";

export type ErrorCode = components["schemas"]["ErrorCode"];
export type ErrorType = components["schemas"]["ErrorType"];

/** The decided pairing of HTTP status and error.type (docs/contract-decisions.md, Errors). */
const TYPE_BY_STATUS: Record<number, ErrorType> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  405: "invalid_request_error",
  409: "invalid_request_error",
  413: "invalid_request_error",
  429: "rate_limit_error",
  500: "server_error",
  503: "service_unavailable",
  504: "server_error",
};

/** The status each code is sent with; a code has exactly one. */
const STATUS_BY_CODE: Record<Exclude<ErrorCode, "REQUEST_CANCELLED">, number> = {
  INVALID_REQUEST: 400,
  CONTENT_BLOCKED_INPUT: 400,
  CONTENT_BLOCKED_OUTPUT: 400,
  CONTEXT_LENGTH_EXCEEDED: 400,
  MEDIA_FETCH_FAILED: 400,
  MEDIA_UNSUPPORTED: 400,
  MODEL_CAPABILITY_UNSUPPORTED: 400,
  UPSTREAM_CONTENT_REJECTED: 400,
  INVALID_API_KEY: 401,
  INSUFFICIENT_BALANCE: 402,
  PAYMENT_REQUIRED: 402,
  AGREEMENT_REQUIRED: 403,
  MODEL_NOT_ALLOWED: 403,
  OPERATION_NOT_ALLOWED: 403,
  TENANT_SUSPENDED: 403,
  MODEL_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  ALREADY_EXISTS: 409,
  IDEMPOTENCY_CONFLICT: 409,
  JOB_STATE_INVALID: 409,
  MEDIA_TOO_LARGE: 413,
  TENANT_BUDGET_EXCEEDED: 429,
  TENANT_RATE_LIMITED: 429,
  UPSTREAM_RATE_LIMITED: 429,
  INTERNAL: 500,
  DEPLOYMENT_SCALING_UP: 503,
  STORAGE_UNAVAILABLE: 503,
  UPSTREAM_UNAVAILABLE: 503,
  PARTIAL_RESPONSE_TIMEOUT: 504,
  REQUEST_DEADLINE_EXCEEDED: 504,
  UPSTREAM_TIMEOUT: 504,
};

export type SentErrorCode = keyof typeof STATUS_BY_CODE;

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

  constructor(code: SentErrorCode, message: string, options: { param?: string | null; retryAfter?: number } = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = STATUS_BY_CODE[code];
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

export function errorTypeFor(status: number): ErrorType {
  return TYPE_BY_STATUS[status] ?? "server_error";
}

export function statusFor(code: SentErrorCode): number {
  return STATUS_BY_CODE[code];
}
