/**
 * The cache version counter in SQLite (store.ts CacheVersionStore): one row, bumped by
 * triggers in the transaction of every change a server process caches, whichever process
 * (a server, a worker, the admin command) or tool makes it. A balance change is left out:
 * charges change it on every paid call, and the caches keep balances fresh another way.
 */
import type { DatabaseSync } from "node:sqlite";
import type { CacheVersionStore } from "../store.ts";
import { storeCall } from "./database.ts";

/** The columns of `accounts` a cached account depends on: all but the balance and the creation time. */
const CACHED_ACCOUNT_COLUMNS =
  "suspended, budget_micros, requests_per_minute, allowed_models, accepted_agreement_version, has_payment_method, fine_tuning_enabled";

const BUMP = "BEGIN UPDATE cache_version SET version = version + 1 WHERE id = 1; END;";

function triggers(table: string, updateOf = ""): string {
  return ["INSERT", `UPDATE${updateOf && ` OF ${updateOf}`}`, "DELETE"]
    .map(
      (event) =>
        `CREATE TRIGGER ${table}_${event.split(" ")[0]!.toLowerCase()}_bumps_cache_version AFTER ${event} ON ${table} ${BUMP}`,
    )
    .join("\n");
}

export const CACHE_VERSION_SCHEMA = `
  CREATE TABLE cache_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
  ) STRICT;
  INSERT INTO cache_version (id, version) VALUES (1, 0);
  ${triggers("accounts", CACHED_ACCOUNT_COLUMNS)}
  ${triggers("api_keys")}
  ${triggers("account_models")}
`;

export class SqliteCacheVersionStore implements CacheVersionStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  current(): Promise<number> {
    return storeCall(() => Number(this.#db.prepare("SELECT version FROM cache_version WHERE id = 1").get()?.version));
  }
}
