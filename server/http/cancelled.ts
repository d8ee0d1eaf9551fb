/**
 * A client that hangs up before its answer is complete is logged once as
 * `REQUEST_CANCELLED`, with status 499 (the log's convention for "the client closed the
 * request") and its request id (docs/contract-decisions.md, Errors); nothing is sent, since there
 * is no one to send it to. Whatever was running for it stops on its own signal (a
 * generation, an upload).
 *
 * Called by the server's shared `close` listener (ops/answer-end.ts), which decides what a
 * cancellation is: a connection the server closes itself (a stream that failed after its
 * headers were sent, error-handler.ts) is marked `closedByServer` and is not one.
 */
import type { Response } from "express";
import { log } from "../log.ts";

/** `arrived`: performance.now() when the request arrived. */
export function logCancelled(res: Response, arrived: number): void {
  const req = res.req;
  log("warn", "request.cancelled", {
    code: "REQUEST_CANCELLED",
    status: 499,
    requestId: res.locals?.requestId,
    method: req.method,
    // The path only: a query string may carry page tokens and filters.
    path: (req.originalUrl ?? req.url).split("?")[0],
    operation: res.locals?.pathMatch?.operation?.operationId,
    durationMs: Math.round(performance.now() - arrived),
  });
}
