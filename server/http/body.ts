/**
 * Request body parsing: JSON bodies only, up to the configured size and nesting depth.
 * Other media types (a dataset upload's raw JSONL) are left unread in the request stream
 * for their handler to stream to storage; the validator refuses them on operations that
 * take JSON.
 */
import express from "express";
import type { RequestHandler } from "express";
import { ApiError } from "./errors.ts";

export function jsonBody(maxBodyBytes: number): RequestHandler[] {
  // strict: only an object or array is a JSON request body, as every operation takes.
  return [express.json({ limit: maxBodyBytes, strict: true, type: "application/json" }), limitNesting];
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
    for (const child of Object.values(node)) if (typeof child === "object" && child !== null) stack.push([child as object, depth + 1]);
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
  "entity.parse.failed": () => new ApiError("INVALID_REQUEST", "The request body is not valid JSON (an object is expected)."),
  "entity.too.large": (e) => new ApiError("MEDIA_TOO_LARGE", `The request body is larger than the limit of ${e.limit} bytes.`),
  "request.size.invalid": () => new ApiError("INVALID_REQUEST", "The request body's length does not match its Content-Length."),
  "encoding.unsupported": () => new ApiError("INVALID_REQUEST", "The request body's Content-Encoding is not supported."),
  "charset.unsupported": () => new ApiError("INVALID_REQUEST", "The request body's charset is not supported; send UTF-8."),
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
