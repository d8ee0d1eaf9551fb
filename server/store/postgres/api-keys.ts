/** API keys in PostgreSQL: only the secret's hash is stored (see ../api-keys.ts). */
import type pg from "pg";
import { StoreError } from "../errors.ts";
import type { ApiKey, ApiKeyStore, NewApiKey } from "../store.ts";
import { apiKeyFromRow } from "../shared/account-rows.ts";
import { isDuplicate, isMissingReference, pgCall, query, queryOne, type Db, type Row } from "./database.ts";

export class PostgresApiKeyStore implements ApiKeyStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  create(key: NewApiKey): Promise<ApiKey> {
    return pgCall(() => insertApiKey(this.#pool, key));
  }

  findBySecretHash(secretHash: string): Promise<ApiKey | undefined> {
    return pgCall(async () => {
      const row = await queryOne(this.#pool, "SELECT * FROM api_keys WHERE secret_hash = $1", [secretHash]);
      return row && apiKeyFromRow(row);
    });
  }

  list(accountId: string): Promise<ApiKey[]> {
    return pgCall(async () =>
      (
        await query(this.#pool, "SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at_ms, id", [accountId])
      ).map(apiKeyFromRow),
    );
  }

  revoke(id: string): Promise<ApiKey> {
    return pgCall(async () => {
      // One statement: revoking twice keeps the first time.
      const row = await queryOne(
        this.#pool,
        "UPDATE api_keys SET revoked_at_ms = COALESCE(revoked_at_ms, $2) WHERE id = $1 RETURNING *",
        [id, Date.now()],
      );
      if (!row) throw new StoreError("not-found", `No API key ${id}.`);
      return apiKeyFromRow(row);
    });
  }
}

/** Shared with the account import, which inserts keys inside its own transaction. */
export async function insertApiKey(db: Db, key: NewApiKey): Promise<ApiKey> {
  try {
    const row = await queryOne(
      db,
      "INSERT INTO api_keys (id, account_id, secret_hash, hint, created_at_ms) VALUES ($1, $2, $3, $4, $5) RETURNING *",
      [key.id, key.accountId, key.secretHash, key.hint, Date.now()],
    );
    return apiKeyFromRow(row as Row);
  } catch (error) {
    if (isDuplicate(error))
      throw new StoreError("already-exists", `API key ${key.id} (or its secret) already exists.`, {
        cause: error,
      });
    if (isMissingReference(error)) throw new StoreError("not-found", `No account ${key.accountId}.`, { cause: error });
    throw error;
  }
}
