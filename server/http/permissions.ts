/**
 * Checks a handler makes once it knows what the call touches (the model, the trainer).
 * Each throws the ApiError the decisions give for it; the operator sets what they check
 * with the admin command.
 */
import type { Account } from "../store/store.ts";
import { ApiError } from "../api-error.ts";

/**
 * 403 MODEL_NOT_ALLOWED when the account's allow-list excludes the model. Pass the model's
 * canonical id: the bare slug of a platform model, the full name of a fine-tuned one;
 * `param` is the request field that named it (`baseModel` for a training job).
 */
export function requireModelAllowed(account: Account, modelId: string, param = "model"): void {
  if (account.allowedModels !== null && !account.allowedModels.includes(modelId)) {
    throw new ApiError("MODEL_NOT_ALLOWED", `This account may not use the model ${modelId}.`, { param });
  }
}

/** A model as far as billing cares: its price per million tokens, "0" when free. */
export interface PricedModel {
  id: string;
  pricePerMillionTokens: string;
}

/** 402 PAYMENT_REQUIRED when the model is paid and the account has no payment method on file. */
export function requirePaymentMethod(account: Account, model: PricedModel, param = "model"): void {
  if (isPaid(model) && !account.hasPaymentMethod) {
    const message = `The model ${model.id} is paid; add a payment method to the account to use it.`;
    throw new ApiError("PAYMENT_REQUIRED", message, { param });
  }
}

/**
 * 403 AGREEMENT_REQUIRED unless the account accepted exactly `version`. An empty version
 * means nothing is required (the catalogue's convention).
 */
export function requireAgreement(account: Account, version: string): void {
  if (!hasAgreement(account, version)) {
    throw new ApiError(
      "AGREEMENT_REQUIRED",
      `This requires accepting agreement version ${version}; it has not been accepted for this account.`,
    );
  }
}

/** Whether the account accepted exactly `version` ("" means nothing is required). */
export function hasAgreement(account: Account, version: string): boolean {
  return version === "" || account.acceptedAgreementVersion === version;
}

/** 403 OPERATION_NOT_ALLOWED when an operator disabled fine-tuning for the account. */
export function requireFineTuningEnabled(account: Account): void {
  if (!account.fineTuningEnabled) {
    throw new ApiError("OPERATION_NOT_ALLOWED", "Fine-tuning is disabled for this account.");
  }
}

function isPaid(model: PricedModel): boolean {
  return !/^0*(\.0*)?$/.test(model.pricePerMillionTokens.trim());
}
