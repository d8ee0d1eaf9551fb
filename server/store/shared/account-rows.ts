/**
 * Account and API key records from database rows, and an account's fields as columns. The
 * SQLite and PostgreSQL schemas name the columns alike, so both stores map their rows here;
 * only how a boolean is written differs, and each store says how.
 */
import { ACCOUNT_DEFAULTS, type Account, type AccountPatch, type ApiKey, type NewAccount } from "../store.ts";
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

/** A column value as written: text, a number, null, or a boolean as the database stores one. */
type Column<B> = string | number | null | B;

/**
 * The columns for the fields present in `fields` (undefined means "leave as is"). `bool`
 * writes a boolean as the database stores one (PostgreSQL: as is; SQLite: 0 or 1).
 */
export function accountColumns<B>(fields: AccountPatch, bool: (value: boolean) => B): Record<string, Column<B>> {
  const row: Record<string, Column<B>> = {};
  const set = (column: string, value: Column<B> | undefined) => {
    if (value !== undefined) row[column] = value;
  };
  const flag = (value: boolean | undefined) => (value === undefined ? undefined : bool(value));
  set("suspended", flag(fields.suspended));
  set("balance_micros", fields.balanceMicros);
  set("budget_micros", fields.budgetMicros);
  set("requests_per_minute", fields.requestsPerMinute);
  set(
    "allowed_models",
    fields.allowedModels === undefined
      ? undefined
      : fields.allowedModels === null
        ? null
        : JSON.stringify(fields.allowedModels),
  );
  set("accepted_agreement_version", fields.acceptedAgreementVersion);
  set("has_payment_method", flag(fields.hasPaymentMethod));
  set("fine_tuning_enabled", flag(fields.fineTuningEnabled));
  return row;
}

/** A new account's row: the defaults, then the account's own fields, then the time it is created. */
export function newAccountColumns<B>(account: NewAccount, bool: (value: boolean) => B): Record<string, Column<B>> {
  return {
    id: account.id,
    ...accountColumns({ ...ACCOUNT_DEFAULTS }, bool),
    ...accountColumns(account, bool),
    created_at_ms: Date.now(),
  };
}
