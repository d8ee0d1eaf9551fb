/** Accounts in SQLite. */
import type { DatabaseSync } from "node:sqlite";
import { StoreError } from "../errors.ts";
import type { Account, AccountImport, AccountPatch, AccountStore, NewAccount } from "../store.ts";
import { insertApiKey } from "./api-keys.ts";
import { accountColumns, accountFromRow, newAccountColumns } from "../shared/account-rows.ts";
import { inTransaction, isDuplicate, storeCall } from "./database.ts";

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
      const columns = Object.entries(accountColumns(patch, zeroOrOne));
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
  const row = newAccountColumns(account, zeroOrOne);
  const names = Object.keys(row);
  try {
    db.prepare(`INSERT INTO accounts (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`).run(
      ...Object.values(row),
    );
  } catch (error) {
    if (isDuplicate(error))
      throw new StoreError("already-exists", `Account ${account.id} already exists.`, { cause: error });
    throw error;
  }
}

/** SQLite stores a boolean as 0 or 1. */
function zeroOrOne(value: boolean): number {
  return value ? 1 : 0;
}
