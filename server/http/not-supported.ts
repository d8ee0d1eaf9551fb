/**
 * Rejects the request body fields the contract marks **Not supported.** (seed rule 2:
 * sending one is INVALID_REQUEST, so that no silently different answer is returned).
 *
 * The contract lets such a field through validation (it describes it, with any value,
 * `null` included), so the rule is enforced here, after validation, by presence alone.
 */
import type { NextFunction, Request, Response } from "express";
import { ApiError } from "../api-error.ts";

export function rejectNotSupported(req: Request, res: Response, next: NextFunction): void {
  const fields = res.locals.pathMatch?.operation?.notSupportedFields ?? [];
  const body: unknown = req.body;
  const sent = fields.find((field) => typeof body === "object" && body !== null && Object.hasOwn(body, field));
  if (sent !== undefined) {
    throw new ApiError("INVALID_REQUEST", `${sent} is not supported by this service; leave it out of the request.`, {
      param: sent,
    });
  }
  next();
}
