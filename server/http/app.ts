/**
 * The express application: the HTTP core every handler runs inside.
 *
 * Order of the layers (each file says why it does what it does):
 *   request id → Host required (malformed.ts) → operation lookup → public routes (docs,
 *   probes: paths the lookup did not match) → authentication and tenant checks (headers
 *   only: no byte of a body is read before the key is known) → JSON body (a declared
 *   length over the limit refused unread; forms left to stream) → contract validation
 *   (requests; responses when asked; a refused request's 400 names all its problems,
 *   request-problems.ts) → not-supported fields → the handler of the matched operation
 *   (operation-routes.ts) → 404 → error envelope.
 *
 * A client that hangs up is logged by the server's shared `close` listener
 * (ops/answer-end.ts), around the app rather than inside it.
 *
 * The layers before and after the refused-request explainer (an error handler, which only
 * express places) run as two express layers (pipeline.ts): the same order, without the
 * router's cost per layer.
 */
import express from "express";
import type { RequestHandler, Router } from "express";
import type { Store } from "../store/store.ts";
import { authenticate } from "./auth.ts";
import { jsonBody, streamedForms } from "./body.ts";
import { errorHandler, notFound } from "./error-handler.ts";
import { refuseEncodedNul, requireHost } from "./malformed.ts";
import { rejectNotSupported } from "./not-supported.ts";
import { OperationHandlers } from "./operation-routes.ts";
import { OperationTable, matchOperation } from "./operations.ts";
import { pipeline } from "./pipeline.ts";
import { requestId } from "./request-id.ts";
import { explainRefusedRequests, type RequestProblems } from "./request-problems.ts";
import { contractValidator } from "./validation.ts";

export interface AppOptions {
  store: Store;
  /** Validate response bodies against the contract (dev and tests; a failure is a loud 500). */
  validateResponses: boolean;
  /** The largest JSON request body accepted; larger is 413 MEDIA_TOO_LARGE. */
  maxBodyBytes: number;
  /** Registers the operation handlers, by operationId (operation-routes.ts). */
  registerRoutes: (handlers: OperationHandlers) => void;
  /** Routes outside the contract (the docs page, the probes): no authentication, no validation. */
  publicRoutes?: Router;
  /** The service's own problems with a request the contract refused (a model that does not exist), named in its 400 too. */
  requestProblems?: RequestProblems;
}

export function createApp(options: AppOptions): express.Express {
  const handlers = new OperationHandlers();
  options.registerRoutes(handlers);
  const app = express();
  // The public routes match case-sensitively, as the operation lookup and the validator do.
  app.set("case sensitive routing", true);
  app.set("x-powered-by", false);
  // No ETag, so no 304: the contract declares none, and hashing every answer body cost about 2 % of a GET (docs/decisions.md).
  app.set("etag", false);
  // Nor for a request that asks for one without a tag: the `fresh` package counts
  // `If-None-Match: *` as a match with no ETag at all, so express answered every GET so asked
  // with an empty 304. A conditional request is answered in full.
  Object.defineProperty(app.request, "fresh", { configurable: true, get: () => false });
  app.use(
    pipeline(
      requestId,
      requireHost,
      refuseEncodedNul,
      matchOperation(new OperationTable()),
      ...(options.publicRoutes ? [outsideTheContract(options.publicRoutes)] : []),
      authenticate(options.store),
      ...jsonBody(options.maxBodyBytes),
      streamedForms,
      ...contractValidator(options.validateResponses),
    ),
  );
  app.use(explainRefusedRequests(options.requestProblems));
  app.use(pipeline(rejectNotSupported, handlers.dispatch));
  app.use(notFound);
  app.use(errorHandler);
  return app;
}

/**
 * The public routes (docs, probes) answer paths outside the contract's: a request the
 * operation lookup matched never walks their layers.
 */
function outsideTheContract(routes: Router): RequestHandler {
  return (req, res, next) => (res.locals.pathMatch === undefined ? routes(req, res, next) : next());
}
