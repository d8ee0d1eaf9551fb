/**
 * Request (and, in development and tests, response) validation against the contract by
 * express-openapi-validator, and the translation of its errors into the error envelope.
 *
 * Its 400s name the failing field as a JSON pointer into the request (`/body/input/2/content`,
 * `/query/pageSize`); `param` is that field as the path the contract documents
 * (`input[2].content`, `pageSize`).
 */
import type { RequestHandler } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import type { OpenApiValidatorOpts } from "express-openapi-validator/dist/openapi.validator.js";
import { contractDocument } from "./contract.ts";
import { ApiError } from "../api-error.ts";
import { validatorByOperation } from "./validator-by-operation.ts";

/**
 * express-openapi-validator 5.6 throws a TypeError (a 500) on a query parameter written
 * without `=` (`?pageSize`) unless the parameter is `allowReserved`: it splits the value,
 * which it reads as undefined. `?pageSize` is `?pageSize=` (URLSearchParams and express's
 * parser read it so), and is written that way before the validator reads the URL.
 */
const bareQueryParameters: RequestHandler = (req, _res, next) => {
  const withEquals = (url: string) => {
    const q = url.indexOf("?");
    if (q < 0) return url;
    const parts = url.slice(q + 1).split("&");
    return parts.every((p) => p === "" || p.includes("="))
      ? url
      : `${url.slice(0, q + 1)}${parts.map((p) => (p === "" || p.includes("=") ? p : `${p}=`)).join("&")}`;
  };
  req.url = withEquals(req.url);
  req.originalUrl = withEquals(req.originalUrl);
  next();
};

export function contractValidator(validateResponses: boolean): RequestHandler[] {
  return [bareQueryParameters, validatorByOperation(contractValidatorOptions(validateResponses))];
}

/**
 * The validator's options. It is entered through the operation lookup
 * (validator-by-operation.ts: its own route lookup and middleware chain repeated work on
 * every request); the options are the same ones its own `middleware(options)` takes.
 */
export function contractValidatorOptions(validateResponses: boolean): OpenApiValidatorOpts {
  return {
    apiSpec: contractDocument() as unknown as OpenApiValidatorOpts["apiSpec"],
    // Unknown parameters are ignored by rule, query parameters included.
    validateRequests: { allowUnknownQueryParameters: true },
    validateResponses,
    // Authentication runs before validation (auth.ts); the validator must not redo it.
    validateSecurity: false,
    // Multipart bodies are not parsed (nor buffered) here: body.ts marks a form as streamed
    // and its handler reads the parts as they arrive (busboy). Raw JSONL uploads pass unread
    // to their handler too.
    fileUploader: false,
  };
}

const {
  BadRequest,
  MethodNotAllowed,
  NotFound,
  RequestEntityTooLarge,
  UnsupportedMediaType,
  InternalServerError,
  NotAcceptable,
} = OpenApiValidator.error;

/** One failure as the validator reports it: `path` is a JSON pointer into the request (`/body/input/2`). */
export interface ValidatorItem {
  path?: string;
  message?: string;
}

/**
 * The ApiError for a validator failure, or undefined when `error` is not one. A response
 * that broke the contract becomes `INTERNAL`; the caller logs `detail`.
 */
export function fromValidatorError(error: unknown): { apiError: ApiError; detail?: string } | undefined {
  if (error instanceof BadRequest) return { apiError: invalidRequest(error.errors ?? []) };
  if (error instanceof NotFound) return { apiError: new ApiError("NOT_FOUND", `No such path: ${error.path}.`) };
  if (error instanceof MethodNotAllowed) {
    const method = /^(\S+) method not allowed$/.exec(error.message)?.[1] ?? "This method";
    return {
      apiError: new ApiError("METHOD_NOT_ALLOWED", `${method} is not allowed on ${error.path}; see the Allow header.`),
    };
  }
  if (error instanceof RequestEntityTooLarge)
    return { apiError: new ApiError("MEDIA_TOO_LARGE", "The request body is too large.") };
  if (error instanceof UnsupportedMediaType) return { apiError: unsupportedMediaType(error.message) };
  if (error instanceof InternalServerError || error instanceof NotAcceptable) {
    const detail = `${error.message} ${JSON.stringify(error.errors ?? [])}`;
    return { apiError: new ApiError("INTERNAL", "An unexpected error occurred."), detail };
  }
  return undefined;
}

/** Whether `error` is the validator's 400 (the request breaks the contract). */
export function isInvalidRequest(error: unknown): error is InstanceType<typeof BadRequest> {
  return error instanceof BadRequest;
}

/** What else to say in a 400's message: why a rule is so, and the request's other problems. */
export interface MoreProblems {
  /** Why the first problem's rule is so (said after it). */
  hint?: string;
  /** The request's other problems, each `param: what` (`temperature: must be <= 2`). */
  others?: string[];
}

/** One 400 for the most specific failure (the one deepest in the request) with its param; the message may name more. */
export function invalidRequest(items: ValidatorItem[], more: MoreProblems = {}): ApiError {
  const { path, text } = mostSpecific(items) ?? { path: "", text: "is invalid" };
  const param = paramOf(path);
  const where = param === null ? "The request body" : param;
  const others = more.others?.length ? ` Also: ${more.others.map((o) => o.replace(/\.$/, "")).join("; ")}.` : "";
  return new ApiError("INVALID_REQUEST", `${where}: ${text}${more.hint ? ` (${more.hint})` : ""}.${others}`, { param });
}

/** The deepest failure among `items` (the first of equals), with all that is said of its place. */
export function mostSpecific(items: ValidatorItem[]): { path: string; text: string } | undefined {
  const deepest = items.reduce<ValidatorItem | undefined>(
    (best, item) => (depth(item) > depth(best) ? item : best),
    undefined,
  );
  if (deepest === undefined) return undefined;
  const path = deepest.path ?? "";
  const messages = [...new Set(items.filter((i) => i.path === path).map((i) => readable(i.message)))];
  return { path, text: messages.join("; ") || "is invalid" };
}

/** Ajv says "must have required property 'store'" of a field whose path already names it. */
function readable(message: string | undefined): string | undefined {
  return message?.startsWith("must have required property") ? "is required" : message;
}

function depth(item: ValidatorItem | undefined): number {
  return item?.path === undefined ? -1 : item.path.split("/").length;
}

/**
 * `/body/input/2/content` → `input[2].content`; `/query/pageSize` → `pageSize`;
 * `/headers/x-request-timeout-ms` → `x-request-timeout-ms`; `/body` → null.
 */
export function paramOf(pointer: string): string | null {
  const [, , ...segments] = pointer.split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (segments.length === 0) return null;
  return segments.reduce((param, segment) => {
    if (/^\d+$/.test(segment)) return `${param}[${segment}]`;
    return param === "" ? segment : `${param}.${segment}`;
  }, "");
}

/** A body of a media type the operation does not take is a 400, not a 415 (docs/decisions.md). */
function unsupportedMediaType(message: string): ApiError {
  const sent = /unsupported media type (.*)$/.exec(message)?.[1];
  const text =
    sent === undefined || sent === "undefined"
      ? "A request body is required (with its Content-Type)."
      : `This operation does not take a request body of type ${sent}.`;
  return new ApiError("INVALID_REQUEST", text);
}
