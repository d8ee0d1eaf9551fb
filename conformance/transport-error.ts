/**
 * A request of the kit that got no (complete) answer: refused, reset, cut off or out of
 * time. The error of `fetch` (or of node:http) is its `cause`; the message says in words
 * what happened, so a report reads it without digging into runtime-specific causes.
 */
export class TransportError extends Error {
  override name = "TransportError";
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}

/**
 * A failure of fetch in words: fetch's own message is only "fetch failed", so the
 * socket's (its cause: "connect ECONNREFUSED 127.0.0.1:8080", "other side closed") is
 * added; the kit's timeout says which limit ran out.
 */
export function describeTransportFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError") return "no complete answer within the request timeout";
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}
