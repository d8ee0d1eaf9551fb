/**
 * Handlers registered by operationId rather than by an express path: the operation lookup
 * (operations.ts) has already matched the contract's path template, including custom
 * methods such as `{job}:cancel` that express path syntax cannot express plainly.
 *
 * A router gets one dispatching layer for all its operations, which finds the handler by
 * operationId in a map: one layer per operation made every request walk past each of them.
 */
import type { Request, Response, Router } from "express";
import type { operations } from "../../generated/api.d.ts";
import type { OperationId } from "../../generated/contract-values.ts";

/**
 * The handler of one operation, typed from the contract (`operations[Id]` of api.d.ts): its
 * path parameters, its JSON request body (which the request validator has already checked
 * against the contract; `unknown` for an upload or no body) and the JSON of its success
 * answer. For a union of ids (SFT or DPO) it takes what any of them may send.
 */
export type OperationHandler<Id extends OperationId> = (
  req: Request<PathOf<Id>, SuccessOf<Id>, JsonBodyOf<Id>>,
  res: Response<SuccessOf<Id>>,
  params: PathOf<Id>,
) => Promise<void> | void;

/** Path parameters as the lookup matched them: text, whatever type the contract gives the value. */
type PathOf<Id extends OperationId> = { [Name in keyof operations[Id]["parameters"]["path"]]: string };
type JsonBodyOf<Id extends OperationId> =
  NonNullable<operations[Id]["requestBody"]> extends { content: { "application/json": infer Body } } ? Body : unknown;
type SuccessOf<Id extends OperationId> =
  JsonOf<operations[Id]["responses"], 200> | JsonOf<operations[Id]["responses"], 201>;
type JsonOf<Responses, Status extends number> = Responses extends {
  [S in Status]: { content: { "application/json": infer Body } };
}
  ? Body
  : never;

/** A handler of any operation, as the dispatcher calls it: the lookup matched its id. */
type AnyHandler = (req: Request, res: Response, params: Record<string, string>) => Promise<void> | void;

const handlersByRouter = new WeakMap<Router, Map<string, AnyHandler>>();

export function onOperation<Id extends OperationId>(
  router: Router,
  operationId: Id,
  handler: OperationHandler<Id>,
): void {
  let handlers = handlersByRouter.get(router);
  if (handlers === undefined) {
    handlers = new Map();
    handlersByRouter.set(router, handlers);
    router.use(dispatcher(handlers));
  }
  if (handlers.has(operationId)) throw new Error(`A handler for ${operationId} is already registered.`);
  // The lookup dispatches by the operation's id, so the request is the one this handler's types describe.
  handlers.set(operationId, handler as unknown as AnyHandler);
}

function dispatcher(
  handlers: Map<string, AnyHandler>,
): (req: Request, res: Response, next: (error?: unknown) => void) => Promise<void> {
  return async (req, res, next) => {
    const match = res.locals.pathMatch;
    const handler = match?.operation === undefined ? undefined : handlers.get(match.operation.operationId);
    if (match === undefined || handler === undefined) return next();
    await handler(req, res, match.params);
  };
}
