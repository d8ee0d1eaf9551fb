/**
 * Handlers registered by operationId rather than by an express path: the operation lookup
 * (operations.ts) has already matched the contract's path template, including custom
 * methods such as `{job}:cancel` that express path syntax cannot express plainly.
 */
import type { Request, Response, Router } from "express";

export type OperationHandler = (req: Request, res: Response, params: Record<string, string>) => Promise<void> | void;

export function onOperation(router: Router, operationId: string, handler: OperationHandler): void {
  router.use(async (req, res, next) => {
    const match = res.locals.pathMatch;
    if (match?.operation?.operationId !== operationId) return next();
    await handler(req, res, match.params);
  });
}
