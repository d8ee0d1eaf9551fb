/** Accounts in PostgreSQL: the same records and rules as sqlite/accounts.ts. */
import type pg from "pg";
import { StoreError } from "../errors.ts";
import { ACCOUNT_DEFAULTS } from "../store.ts";
import type { Account, AccountImport, AccountPatch, AccountStore, NewAccount } from "../store.ts";
import { insertApiKey } from "./api-keys.ts";
import { accountFromRow } from "../shared/account-rows.ts";
import { inTransaction, isDuplicate, pgCall, query, queryOne, type Db, type Row } from "./database.ts";

export class PostgresAccountStore implements AccountStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  create(account: NewAccount): Promise<Account> {
    return pgCall(() => insertAccount(this.#pool, account));
  }

  get(id: string): Promise<Account | undefined> {
    return pgCall(async () => {
      const row = await queryOne(this.#pool, "SELECT * FROM accounts WHERE id = $1", [id]);
      return row && accountFromRow(row);
    });
  }

  list(): Promise<Account[]> {
    return pgCall(async () =>
      (await query(this.#pool, "SELECT * FROM accounts ORDER BY created_at_ms, id")).map(accountFromRow),
    );
  }

  update(id: string, patch: AccountPatch): Promise<Account> {
    return pgCall(async () => {
      const columns = Object.entries(columnsOf(patch));
      const row =
        columns.length === 0
          ? await queryOne(this.#pool, "SELECT * FROM accounts WHERE id = $1", [id])
          : await queryOne(
              this.#pool,
              `UPDATE accounts SET ${columns.map(([column], i) => `${column} = $${i + 2}`).join(", ")} WHERE id = $1 RETURNING *`,
              [id, ...columns.map(([, value]) => value)],
            );
      if (!row) throw new StoreError("not-found", `No account ${id}.`);
      return accountFromRow(row);
    });
  }

  importIfEmpty(entries: AccountImport[]): Promise<boolean> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        // SQLite's BEGIN IMMEDIATE made the emptiness check and the inserts one step; here a
        // table lock that conflicts with itself and with inserts does (readers go on).
        await db.query("LOCK TABLE accounts IN SHARE ROW EXCLUSIVE MODE");
        if ((await queryOne(db, "SELECT 1 FROM accounts LIMIT 1")) !== undefined) return false;
        for (const { account, keys } of entries) {
          await insertAccount(db, account);
          for (const key of keys) await insertApiKey(db, key);
        }
        return true;
      }),
    );
  }
}

async function insertAccount(db: Db, account: NewAccount): Promise<Account> {
  const row: Row = {
    id: account.id,
    ...columnsOf({ ...ACCOUNT_DEFAULTS }),
    ...columnsOf(account),
    created_at_ms: Date.now(),
  };
  const names = Object.keys(row);
  try {
    const inserted = await queryOne(
      db,
      `INSERT INTO accounts (${names.join(", ")}) VALUES (${names.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING *`,
      Object.values(row),
    );
    return accountFromRow(inserted as Row);
  } catch (error) {
    if (isDuplicate(error)) throw new StoreError("already-exists", `Account ${account.id} already exists.`);
    throw error;
  }
}

/** The columns for the fields present in `fields` (undefined means "leave as is"). */
function columnsOf(fields: AccountPatch): Row {
  const row: Row = {};
  const set = (column: string, value: unknown) => {
    if (value !== undefined) row[column] = value;
  };
  set("suspended", fields.suspended);
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
  set("has_payment_method", fields.hasPaymentMethod);
  set("fine_tuning_enabled", fields.fineTuningEnabled);
  return row;
}
