/**
 * Account and API key records from database rows. The SQLite and PostgreSQL schemas name
 * the columns alike, so both stores map their rows here.
 */
import type { Account, ApiKey } from "../store.ts";
import { flag, intOrNull, type Row } from "./columns.ts";

export function accountFromRow(row: Row): Account {
  return {
    id: String(row.id),
    suspended: flag(row.suspended),
    balanceMicros: Number(row.balance_micros),
    budgetMicros: intOrNull(row.budget_micros),
    requestsPerMinute: intOrNull(row.requests_per_minute),
    allowedModels: row.allowed_models === null ? null : (JSON.parse(String(row.allowed_models)) as string[]),
    acceptedAgreementVersion: row.accepted_agreement_version === null ? null : String(row.accepted_agreement_version),
    hasPaymentMethod: flag(row.has_payment_method),
    fineTuningEnabled: flag(row.fine_tuning_enabled),
    createdAt: new Date(Number(row.created_at_ms)),
  };
}

export function apiKeyFromRow(row: Row): ApiKey {
  const revokedAt = intOrNull(row.revoked_at_ms);
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    hint: String(row.hint),
    createdAt: new Date(Number(row.created_at_ms)),
    revokedAt: revokedAt === null ? null : new Date(revokedAt),
  };
}
