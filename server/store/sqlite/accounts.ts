/** Accounts in SQLite. */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { StoreError } from "../errors.ts";
import { ACCOUNT_DEFAULTS } from "../store.ts";
import type { Account, AccountImport, AccountPatch, AccountStore, NewAccount } from "../store.ts";
import { insertApiKey } from "./api-keys.ts";
import { accountFromRow } from "../shared/account-rows.ts";
import { inTransaction, isDuplicate, storeCall } from "./database.ts";

type Row = Record<string, SQLInputValue>;

export class SqliteAccountStore implements AccountStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  create(account: NewAccount): Promise<Account> {
    return storeCall(() => {
      insertAccount(this.#db, account);
      return this.#require(account.id);
    });
  }

  get(id: string): Promise<Account | undefined> {
    return storeCall(() => this.#find(id));
  }

  list(): Promise<Account[]> {
    return storeCall(() =>
      this.#db
        .prepare("SELECT * FROM accounts ORDER BY created_at_ms, id")
        .all()
        .map((row) => accountFromRow(row)),
    );
  }

  update(id: string, patch: AccountPatch): Promise<Account> {
    return storeCall(() => {
      const columns = Object.entries(columnsOf(patch));
      if (columns.length > 0) {
        const assignments = columns.map(([column]) => `${column} = ?`).join(", ");
        this.#db.prepare(`UPDATE accounts SET ${assignments} WHERE id = ?`).run(...columns.map(([, v]) => v), id);
      }
      return this.#require(id);
    });
  }

  importIfEmpty(entries: AccountImport[]): Promise<boolean> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        if (this.#db.prepare("SELECT 1 FROM accounts LIMIT 1").get() !== undefined) return false;
        for (const { account, keys } of entries) {
          insertAccount(this.#db, account);
          for (const key of keys) insertApiKey(this.#db, key);
        }
        return true;
      }),
    );
  }

  #find(id: string): Account | undefined {
    const row = this.#db.prepare("SELECT * FROM accounts WHERE id = ?").get(id);
    return row === undefined ? undefined : accountFromRow(row);
  }

  #require(id: string): Account {
    const account = this.#find(id);
    if (!account) throw new StoreError("not-found", `No account ${id}.`);
    return account;
  }
}

function insertAccount(db: DatabaseSync, account: NewAccount): void {
  const row: Row = {
    id: account.id,
    ...columnsOf({ ...ACCOUNT_DEFAULTS }),
    ...columnsOf(account),
    created_at_ms: Date.now(),
  };
  const names = Object.keys(row);
  try {
    db.prepare(`INSERT INTO accounts (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`).run(
      ...Object.values(row),
    );
  } catch (error) {
    if (isDuplicate(error)) throw new StoreError("already-exists", `Account ${account.id} already exists.`);
    throw error;
  }
}

/** The columns for the fields present in `fields` (undefined means "leave as is"). */
function columnsOf(fields: AccountPatch): Row {
  const row: Row = {};
  const set = (column: string, value: SQLInputValue | undefined) => {
    if (value !== undefined) row[column] = value;
  };
  set("suspended", flag(fields.suspended));
  set("balance_micros", fields.balanceMicros);
  set("budget_micros", fields.budgetMicros);
  set("requests_per_minute", fields.requestsPerMinute);
  set("allowed_models", fields.allowedModels === undefined ? undefined : json(fields.allowedModels));
  set("accepted_agreement_version", fields.acceptedAgreementVersion);
  set("has_payment_method", flag(fields.hasPaymentMethod));
  set("fine_tuning_enabled", flag(fields.fineTuningEnabled));
  return row;
}

function flag(value: boolean | undefined): number | undefined {
  return value === undefined ? undefined : value ? 1 : 0;
}

function json(value: string[] | null): string | null {
  return value === null ? null : JSON.stringify(value);
}
