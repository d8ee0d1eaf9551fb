/**
 * Gives every request an id (`req_` + 24 hex characters), sent as `x-request-id` on every
 * response, success or error, and kept in `res.locals.requestId` for logs.
 *
 * This is the first middleware, so that even responses no later layer shapes (a 404, a
 * body too large to parse) carry it. A client-sent x-request-id is not reused: the id
 * must be unique for the server's own logs.
 */
import type { NextFunction, Request, Response } from "express";
import { randomHex } from "./random-hex.ts";

export const REQUEST_ID_HEADER = "x-request-id";

export function newRequestId(): string {
  return `req_${randomHex(12)}`;
}

export function requestId(_req: Request, res: Response, next: NextFunction): void {
  const id = newRequestId();
  res.locals.requestId = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}
