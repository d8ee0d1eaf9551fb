/**
 * A client that hangs up before its answer is complete is logged once as
 * `REQUEST_CANCELLED`, with status 499 (the log's convention for "the client closed the
 * request") and its request id (docs/contract-decisions.md, Errors); nothing is sent, since there
 * is no one to send it to. Whatever was running for it stops on its own signal (a
 * generation, an upload).
 *
 * A connection the server closes itself (a stream that failed after its headers were
 * sent, error-handler.ts) is not a cancellation: that layer marks it `closedByServer`.
 */
import type { NextFunction, Request, Response } from "express";
import { log } from "../log.ts";

export function logCancelled(_req: Request, res: Response, next: NextFunction): void {
  (res as Timed)[STARTED] = performance.now();
  // One listener function for every response, not a closure and a once-wrapper per request:
  // 1.07× on GET /v1/models in a pinned A/B (the close listener runs for every request).
  res.on("close", logIfCancelled);
  next();
}

/** When the response's request arrived (for the cancelled line's duration). */
const STARTED = Symbol("started");
type Timed = Response & { [STARTED]?: number };

function logIfCancelled(this: Timed): void {
  const res = this;
  if (res.writableFinished || res.locals.closedByServer) return;
  const req = res.req;
  log("warn", "request.cancelled", {
    code: "REQUEST_CANCELLED",
    status: 499,
    requestId: res.locals.requestId,
    method: req.method,
    // The path only: a query string may carry page tokens and filters.
    path: req.originalUrl.split("?")[0],
    operation: res.locals.pathMatch?.operation?.operationId,
    durationMs: Math.round(performance.now() - (res[STARTED] ?? performance.now())),
  });
}
