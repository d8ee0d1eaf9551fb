/**
 * The errors of a call that got no answer, with openai-node's names and meaning:
 * `APIConnectionError` (DNS, refused, reset, a body cut off), `APIConnectionTimeoutError`
 * (the runtime gave up waiting), `APIUserAbortError` (the caller's signal). The raw error
 * of `fetch` is each one's `cause`; the client never throws it bare, so a caller branches
 * with `instanceof` instead of reading runtime-specific codes out of `.cause` chains.
 */

/**
 * Codes (Node's and undici's; browsers do not tell) meaning no connection was ever made,
 * so the server cannot have seen the request.
 */
const NEVER_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

/** Codes of a runtime's own time limits (undici's connect, headers and body timeouts; a TCP timeout). */
const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
]);

/** The request got no (complete) answer: the connection could not be made or was lost. */
export class APIConnectionError extends Error {
  /**
   * The runtime's code of the failure found in the `cause` chain (`ECONNREFUSED`,
   * `ENOTFOUND`, `ECONNRESET`, `UND_ERR_SOCKET`, …), or null where it does not tell (browsers).
   */
  readonly systemCode: string | null;

  constructor(options: { message?: string; cause: unknown; systemCode?: string | null }) {
    const systemCode = options.systemCode ?? systemCodeOf(options.cause);
    super(options.message ?? `Connection error${systemCode ? ` (${systemCode})` : ""}.`, { cause: options.cause });
    this.name = "APIConnectionError";
    this.systemCode = systemCode;
  }

  /** Whether the failure proves the request never reached the server (refused, host not found), so a repeat cannot apply it twice. */
  get neverSent(): boolean {
    return this.systemCode !== null && NEVER_SENT_CODES.has(this.systemCode);
  }
}

/** The runtime gave up waiting for the connection or the answer (undici's connect, headers or body timeout). */
export class APIConnectionTimeoutError extends APIConnectionError {
  constructor(options: { cause: unknown; systemCode?: string | null }) {
    super({ message: "Request timed out.", ...options });
    this.name = "APIConnectionTimeoutError";
  }
}

/** The caller's `AbortSignal` (or `stream.abort()`) stopped the call; `cause` is the signal's reason. */
export class APIUserAbortError extends Error {
  constructor(options: { cause?: unknown } = {}) {
    super("Request was aborted.", { cause: options.cause });
    this.name = "APIUserAbortError";
  }
}

/**
 * The typed error of a failed `fetch` or body read: an abort when the caller's signal
 * fired, a timeout or connection error for fetch's own failures (a TypeError, or any
 * error carrying a runtime code), and anything else (a bug, a parse error) unchanged.
 */
export function typedFetchError(error: unknown, signal?: AbortSignal | null): unknown {
  if (error instanceof APIConnectionError || error instanceof APIUserAbortError) return error;
  if (signal?.aborted) return new APIUserAbortError({ cause: signal.reason });
  const systemCode = systemCodeOf(error);
  if (systemCode !== null && TIMEOUT_CODES.has(systemCode))
    return new APIConnectionTimeoutError({ cause: error, systemCode });
  if (error instanceof TypeError || systemCode !== null) return new APIConnectionError({ cause: error, systemCode });
  return error;
}

/** The first string `code` along the `cause` chain (undici nests the socket's error under fetch's TypeError). */
function systemCodeOf(error: unknown): string | null {
  for (
    let e: unknown = error, depth = 0;
    typeof e === "object" && e !== null && depth < 4;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return null;
}
