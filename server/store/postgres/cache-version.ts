/**
 * The cache version counter in PostgreSQL (store.ts CacheVersionStore): one row, bumped by
 * triggers in the transaction of every change a server process caches, whichever process
 * or tool makes it; the same triggers NOTIFY `cache_version` on commit. A balance change is
 * left out: charges change it on every paid call, and the caches keep balances fresh
 * another way.
 */
import type pg from "pg";
import type { CacheVersionStore } from "../store.ts";
import { pgCall, queryOne } from "./database.ts";

const CACHED_ACCOUNT_COLUMNS =
  "suspended, budget_micros, requests_per_minute, allowed_models, accepted_agreement_version, has_payment_method, fine_tuning_enabled";

function triggers(table: string, updateOf = ""): string {
  return `CREATE TRIGGER ${table}_bump_cache_version AFTER INSERT OR UPDATE${updateOf && ` OF ${updateOf}`} OR DELETE ON ${table}
    FOR EACH STATEMENT EXECUTE FUNCTION bump_cache_version();`;
}

export const CACHE_VERSION_SCHEMA = `
  CREATE TABLE cache_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
  );
  INSERT INTO cache_version (id, version) VALUES (1, 0);
  CREATE FUNCTION bump_cache_version() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE cache_version SET version = version + 1 WHERE id = 1;
    PERFORM pg_notify('cache_version', '');
    RETURN NULL;
  END;
  $$;
  ${triggers("accounts", CACHED_ACCOUNT_COLUMNS)}
  ${triggers("api_keys")}
  ${triggers("account_models")}
`;

export class PostgresCacheVersionStore implements CacheVersionStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  current(): Promise<number> {
    return pgCall(async () =>
      Number((await queryOne(this.#pool, "SELECT version FROM cache_version WHERE id = 1"))?.version),
    );
  }
}
