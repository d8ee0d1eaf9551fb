/**
 * The one way tests make a plain HTTP request and check an error answer: `request` sends
 * (an object body as JSON, a string or stream as it is) and reads the reply whole, parsing
 * JSON when it is JSON; `assertError` checks the error envelope of the interface document,
 * its status and type, and the x-request-id every response carries.
 */
import assert from "node:assert/strict";

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, when it is JSON. */
  body: any;
}

export interface RequestOptions {
  method?: string;
  /** An API key, sent as `authorization: Bearer …`. */
  key?: string;
  headers?: Record<string, string>;
  /** A plain object or array is sent as JSON (with its content type unless headers give one); anything else as is. */
  body?: unknown;
  signal?: AbortSignal;
}

export async function request(url: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  const init: RequestInit & { duplex?: "half" } = { method: options.method ?? "GET", headers, signal: options.signal };
  if (isJson(options.body)) {
    init.body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  } else if (options.body !== undefined) {
    init.body = options.body as BodyInit;
    // A streamed request body needs half duplex in fetch.
    if (options.body instanceof ReadableStream) init.duplex = "half";
  }
  return reply(await fetch(url, init));
}

/** Bodies that are JSON values rather than bytes: anything but a string, buffer, stream, blob or form. */
function isJson(body: unknown): boolean {
  if (body === undefined || typeof body === "string") return false;
  return !(
    body instanceof ReadableStream ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof FormData ||
    body instanceof URLSearchParams
  );
}

/** Reads a response whole; the body is parsed as JSON when it is JSON. */
export async function reply(response: Response): Promise<Reply> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** The server's own request id (a caller's well-formed one comes back as sent). */
export const REQUEST_ID = /^req_[0-9a-f]{24}$/;

export interface ExpectedError {
  status: number;
  code: string;
  type: string;
  /** Checked when given: the field the error is about, or null. */
  param?: string | null;
}

/** The two errors tests expect most often. */
export const NOT_FOUND: ExpectedError = { status: 404, code: "NOT_FOUND", type: "not_found_error" };
export const INVALID_REQUEST: ExpectedError = { status: 400, code: "INVALID_REQUEST", type: "invalid_request_error" };

/** Asserts the error envelope, its status, code and type, and the x-request-id. */
export function assertError(result: Reply, expected: ExpectedError): void {
  assert.equal(result.status, expected.status, result.text);
  assert.equal(result.body?.error?.code, expected.code, result.text);
  assert.equal(result.body.error.type, expected.type, result.text);
  assert.equal(typeof result.body.error.message, "string");
  if (expected.param !== undefined) assert.equal(result.body.error.param, expected.param);
  assert.match(result.headers.get("x-request-id") ?? "", REQUEST_ID);
}
