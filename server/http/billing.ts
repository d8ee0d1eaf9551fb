/**
 * Which operations cost money, and charging their cost. A paid call is refused up front
 * when the balance is used up or the budget reached (tenant-limits.ts); afterwards the
 * handler charges what the call actually used.
 */
import { PAID_OPERATIONS as PAID_OPERATION_IDS } from "../../generated/contract-values.ts";
import type { Store } from "../store/store.ts";
import type { Caller } from "./locals.ts";

/**
 * Inference and the creation of training jobs, the operations whose responses declare a 402
 * (generated/contract-values.ts); everything else is free.
 */
export const PAID_OPERATIONS: ReadonlySet<string> = new Set(PAID_OPERATION_IDS);

export function isPaidOperation(operationId: string): boolean {
  return PAID_OPERATIONS.has(operationId);
}

export interface UsageCost {
  /** Micro-units; money.ts `costMicros(price, tokens)` works it out from a price. */
  amountMicros: number;
  /** What was used, e.g. `inference` or `fine_tuning`. */
  kind: string;
}

/**
 * Takes the cost from the caller's balance and records it against the budget; resolves
 * once that is committed (in the server, in a group with other calls' charges:
 * store/cache/group-commit.ts). The balance may go below zero: a call that was allowed to start is
 * charged in full, and the next paid call is refused.
 */
export async function chargeUsage(store: Store, caller: Caller, cost: UsageCost): Promise<{ balanceMicros: number }> {
  return store.usage.charge({
    accountId: caller.account.id,
    keyId: caller.keyId,
    kind: cost.kind,
    amountMicros: cost.amountMicros,
    at: new Date(),
  });
}
