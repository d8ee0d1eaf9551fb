/**
 * What a request carries through every layer without being passed by hand: its id and the
 * caller's W3C trace context. Set by the request-id middleware (http/request-id.ts) in an
 * AsyncLocalStorage, so that every log line written while the request runs carries its id
 * (log.ts) and every upstream call made for it forwards both (inference/providers/).
 *
 * At the server's root beside log.ts, not in ops/ or http/: the log, the HTTP edge and the
 * providers all read it, and it imports nothing of the server, so no folder import cycle
 * runs through it (test/server/layers.test.ts).
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface RequestContext {
  requestId: string;
  /** The caller's `traceparent`, when it was well-formed. */
  traceparent?: string;
  /** The caller's `tracestate`, forwarded with a traceparent only (the W3C rule). */
  tracestate?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (the rest of the middleware chain) inside the request's context. */
export function runInRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The context of the request this code runs for; undefined outside requests (a job runner). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}

/** The headers an upstream call forwards: `x-request-id`, and the trace context when the caller sent one. */
export function forwardedHeaders(): Record<string, string> {
  const context = storage.getStore();
  if (context === undefined) return {};
  const headers: Record<string, string> = { "x-request-id": context.requestId };
  if (context.traceparent !== undefined) {
    headers.traceparent = context.traceparent;
    if (context.tracestate !== undefined) headers.tracestate = context.tracestate;
  }
  return headers;
}
