/**
 * Gives every request an id, sent as `x-request-id` on every response, success or error,
 * kept in `res.locals.requestId`, and in the request's context (request-context.ts) so
 * that every log line of the request and every upstream call made for it carry it.
 *
 * A caller's own `x-request-id` is kept when it is well-formed (1–128 characters of
 * letters, digits and `-_.:`), so one id follows the call from the caller's logs through
 * ours to the upstream's; anything else (absent, too long, control bytes, spaces) gets a
 * new id `req_` + 24 hex characters. W3C `traceparent` (and `tracestate` with it) is taken
 * when well-formed and forwarded upstream unchanged.
 *
 * This is the first middleware, so that even responses no later layer shapes (a 404, a
 * body too large to parse) carry it.
 */
import type { NextFunction, Request, Response } from "express";
import { runInRequestContext, type RequestContext } from "../request-context.ts";
import { randomHex } from "./random-hex.ts";

export const REQUEST_ID_HEADER = "x-request-id";

/** What a caller's id may look like: safe in a header, a log line and a URL, and short. */
const CALLER_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** W3C Trace Context, version 00: version-traceid-parentid-flags, ids not all zeros. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
/** tracestate: list members of printable ASCII, at most 512 characters (the spec's 32 members). */
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

export function newRequestId(): string {
  return `req_${randomHex(12)}`;
}

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const context = requestContextOf(req);
  res.locals.requestId = context.requestId;
  res.setHeader(REQUEST_ID_HEADER, context.requestId);
  runInRequestContext(context, next);
}

function requestContextOf(req: Request): RequestContext {
  const given = single(req.headers[REQUEST_ID_HEADER]);
  const context: RequestContext = {
    requestId: given !== undefined && CALLER_REQUEST_ID.test(given) ? given : newRequestId(),
  };
  const traceparent = single(req.headers.traceparent);
  if (traceparent !== undefined && TRACEPARENT.test(traceparent)) {
    context.traceparent = traceparent;
    const tracestate = single(req.headers.tracestate);
    if (tracestate !== undefined && TRACESTATE.test(tracestate)) context.tracestate = tracestate;
  }
  return context;
}

/** A header sent once; a repeated one (an array) is not trusted. */
function single(value: string | string[] | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}
