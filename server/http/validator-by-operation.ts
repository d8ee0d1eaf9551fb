/**
 * express-openapi-validator's request (and response) validation, entered through this
 * server's own operation lookup instead of its middleware chain.
 *
 * Why: profiled under `GET /v1/models` (bench/request-path.ts, `node --cpu-prof`), the
 * validator's middleware chain spent its time on work that repeats identically on every
 * request: each of its four layers waits on the promise of the loaded document (a
 * microtask hop per layer and request), and its metadata layer finds the route by trying
 * every path of the contract in turn (a regular expression per path, built by
 * path-to-regexp), although operations.ts has already matched the request's operation.
 *
 * What stays the validator's: the same options, the same loading and preprocessing of the
 * document (OpenApiSpecLoader, SchemaPreprocessor), the same RequestValidator with its
 * compiled ajv validators cached per operation and content type, the same
 * ResponseValidator, the same errors. What this file does instead of the chain: it builds
 * `req.openapi` (the metadata the validator's layers read) from a map keyed by the
 * operation that operations.ts matched, and calls the validator's request and response
 * layers directly, without waiting on a promise once the document is loaded.
 *
 * The deep imports are pinned by the exact version in package.json (5.6.2), and
 * test/http/validator-by-operation.test.ts runs the same requests through this entry and
 * through the validator's own middleware and requires the same outcome of every one.
 */
import { createRequire } from "node:module";
import path from "node:path";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import type { OpenApiValidatorOpts } from "express-openapi-validator/dist/openapi.validator.js";
import type { PathMatch } from "./operations.ts";

const VALIDATOR_ROOT = path.dirname(createRequire(import.meta.url).resolve("express-openapi-validator/package.json"));
const requireFromValidator = createRequire(path.join(VALIDATOR_ROOT, "package.json"));

/** The validator's parts this file calls, as its 5.6 dist files export them. */
interface ValidatorInternals {
  OpenApiValidator: new (options: OpenApiValidatorOpts) => {
    options: OpenApiValidatorOpts & {
      validateApiSpec: boolean;
      $refParser: unknown;
      validateResponses: unknown;
      ignorePaths?: unknown;
      ignoreUndocumented?: boolean;
      useRequestUrl?: boolean;
    };
    ajvOpts: { preprocessor: unknown; request: unknown; response: unknown };
  };
  OpenApiSpecLoader: new (options: { apiDoc: unknown; validateApiSpec: boolean; $refParser: unknown }) => {
    load(): Promise<LoadedSpec>;
  };
  OpenApiContext: new (
    spec: LoadedSpec,
    ignorePaths: unknown,
    ignoreUndocumented?: boolean,
    useRequestUrl?: boolean,
  ) => { isManagedRoute(path: string): boolean; openApiRouteMap: Record<string, Record<string, unknown>> };
  SchemaPreprocessor: new (
    apiDoc: unknown,
    ajvOptions: unknown,
    responseOptions: unknown,
  ) => { preProcess(): { apiDocRes: PathsDocument | null } };
  RequestValidator: new (
    apiDoc: unknown,
    options: unknown,
  ) => { validate(req: Request, res: Response, next: NextFunction): void };
  ResponseValidator: new (
    apiDoc: unknown,
    options: unknown,
    responseOptions: unknown,
    serial: number,
  ) => { validate(): RequestHandler };
  cloneDeep: <T>(value: T) => T;
}

interface PathsDocument {
  paths: Record<string, Record<string, unknown>>;
}

interface LoadedSpec {
  apiDoc: PathsDocument;
  routes: { basePath: string; expressRoute: string; openApiRoute: string; method: string }[];
  serial: number;
}

function loadInternals(): ValidatorInternals {
  const dist = (file: string) => requireFromValidator(path.join(VALIDATOR_ROOT, "dist", file));
  return {
    OpenApiValidator: dist("openapi.validator.js").OpenApiValidator,
    OpenApiSpecLoader: dist("framework/openapi.spec.loader.js").OpenApiSpecLoader,
    OpenApiContext: dist("framework/openapi.context.js").OpenApiContext,
    SchemaPreprocessor: dist("middlewares/parsers/schema.preprocessor.js").SchemaPreprocessor,
    RequestValidator: dist("middlewares/index.js").RequestValidator,
    ResponseValidator: dist("middlewares/index.js").ResponseValidator,
    cloneDeep: requireFromValidator("lodash.clonedeep"),
  };
}

/** What the validator's metadata layer would have put in `req.openapi` for one operation, less the path parameters. */
interface OperationMetadata {
  expressRoute: string;
  openApiRoute: string;
  schema: unknown;
  responseSchema: unknown;
}

/** Everything built once the document is loaded. */
interface Loaded {
  serial: number;
  /** By `method template`: `get /models`, `post /accounts/{account}/dpoJobs/{job}:cancel`. */
  operations: Map<string, OperationMetadata>;
  isManagedRoute(path: string): boolean;
  /** The Allow header of a 405 by path template, in the validator's order. */
  allowed: Map<string, string>;
  validateRequest(req: Request, res: Response, next: NextFunction): void;
  validateResponse: RequestHandler | undefined;
}

async function load(options: OpenApiValidatorOpts): Promise<Loaded> {
  const internals = loadInternals();
  // The same steps, in the same order, as the validator's own `middleware(options)`.
  const validator = new internals.OpenApiValidator(options);
  const opts = validator.options;
  const spec = await new internals.OpenApiSpecLoader({
    apiDoc: internals.cloneDeep(options.apiSpec),
    validateApiSpec: opts.validateApiSpec,
    $refParser: opts.$refParser,
  }).load();
  const preprocessed = new internals.SchemaPreprocessor(
    spec.apiDoc,
    validator.ajvOpts.preprocessor,
    opts.validateResponses,
  ).preProcess();
  const context = new internals.OpenApiContext(spec, opts.ignorePaths, opts.ignoreUndocumented, opts.useRequestUrl);
  const requestValidator = new internals.RequestValidator(spec.apiDoc, validator.ajvOpts.request);
  const operations = new Map<string, OperationMetadata>();
  for (const route of spec.routes) {
    const template = route.openApiRoute.substring(route.basePath.length);
    const method = route.method.toLowerCase();
    operations.set(`${method} ${template}`, {
      expressRoute: route.expressRoute,
      openApiRoute: route.openApiRoute,
      schema: spec.apiDoc.paths[template]?.[method],
      responseSchema: preprocessed.apiDocRes?.paths[template]?.[method],
    });
  }
  const allowed = new Map<string, string>();
  for (const route of spec.routes) {
    const methods = Object.keys(context.openApiRouteMap[route.openApiRoute] ?? {}).filter((key) =>
      /^[A-Z]+$/.test(key),
    );
    allowed.set(route.openApiRoute.substring(route.basePath.length), methods.join(", "));
  }
  return {
    serial: spec.serial,
    operations,
    allowed,
    isManagedRoute: (p) => context.isManagedRoute(p),
    validateRequest: (req, res, next) => requestValidator.validate(req, res, next),
    validateResponse: opts.validateResponses
      ? new internals.ResponseValidator(
          preprocessed.apiDocRes,
          validator.ajvOpts.response,
          opts.validateResponses,
          spec.serial,
        ).validate()
      : undefined,
  };
}

const { BadRequest, MethodNotAllowed, NotFound } = OpenApiValidator.error;

/**
 * The validator's request and response layers as one middleware, after operations.ts has
 * left the request's match in `res.locals.pathMatch`. Options as for the validator's own
 * `middleware(options)`; `validateSecurity` and `fileUploader` must be off (this server
 * authenticates and streams uploads itself, and this entry has neither layer).
 */
export function validatorByOperation(options: OpenApiValidatorOpts): RequestHandler {
  if (options.validateSecurity !== false || options.fileUploader !== false) {
    throw new Error(
      "validatorByOperation runs neither the security nor the upload layer: pass validateSecurity: false and fileUploader: false.",
    );
  }
  let loaded: Loaded | undefined;
  const loading = load(options).then((l) => (loaded = l));
  // Errors of loading surface on the requests, as the validator's own middleware does.
  loading.catch(() => undefined);
  return (req, res, next) => {
    if (loaded !== undefined) return validate(loaded, req, res, next);
    loading.then((l) => validate(l, req, res, next), next);
  };
}

function validate(loaded: Loaded, req: Request, res: Response, next: NextFunction): void {
  try {
    const match = res.locals.pathMatch as PathMatch | undefined;
    if (match?.operation === undefined) return refuseUnmatched(loaded, req, match, next);
    const metadata = loaded.operations.get(`${match.operation.method} ${match.template}`);
    if (metadata === undefined) throw new Error(`The validator has no route for ${match.operation.operationId}.`);
    // The validator's metadata layer decodes the parameters and calls an undecodable one a 400.
    if (req.path.includes("%") && !decodes(req.path))
      throw new BadRequest({ path: req.path, message: "malformed uri'" });
    const pathParams = { ...match.params };
    (req as Request & { openapi?: unknown }).openapi = {
      expressRoute: metadata.expressRoute,
      openApiRoute: metadata.openApiRoute,
      pathParams,
      schema: metadata.schema,
      serial: loaded.serial,
      _responseSchema: metadata.responseSchema,
    };
    req.params = pathParams;
    const { validateResponse } = loaded;
    loaded.validateRequest(
      req,
      res,
      validateResponse === undefined
        ? next
        : (error?: unknown) => (error === undefined ? validateResponse(req, res, next) : next(error)),
    );
  } catch (error) {
    next(error);
  }
}

/** As the validator's metadata layer answers a path of the contract without the method (405), or a path under its base path that is not one (404). */
function refuseUnmatched(loaded: Loaded, req: Request, match: PathMatch | undefined, next: NextFunction): void {
  const requestPath = req.path.startsWith(req.baseUrl) ? req.path : `${req.baseUrl}/${req.path}`;
  if (match !== undefined) {
    const allow = loaded.allowed.get(match.template) ?? match.allowedMethods.join(", ");
    throw new MethodNotAllowed({
      path: req.path,
      message: `${req.method} method not allowed`,
      headers: { Allow: allow },
    });
  }
  if (loaded.isManagedRoute(requestPath)) throw new NotFound({ path: req.path, message: "not found" });
  next();
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
