/**
 * `createClient`: openapi-fetch over the generated `paths`, so every operation of the
 * contract is typed end to end (a contract change that breaks a caller breaks `tsc`),
 * with the key sent on every call, job creates made idempotent, and retries.
 *
 * The calls keep openapi-fetch's shape, `{ data, error, response }`; `ok()` (errors.ts)
 * turns that into the data or a thrown ApiError. A call that gets no answer throws an
 * APIConnectionError or APIUserAbortError (connection-errors.ts), never fetch's own error.
 */
import createFetchClient from "openapi-fetch";
import type { Client } from "openapi-fetch";
import { typedFetchError, type APIConnectionError } from "./connection-errors.ts";
import { hasHeader, randomIdempotencyKey, withIdempotencyKey } from "./idempotency.ts";
import { retryDelay, sleep, type Outcome, type RetryOptions } from "./retry.ts";
import type { paths } from "./types.ts";

export interface ClientOptions {
  /** The service's base address, ending in `/v1` (e.g. `http://127.0.0.1:8080/v1`). */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer …` (the messages endpoint takes that too). */
  apiKey?: string;
  /** Headers sent on every call. */
  headers?: Record<string, string>;
  /** Retry settings, or `false` for none. See retry.ts for what is retried. */
  retry?: RetryOptions | false;
  /** Makes the `Idempotency-Key` of job creates that do not set one. Default: a random UUID. */
  idempotencyKey?: () => string;
  /** The fetch to use (default `globalThis.fetch`): for tests, proxies, instrumentation. */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * The typed client. Its methods are openapi-fetch's (`GET`, `POST`, `DELETE`, …, `use`
 * for middleware); JSON is the media type of every typed answer, while streamed answers
 * are read with `parseAs: "stream"` by the stream helpers.
 */
export type ApiClient = Client<paths, "application/json">;

/** The init openapi-fetch takes, as far as this layer looks into it. */
interface Init {
  params?: { header?: Record<string, unknown> };
  headers?: unknown;
  body?: unknown;
  signal?: AbortSignal | null;
}

type Method = "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace";

export function createClient(options: ClientOptions): ApiClient {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers.Authorization = `Bearer ${options.apiKey}`;
  const base = createFetchClient<paths, "application/json">({
    baseUrl: options.baseUrl,
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const request = base.request as unknown as (
    method: Method,
    url: string,
    init?: Init,
  ) => Promise<{ response: Response }>;
  const retry = options.retry === false ? { maxRetries: 0 } : (options.retry ?? {});
  const newKey = options.idempotencyKey ?? randomIdempotencyKey;
  const keyByDefault = hasHeader({ headers }, "Idempotency-Key");

  async function send(method: Method, url: string, given: Init = {}) {
    // A key set on the client as a default header is the caller's choice; do not override it.
    const init = keyByDefault ? given : withIdempotencyKey(method, url, given, newKey);
    const idempotencyKey = keyByDefault || hasHeader(init, "Idempotency-Key");
    // A body given as a stream is read by the first attempt and cannot be sent again.
    const replayable = !(typeof ReadableStream !== "undefined" && init.body instanceof ReadableStream);
    for (let retries = 0; ; retries++) {
      let outcome: Outcome;
      let result: { response: Response } | undefined;
      try {
        result = await request(method, url, init);
        outcome = { response: result.response };
      } catch (error) {
        outcome = { error: typedFetchError(error, init.signal) };
      }
      const next = replayable ? retryDelay(outcome, { method, idempotencyKey, retries }, retry) : null;
      if (next === null) {
        if ("error" in outcome) throw outcome.error;
        return result;
      }
      retry.onRetry?.({
        attempt: retries + 1,
        delayMs: next.delayMs,
        fromRetryAfter: next.fromRetryAfter,
        method: method.toUpperCase(),
        url,
        // retryDelay returns a wait for a connection error only.
        cause: "response" in outcome ? outcome.response.status : (outcome.error as APIConnectionError),
      });
      await sleep(next.delayMs, init.signal);
    }
  }

  const method = (name: Method) => (url: string, init?: Init) => send(name, url, init);
  const client = {
    request: (name: string, url: string, init?: Init) => send(name.toLowerCase() as Method, url, init),
    GET: method("get"),
    PUT: method("put"),
    POST: method("post"),
    DELETE: method("delete"),
    OPTIONS: method("options"),
    HEAD: method("head"),
    PATCH: method("patch"),
    TRACE: method("trace"),
    use: base.use,
    eject: base.eject,
  };
  // The wrappers keep openapi-fetch's signatures; only the generic types are lost inside.
  return client as unknown as ApiClient;
}
