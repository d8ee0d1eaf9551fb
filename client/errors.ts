/**
 * The error class of the service's answers, for an error answer (any non-2xx) and for an
 * `error` event part-way through a stream (a call that got no answer throws one of
 * connection-errors.ts instead), and `ok()`, which turns openapi-fetch's
 * `{ data, error, response }` into the data or a thrown ApiError.
 */
import { ERROR_STATUS, ERROR_TYPE } from "../generated/contract-values.ts";
import type { ErrorCode, ErrorType } from "./types.ts";

/**
 * The status each code is sent with and the `error.type` of each status come from the
 * contract (generated/contract-values.ts, which `tsc` checks against the contract's types).
 * `REQUEST_CANCELLED` is only ever logged (499).
 */
const STATUS_OF_CODE: Readonly<Record<string, number>> = ERROR_STATUS;
const TYPE_OF_STATUS: Readonly<Record<number, ErrorType>> = ERROR_TYPE;

export interface ApiErrorInit {
  status: number;
  message: string;
  code?: string | null | undefined;
  type?: string | null | undefined;
  param?: string | null | undefined;
  requestId?: string | null | undefined;
  retryAfterMs?: number | null | undefined;
  midStream?: boolean;
  body?: unknown;
}

/**
 * An error answer of the service, or an `error` event part-way through a stream.
 * Branch on `code` (stable, append-only), never on `message`.
 */
export class ApiError extends Error {
  /**
   * The HTTP status of the error answer. For an `error` event in a stream (whose HTTP
   * status was 200) it is the status the contract pairs the event's code with.
   */
  readonly status: number;
  /** `error.code`: one of the contract's codes, or a newer one this client does not know yet; null when the body had none (e.g. a proxy's HTML page). */
  readonly code: ErrorCode | (string & {}) | null;
  /** `error.type`: the class of the error; one per status. */
  readonly type: ErrorType | (string & {}) | null;
  /** `error.param`: the request field the error is about, such as `input[2].content`, or null. */
  readonly param: string | null;
  /** The `x-request-id` header: quote it when reporting a problem. */
  readonly requestId: string | null;
  /** `Retry-After` in milliseconds, when the answer carried one (429 and 503 do). */
  readonly retryAfterMs: number | null;
  /** True for an `error` event after a stream had started; false for an error answer. */
  readonly midStream: boolean;
  /** The error body as received (parsed JSON, or text when it was not JSON). */
  readonly body: unknown;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.name = "ApiError";
    this.status = init.status;
    this.code = init.code ?? null;
    this.type = init.type ?? null;
    this.param = init.param ?? null;
    this.requestId = init.requestId ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
    this.midStream = init.midStream ?? false;
    this.body = init.body;
  }
}

interface ErrorFields {
  message?: unknown;
  code?: unknown;
  type?: unknown;
  param?: unknown;
}

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** Builds the ApiError of an error answer from its (already read) body and headers. */
export function errorFromResponse(response: Response, body: unknown): ApiError {
  // Every error of the contract is `{error: {message, type, code, param}}`; the messages
  // format adds a top-level `type: "error"`. Anything else (a proxy's page) keeps the text.
  const detail: ErrorFields =
    typeof body === "object" && body !== null && typeof (body as { error?: unknown }).error === "object"
      ? ((body as { error: ErrorFields }).error ?? {})
      : {};
  const message =
    text(detail.message) ?? (typeof body === "string" && body !== "" ? body.slice(0, 500) : `HTTP ${response.status}`);
  return new ApiError({
    status: response.status,
    message,
    code: text(detail.code),
    type: text(detail.type) ?? TYPE_OF_STATUS[response.status] ?? null,
    param: text(detail.param),
    requestId: response.headers.get("x-request-id"),
    retryAfterMs: parseRetryAfter(response.headers.get("retry-after")),
    body,
  });
}

/**
 * Builds the ApiError of an `error` event in a stream: `/responses` sends the fields at
 * the top level, chat and completions nest them under `error` (with `type`), messages
 * nests them too.
 */
export function errorFromEvent(data: unknown, requestId: string | null): ApiError {
  const outer = (typeof data === "object" && data !== null ? data : {}) as ErrorFields & { error?: unknown };
  const detail: ErrorFields =
    typeof outer.error === "object" && outer.error !== null ? (outer.error as ErrorFields) : outer;
  const code = text(detail.code);
  const status = (code !== null && Object.hasOwn(STATUS_OF_CODE, code) && STATUS_OF_CODE[code]) || 500;
  return new ApiError({
    status,
    message: text(detail.message) ?? "The stream failed part-way.",
    code,
    // The `/responses` error event has no `type`; it follows from the code's status.
    type: (detail.type !== "error" ? text(detail.type) : null) ?? TYPE_OF_STATUS[status] ?? null,
    param: text(detail.param),
    requestId,
    midStream: true,
    body: data,
  });
}

/**
 * `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** What openapi-fetch resolves with: the data on success, the parsed error body otherwise. */
interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The data half of an openapi-fetch result type. */
export type SuccessData<R> = R extends { data: infer D } ? D : never;

/**
 * The data of a successful call, or the call's ApiError thrown:
 * `const job = await ok(client.GET("/accounts/{account}/dpoJobs/{job}", { params }))`.
 * Keeps openapi-fetch's typing of `data`; only the error half becomes an exception.
 */
export async function ok<R extends FetchResult>(call: Promise<R> | R): Promise<SuccessData<R>> {
  const result = await call;
  if (!result.response.ok) throw errorFromResponse(result.response, result.error);
  return result.data as SuccessData<R>;
}
