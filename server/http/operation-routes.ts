/**
 * Handlers registered by operationId rather than by an express path: the operation lookup
 * (operations.ts) has already matched the contract's path template, including custom
 * methods such as `{job}:cancel` that express path syntax cannot express plainly.
 *
 * One dispatching layer runs them all, finding the handler by operationId in a map: an
 * express route per operation made every request walk past each of them, and the router
 * they were mounted on cost a layer walk of its own (app.ts runs the dispatcher in its
 * pipeline instead).
 */
import type { NextFunction, Request, Response } from "express";
import type { operations } from "../../generated/api.d.ts";
import type { OperationId } from "../../generated/contract-values.ts";
import { ApiError } from "../api-error.ts";

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

/** The operations' handlers by operationId, and the middleware that runs the one a request matched. */
export class OperationHandlers {
  readonly #byId = new Map<string, AnyHandler>();

  on<Id extends OperationId>(operationId: Id, handler: OperationHandler<Id>): void {
    if (this.#byId.has(operationId)) throw new Error(`A handler for ${operationId} is already registered.`);
    // The lookup dispatches by the operation's id, so the request is the one this handler's types describe.
    this.#byId.set(operationId, handler as unknown as AnyHandler);
  }

  /**
   * Middleware: runs the handler of the operation the lookup matched. A request without
   * one (no operation matched, or none registered) goes on, to the 404.
   */
  readonly dispatch = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const match = res.locals.pathMatch;
    const operation = match?.operation;
    const handler = operation === undefined ? undefined : this.#byId.get(operation.operationId);
    if (match === undefined || operation === undefined || handler === undefined) return next();
    // Fail closed: a handler never runs for a caller authentication did not see.
    if (res.locals.caller === undefined && !operation.public) {
      throw new ApiError("INTERNAL", "A request reached a handler without authentication.");
    }
    await handler(req, res, match.params);
  };
}
