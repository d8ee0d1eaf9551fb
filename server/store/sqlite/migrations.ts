/**
 * The SQLite schema as an ordered list of migrations. A migration is never edited once
 * released: a change is a new migration at the end. `schema_migrations` records which
 * have run, so opening an older database brings it up to date in order.
 *
 * Times are INTEGER milliseconds since the epoch; money is INTEGER micro-units.
 */
import type { DatabaseSync } from "node:sqlite";
import { inTransaction } from "./database.ts";
import { DATASETS_SCHEMA } from "./datasets-schema.ts";
import { FINE_TUNING_SCHEMA } from "./fine-tuning-schema.ts";
import { CACHE_VERSION_SCHEMA } from "./cache-version.ts";

interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "accounts, api keys, usage, rate windows",
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        suspended INTEGER NOT NULL,
        balance_micros INTEGER NOT NULL,
        budget_micros INTEGER,              -- per UTC day; NULL: no budget
        requests_per_minute INTEGER,        -- NULL: no limit
        allowed_models TEXT,                -- JSON array of model ids; NULL: every model
        accepted_agreement_version TEXT,
        has_payment_method INTEGER NOT NULL,
        fine_tuning_enabled INTEGER NOT NULL,
        created_at_ms INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        secret_hash TEXT NOT NULL UNIQUE,   -- hex SHA-256; the secret itself is never stored
        hint TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        revoked_at_ms INTEGER
      ) STRICT;
      CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at_ms);

      CREATE TABLE usage_records (
        id INTEGER PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        key_id TEXT REFERENCES api_keys (id),
        kind TEXT NOT NULL,
        amount_micros INTEGER NOT NULL,
        at_ms INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX usage_records_by_account_time ON usage_records (account_id, at_ms);

      CREATE TABLE rate_windows (
        account_id TEXT PRIMARY KEY REFERENCES accounts (id),
        start_ms INTEGER NOT NULL,
        count INTEGER NOT NULL
      ) STRICT;
    `,
  },
  { version: 2, name: "datasets and dataset versions", sql: DATASETS_SCHEMA },
  { version: 3, name: "fine-tuning jobs, idempotency records, metrics, models", sql: FINE_TUNING_SCHEMA },
  {
    version: 4,
    name: "heartbeats of the processes doing dataset work",
    sql: `
      CREATE TABLE owner_heartbeats (
        owner TEXT PRIMARY KEY,               -- host:pid:random (server/datasets/owners.ts)
        until_ms INTEGER NOT NULL             -- alive until then unless it beats again
      ) STRICT;
    `,
  },
  { version: 5, name: "cache version counter", sql: CACHE_VERSION_SCHEMA },
];

/** Applies the migrations the database has not had yet, each in its own transaction. */
export function migrate(db: DatabaseSync, migrations: readonly Migration[] = MIGRATIONS): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at_ms INTEGER NOT NULL
  ) STRICT`);
  for (const migration of migrations) {
    inTransaction(db, () => {
      // Checked inside the transaction: another process may have applied it meanwhile.
      if (isApplied(db, migration.version)) return;
      db.exec(migration.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        Date.now(),
      );
    });
  }
}

export function appliedVersions(db: DatabaseSync): number[] {
  return db
    .prepare("SELECT version FROM schema_migrations ORDER BY version")
    .all()
    .map((row) => Number(row.version));
}

function isApplied(db: DatabaseSync, version: number): boolean {
  return db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(version) !== undefined;
}
