/** Accounts in PostgreSQL: the same records and rules as sqlite/accounts.ts. */
import type pg from "pg";
import { StoreError } from "../errors.ts";
import type { Account, AccountImport, AccountPatch, AccountStore, NewAccount } from "../store.ts";
import { insertApiKey } from "./api-keys.ts";
import { accountColumns, accountFromRow, newAccountColumns } from "../shared/account-rows.ts";
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
      const columns = Object.entries(accountColumns(patch, asIs));
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
  const row = newAccountColumns(account, asIs);
  const names = Object.keys(row);
  try {
    const inserted = await queryOne(
      db,
      `INSERT INTO accounts (${names.join(", ")}) VALUES (${names.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING *`,
      Object.values(row),
    );
    return accountFromRow(inserted as Row);
  } catch (error) {
    if (isDuplicate(error))
      throw new StoreError("already-exists", `Account ${account.id} already exists.`, { cause: error });
    throw error;
  }
}

/** PostgreSQL has booleans. */
function asIs(value: boolean): boolean {
  return value;
}
