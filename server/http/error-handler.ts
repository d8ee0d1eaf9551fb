/**
 * The last middleware: every failure, from any layer, leaves here as the error envelope
 * `{error: {message, type, code, param}}` with its status (x-request-id is already set).
 *
 * - ApiError: its own status and body; Retry-After on 429 and 503; Allow on 405.
 * - StoreError: the store's refusal, mapped to its code by store-errors.ts.
 * - Body-parser and validator failures: mapped to the codes the decisions give.
 * - Anything else is a bug: 500 INTERNAL with a generic message; the details go to the log
 *   (server/log.ts) under the request id, never to the client.
 * - On /v1/messages the envelope also carries `type: "error"`, the other vendor's format.
 * - Once a response has started (a stream), nothing can be sent: the connection is closed
 *   so the client sees a cut-off answer rather than one that looks complete.
 * - An answer given before the request's body was read (401 before the body, 413 on a
 *   declared length, a refused upload) closes the connection (`Connection: close`): the
 *   body, which may be gigabytes or may never come, is not drained; what the client is
 *   still sending is read for a moment so that it gets the answer (linger.ts).
 */
import type { NextFunction, Request, Response } from "express";
import { causeChain } from "../failure-causes.ts";
import { log } from "../log.ts";
import { fromBodyParserError } from "./body.ts";
import { closeWhenAnswered } from "./linger.ts";
import { BASE_PATH } from "./contract.ts";
import { ApiError } from "../api-error.ts";
import { isMeantError, meantApiError } from "./store-errors.ts";
import { fromValidatorError } from "./validation.ts";

/** The operation whose errors use the messages format's envelope. */
const MESSAGES_PATH = `${BASE_PATH}/messages`;

/** Retry-After when a 429 or 503 was raised without one; the header is required on both. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

export function errorHandler(error: unknown, req: Request, res: Response, _next: NextFunction): void {
  const { apiError, detail } = toApiError(error, req);
  res.locals.errorCode = apiError.code;
  if (apiError.status >= 500) logFailure(req, res, apiError, detail ?? error);
  if (res.headersSent) {
    res.locals.closedByServer = true;
    res.destroy();
    return;
  }
  res.status(apiError.status);
  if (!req.complete) closeWhenAnswered(res);
  if (apiError.status === 429 || apiError.status === 503) {
    res.setHeader("retry-after", String(Math.max(1, Math.ceil(apiError.retryAfter ?? DEFAULT_RETRY_AFTER_SECONDS))));
  }
  if (apiError.code === "METHOD_NOT_ALLOWED")
    res.setHeader("allow", (res.locals.pathMatch?.allowedMethods ?? []).join(", "));
  res.json(envelope(req, apiError));
}

/** Answers requests that no route took. */
export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(new ApiError("NOT_FOUND", `No such path: ${req.method} ${req.path}.`));
}

function toApiError(error: unknown, req: Request): { apiError: ApiError; detail?: unknown } {
  const meant = meantApiError(error);
  if (meant) return { apiError: meant };
  const fromValidator = fromValidatorError(error);
  if (fromValidator) return fromValidator;
  const fromBody = fromBodyParserError(error);
  if (fromBody) return { apiError: fromBody };
  if (isClientHttpError(error)) return { apiError: fromClientHttpError(error, req) };
  return { apiError: new ApiError("INTERNAL", "An unexpected error occurred."), detail: error };
}

interface HttpError extends Error {
  status: number;
  expose: boolean;
}

/** A 4xx from express itself (http-errors, e.g. a path parameter that is not valid %-encoding). */
function isClientHttpError(error: unknown): error is HttpError {
  const e = error as Partial<HttpError> | null;
  return (
    error instanceof Error && e?.expose === true && typeof e.status === "number" && e.status >= 400 && e.status < 500
  );
}

function fromClientHttpError(error: HttpError, req: Request): ApiError {
  if (error.status === 404) return new ApiError("NOT_FOUND", "No such path.");
  if (error.status === 413) return new ApiError("MEDIA_TOO_LARGE", "The request body is too large.");
  // body-parser passes zlib's failure to decompress a body on as a bare 400 (zlib's errors carry an errno).
  const encoding = req.headers["content-encoding"];
  if (typeof (error as { errno?: unknown }).errno === "number" && encoding !== undefined)
    return new ApiError(
      "INVALID_REQUEST",
      `The request body could not be decoded as its Content-Encoding (${encoding}) says; send it encoded so, or unencoded.`,
    );
  return new ApiError("INVALID_REQUEST", "The request is malformed.");
}

function envelope(req: Request, apiError: ApiError): object {
  const body = apiError.toBody();
  return isMessagesPath(req.path) ? { type: "error", ...body } : body;
}

function isMessagesPath(path: string): boolean {
  return path === MESSAGES_PATH || path === `${MESSAGES_PATH}/`;
}

/**
 * An ApiError or StoreError was meant (a 503 from upstream or storage): its message and
 * `cause`, what the upstream or the database did (the client got only the message).
 * Anything else is a bug: log its stack.
 */
function logFailure(req: Request, res: Response, apiError: ApiError, detail: unknown): void {
  const what = isMeantError(detail)
    ? detail.message
    : detail instanceof Error
      ? (detail.stack ?? detail.message)
      : String(detail);
  log("error", "request.failed", {
    code: apiError.code,
    status: apiError.status,
    requestId: res.locals.requestId,
    method: req.method,
    path: req.originalUrl.split("?")[0],
    detail: what,
    cause: isMeantError(detail) ? causeChain(detail) : undefined,
  });
}
