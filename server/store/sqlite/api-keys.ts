/** API keys in SQLite: only the secret's hash is stored (see ../api-keys.ts). */
import type { DatabaseSync } from "node:sqlite";
import { StoreError } from "../errors.ts";
import type { ApiKey, ApiKeyStore, NewApiKey } from "../store.ts";
import { apiKeyFromRow } from "../shared/account-rows.ts";
import { inTransaction, isConstraint, isDuplicate, storeCall } from "./database.ts";

export class SqliteApiKeyStore implements ApiKeyStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  create(key: NewApiKey): Promise<ApiKey> {
    return storeCall(() => {
      insertApiKey(this.#db, key);
      return this.#require(key.id);
    });
  }

  findBySecretHash(secretHash: string): Promise<ApiKey | undefined> {
    return storeCall(() => {
      const row = this.#db.prepare("SELECT * FROM api_keys WHERE secret_hash = ?").get(secretHash);
      return row === undefined ? undefined : apiKeyFromRow(row);
    });
  }

  list(accountId: string): Promise<ApiKey[]> {
    return storeCall(() =>
      this.#db
        .prepare("SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at_ms, id")
        .all(accountId)
        .map((row) => apiKeyFromRow(row)),
    );
  }

  revoke(id: string): Promise<ApiKey> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        this.#db
          .prepare("UPDATE api_keys SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms IS NULL")
          .run(Date.now(), id);
        return this.#require(id);
      }),
    );
  }

  #require(id: string): ApiKey {
    const row = this.#db.prepare("SELECT * FROM api_keys WHERE id = ?").get(id);
    if (row === undefined) throw new StoreError("not-found", `No API key ${id}.`);
    return apiKeyFromRow(row);
  }
}

/** Shared with the account import, which inserts keys inside its own transaction. */
export function insertApiKey(db: DatabaseSync, key: NewApiKey): void {
  try {
    db.prepare("INSERT INTO api_keys (id, account_id, secret_hash, hint, created_at_ms) VALUES (?, ?, ?, ?, ?)").run(
      key.id,
      key.accountId,
      key.secretHash,
      key.hint,
      Date.now(),
    );
  } catch (error) {
    if (isDuplicate(error))
      throw new StoreError("already-exists", `API key ${key.id} (or its secret) already exists.`, {
        cause: error,
      });
    if (isConstraint(error)) throw new StoreError("not-found", `No account ${key.accountId}.`, { cause: error });
    throw error;
  }
}
