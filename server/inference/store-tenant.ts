/**
 * The engine's view of the caller (Tenant), implemented over the store and the HTTP
 * core's permission and billing helpers, so that the same rules apply to every format.
 */
import type { Response } from "express";
import { chargeUsage } from "../http/billing.ts";
import { hasAgreement, requireAgreement, requireModelAllowed, requirePaymentMethod } from "../http/permissions.ts";
import { costMicros } from "../store/money.ts";
import type { Store } from "../store/store.ts";
import type { ResolvedModel, Tenant } from "./resolved-model.ts";

/** The canonical id an allow-list names: the bare slug of a platform model, the full name of an account's own. */
function allowListId(model: ResolvedModel): string {
  return model.adapter === undefined ? model.spec.id : model.name;
}

export function storeTenant(store: Store, res: Response): Tenant {
  const caller = res.locals.caller;
  return {
    accountId: caller.account.id,
    async authorizeModel(model) {
      requireModelAllowed(caller.account, allowListId(model));
      requirePaymentMethod(caller.account, {
        id: model.spec.id,
        pricePerMillionTokens: model.spec.pricePerMillionTokens,
      });
      requireAgreement(caller.account, model.spec.requiredAgreementVersion);
    },
    async charge(model, usage) {
      const tokens = usage.inputTokens + usage.outputTokens;
      const amountMicros = costMicros(model.spec.pricePerMillionTokens, tokens);
      if (amountMicros > 0) await chargeUsage(store, caller, { amountMicros, kind: "inference" });
    },
  };
}

/**
 * Whether GET /models lists the model for the caller, the models it can call now: models
 * outside the account's allow-list, and models whose licence (agreement) the account has
 * not accepted, are left out; a paid model without a payment method is still listed,
 * since adding one is all it takes to call it.
 */
export function isListed(res: Response, model: ResolvedModel): boolean {
  const { account } = res.locals.caller;
  const allowed = account.allowedModels === null || account.allowedModels.includes(allowListId(model));
  return allowed && hasAgreement(account, model.spec.requiredAgreementVersion);
}

/**
 * GET /models/{model} of a model the caller may not read yet: one whose licence the
 * account has not accepted is 403 AGREEMENT_REQUIRED (the decisions: so that a user
 * learns what to do).
 */
export function requireReadable(res: Response, model: ResolvedModel): void {
  requireAgreement(res.locals.caller.account, model.spec.requiredAgreementVersion);
}
