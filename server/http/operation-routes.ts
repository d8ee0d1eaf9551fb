/**
 * Handlers registered by operationId rather than by an express path: the operation lookup
 * (operations.ts) has already matched the contract's path template, including custom
 * methods such as `{job}:cancel` that express path syntax cannot express plainly.
 *
 * A router gets one dispatching layer for all its operations, which finds the handler by
 * operationId in a map: one layer per operation made every request walk past each of them.
 */
import type { Request, Response, Router } from "express";

export type OperationHandler = (req: Request, res: Response, params: Record<string, string>) => Promise<void> | void;

const handlersByRouter = new WeakMap<Router, Map<string, OperationHandler>>();

export function onOperation(router: Router, operationId: string, handler: OperationHandler): void {
  let handlers = handlersByRouter.get(router);
  if (handlers === undefined) {
    handlers = new Map();
    handlersByRouter.set(router, handlers);
    router.use(dispatcher(handlers));
  }
  if (handlers.has(operationId)) throw new Error(`A handler for ${operationId} is already registered.`);
  handlers.set(operationId, handler);
}

function dispatcher(
  handlers: Map<string, OperationHandler>,
): (req: Request, res: Response, next: (error?: unknown) => void) => Promise<void> {
  return async (req, res, next) => {
    const match = res.locals.pathMatch;
    const handler = match?.operation === undefined ? undefined : handlers.get(match.operation.operationId);
    if (match === undefined || handler === undefined) return next();
    await handler(req, res, match.params);
  };
}
