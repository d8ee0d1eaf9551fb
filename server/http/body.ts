/**
 * Request body parsing: JSON bodies only, up to the configured size and nesting depth.
 * Other media types (a dataset upload's raw JSONL) are left unread in the request stream
 * for their handler to stream to storage; the validator refuses them on operations that
 * take JSON.
 *
 * Runs after authentication (app.ts): no byte of a body is read, nor parsed, before the
 * key is known. Only the body of an operation that takes JSON is read; anything else (no
 * operation: a 404 or 405; an operation without a JSON body) is answered without it.
 */
import express from "express";
import type { Request, RequestHandler } from "express";
import { ApiError } from "../api-error.ts";

const JSON_TYPE = "application/json";

export function jsonBody(maxBodyBytes: number): RequestHandler[] {
  // strict: only an object or array is a JSON request body, as every operation takes.
  const parse = express.json({ limit: maxBodyBytes, strict: true, type: JSON_TYPE });
  return [refuseDeclaredTooLarge(maxBodyBytes), forJsonOperations(parse), limitNesting];
}

/** Whether the request declares a Content-Length over `maxBytes`. */
export function declaresMoreThan(req: Request, maxBytes: number): boolean {
  const length = Number(req.headers["content-length"]);
  return Number.isFinite(length) && length > maxBytes;
}

/**
 * A JSON body whose declared Content-Length is over the limit is 413 at once, before any
 * of it is read: the client may not even be sending it yet (it may be waiting for the
 * answer), and body-parser would read (and drop) all of it before answering. The answer
 * closes the connection (error-handler.ts), so the body is never drained.
 */
function refuseDeclaredTooLarge(maxBodyBytes: number): RequestHandler {
  return (req, res, next) => {
    if (
      !res.locals.pathMatch?.operation?.takesJson ||
      req.is(JSON_TYPE) !== JSON_TYPE ||
      !declaresMoreThan(req, maxBodyBytes)
    )
      return next();
    next(tooLarge(maxBodyBytes));
  };
}

function tooLarge(limit: number): ApiError {
  return new ApiError("MEDIA_TOO_LARGE", `The request body is larger than the limit of ${limit} bytes.`);
}

/** Runs `handler` only for requests to an operation that takes a JSON body. */
function forJsonOperations(handler: RequestHandler): RequestHandler {
  return (req, res, next) => (res.locals.pathMatch?.operation?.takesJson ? handler(req, res, next) : next());
}

/**
 * The deepest nesting of objects and arrays a JSON body may have. JSON.parse takes any
 * depth, but the handlers, the validator and the tokenizer recurse (JSON.stringify of a
 * tool's parameter schema): 10 000 levels overflowed the stack, a 500. No request of the
 * contract comes near this.
 */
export const MAX_JSON_DEPTH = 128;

const limitNesting: RequestHandler = (req, _res, next) => {
  if (typeof req.body === "object" && req.body !== null && nestedDeeperThan(req.body as object, MAX_JSON_DEPTH)) {
    return next(new ApiError("INVALID_REQUEST", `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`));
  }
  next();
};

/** Walks the parsed body without recursion (that is the point). */
function nestedDeeperThan(body: object, limit: number): boolean {
  const stack: [object, number][] = [[body, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (depth > limit) return true;
    for (const child of Object.values(node))
      if (typeof child === "object" && child !== null) stack.push([child as object, depth + 1]);
  }
  return false;
}

/**
 * A multipart form is left unread too, for its handler to stream (a dataset upload's file
 * may be gigabytes; the validator's own uploader would buffer it). The validator checks a
 * form's parts in `req.body`, which only the handler can fill as it reads them, so the body
 * is marked as streamed here and the handler itself refuses a form without its `file` part.
 */
export const STREAMED_FORM = Object.freeze({ file: "(streamed to the handler)" });

export const streamedForms: RequestHandler = (req, _res, next) => {
  if (req.is("multipart/form-data") === "multipart/form-data") req.body = { ...STREAMED_FORM };
  next();
};

/** The errors body-parser raises (http-errors with a `type`), by that type. */
const BODY_ERRORS: Record<string, (error: BodyParserError) => ApiError> = {
  "entity.parse.failed": () =>
    new ApiError("INVALID_REQUEST", "The request body is not valid JSON (an object is expected)."),
  "entity.too.large": (e) => tooLarge(e.limit ?? 0),
  "request.size.invalid": () =>
    new ApiError("INVALID_REQUEST", "The request body's length does not match its Content-Length."),
  "encoding.unsupported": () =>
    new ApiError("INVALID_REQUEST", "The request body's Content-Encoding is not supported."),
  "charset.unsupported": () =>
    new ApiError("INVALID_REQUEST", "The request body's charset is not supported; send UTF-8."),
  "request.aborted": () => new ApiError("INVALID_REQUEST", "The request body ended early."),
};

interface BodyParserError extends Error {
  type: string;
  limit?: number;
}

/** The ApiError for a body-parser failure, or undefined when `error` is not one. */
export function fromBodyParserError(error: unknown): ApiError | undefined {
  if (!(error instanceof Error) || typeof (error as Partial<BodyParserError>).type !== "string") return undefined;
  return BODY_ERRORS[(error as BodyParserError).type]?.(error as BodyParserError);
}
