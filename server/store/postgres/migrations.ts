/**
 * The PostgreSQL schema as an ordered list of migrations, and the small runner that applies
 * them. The tables mirror the SQLite ones (sqlite/migrations.ts and the schema files beside
 * it) column for column, so the two stores keep the same records: times are BIGINT
 * milliseconds since the epoch, money BIGINT micro-units, JSON kept as TEXT.
 *
 * A migration is never edited once released: a change is a new migration at the end.
 * `schema_migrations` records which have run. Many processes may start at once (a rolling
 * deploy of servers and workers): the runner holds a session advisory lock while it
 * migrates, so one process applies each migration and the others wait, then find it done.
 * Everything lives in the connection's current schema (`search_path`), so one database
 * can hold several independent stores (the tests give each its own schema).
 */
import type pg from "pg";
import { CACHE_VERSION_SCHEMA } from "./cache-version.ts";
import { checkOut, query } from "./database.ts";

export interface Migration {
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
        suspended BOOLEAN NOT NULL,
        balance_micros BIGINT NOT NULL,
        budget_micros BIGINT,               -- per UTC day; NULL: no budget
        requests_per_minute INTEGER,        -- NULL: no limit
        allowed_models TEXT,                -- JSON array of model ids; NULL: every model
        accepted_agreement_version TEXT,
        has_payment_method BOOLEAN NOT NULL,
        fine_tuning_enabled BOOLEAN NOT NULL,
        created_at_ms BIGINT NOT NULL
      );

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        secret_hash TEXT NOT NULL UNIQUE,   -- hex SHA-256; the secret itself is never stored
        hint TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL,
        revoked_at_ms BIGINT
      );
      CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at_ms);

      CREATE TABLE usage_records (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        key_id TEXT REFERENCES api_keys (id),
        kind TEXT NOT NULL,
        amount_micros BIGINT NOT NULL,
        at_ms BIGINT NOT NULL
      );
      CREATE INDEX usage_records_by_account_time ON usage_records (account_id, at_ms);

      CREATE TABLE rate_windows (
        account_id TEXT PRIMARY KEY REFERENCES accounts (id),
        start_ms BIGINT NOT NULL,
        count INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: "datasets and dataset versions",
    sql: `
      CREATE TABLE datasets (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- creation order, for newest-first paging
        account_id TEXT NOT NULL REFERENCES accounts (id),
        dataset_id TEXT NOT NULL,
        display_name TEXT NOT NULL,
        source TEXT NOT NULL,
        state TEXT NOT NULL,
        latest_version_no INTEGER NOT NULL,   -- 0 before the first upload
        total_bytes BIGINT NOT NULL,
        create_time_ms BIGINT NOT NULL,
        update_time_ms BIGINT NOT NULL,
        UNIQUE (account_id, dataset_id)       -- ids stay taken after a (soft) delete
      );
      CREATE INDEX datasets_by_account_state ON datasets (account_id, state, seq);

      CREATE TABLE dataset_versions (
        dataset_seq BIGINT NOT NULL REFERENCES datasets (seq),
        version_no INTEGER NOT NULL,
        state TEXT NOT NULL,
        stored BOOLEAN NOT NULL,              -- the file is complete and synced (the upload was answered 200)
        owner TEXT,                           -- the process receiving the upload or validating (server/datasets/owners.ts)
        bytes BIGINT NOT NULL,
        total_lines BIGINT NOT NULL,
        valid_lines BIGINT NOT NULL,
        example_count BIGINT NOT NULL,
        estimated_token_count BIGINT NOT NULL,
        first_invalid_line BIGINT,            -- with first_invalid_reason, set on FAILED
        first_invalid_reason TEXT,
        top_level_keys TEXT NOT NULL,         -- JSON array of strings, sorted
        format TEXT,                          -- SFT | PREFERENCE once validated
        create_time_ms BIGINT NOT NULL,
        update_time_ms BIGINT NOT NULL,
        PRIMARY KEY (dataset_seq, version_no)
      );
      CREATE INDEX dataset_versions_by_state ON dataset_versions (state);
    `,
  },
  {
    version: 3,
    name: "fine-tuning jobs, idempotency records, metrics, models",
    sql: `
      CREATE TABLE training_jobs (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- creation order: queue order and newest-first paging
        account_id TEXT NOT NULL REFERENCES accounts (id),
        job_id TEXT NOT NULL,
        job_type TEXT NOT NULL,
        state TEXT NOT NULL,
        output_model_id TEXT NOT NULL,
        record TEXT NOT NULL,                 -- the JobRecord as JSON (times as ms)
        lease_owner TEXT,                     -- the runner holding the job
        lease_until_ms BIGINT,                -- its hold ends then unless renewed (heartbeat)
        create_time_ms BIGINT NOT NULL,
        UNIQUE (account_id, job_id)
      );
      CREATE INDEX training_jobs_by_state ON training_jobs (state, seq);
      CREATE INDEX training_jobs_by_account ON training_jobs (account_id, job_type, seq);

      CREATE TABLE training_job_datasets (
        account_id TEXT NOT NULL,
        dataset_id TEXT NOT NULL,
        job_seq BIGINT NOT NULL REFERENCES training_jobs (seq),
        PRIMARY KEY (account_id, dataset_id, job_seq)
      );

      CREATE TABLE idempotency_records (
        account_id TEXT NOT NULL,
        collection TEXT NOT NULL,             -- the job type: keys are per account and collection
        idempotency_key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        job_seq BIGINT NOT NULL REFERENCES training_jobs (seq),
        created_at_ms BIGINT NOT NULL,
        PRIMARY KEY (account_id, collection, idempotency_key)
      );

      CREATE TABLE training_curves (
        job_seq BIGINT NOT NULL REFERENCES training_jobs (seq),
        series TEXT NOT NULL,                 -- training | evaluation
        step INTEGER NOT NULL,
        epoch INTEGER NOT NULL,
        loss DOUBLE PRECISION NOT NULL,
        learning_rate DOUBLE PRECISION NOT NULL,
        time_ms BIGINT NOT NULL,
        PRIMARY KEY (job_seq, series, step)
      );

      CREATE TABLE account_models (
        account_id TEXT NOT NULL REFERENCES accounts (id),
        model_id TEXT NOT NULL,
        base_model TEXT NOT NULL,
        job_name TEXT NOT NULL,
        adapter_path TEXT NOT NULL,
        create_time_ms BIGINT NOT NULL,
        PRIMARY KEY (account_id, model_id)
      );
    `,
  },
  {
    version: 4,
    name: "heartbeats of the processes doing dataset work",
    sql: `
      CREATE TABLE owner_heartbeats (
        owner TEXT PRIMARY KEY,               -- host:pid:random (server/datasets/owners.ts)
        until_ms BIGINT NOT NULL              -- alive until then unless it beats again
      );
    `,
  },
  { version: 5, name: "cache version counter", sql: CACHE_VERSION_SCHEMA },
];

/**
 * Applies the migrations the schema has not had yet, each in its own transaction, under an
 * advisory lock so that processes starting together apply each one once. Returns the
 * versions it applied.
 */
export async function migrate(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const { client, release } = await checkOut(pool);
  let broken: Error | undefined;
  try {
    // Keyed by schema: stores in other schemas of the same database migrate independently.
    await client.query("SELECT pg_advisory_lock(hashtext(current_schema() || ':schema_migrations'))");
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at_ms BIGINT NOT NULL
      )`);
      const done = new Set(await appliedVersions(client));
      const applied: number[] = [];
      for (const migration of migrations) {
        if (done.has(migration.version)) continue;
        await client.query("BEGIN");
        try {
          await client.query(migration.sql);
          await client.query("INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES ($1, $2, $3)", [
            migration.version,
            migration.name,
            Date.now(),
          ]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK");
          throw new Error(`Migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`, {
            cause: error,
          });
        }
        applied.push(migration.version);
      }
      return applied;
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtext(current_schema() || ':schema_migrations'))");
    }
  } catch (error) {
    broken = error as Error; // the session may still hold the lock: never reuse it
    throw error;
  } finally {
    release(broken);
  }
}

export async function appliedVersions(db: Pick<pg.Pool | pg.PoolClient, "query">): Promise<number[]> {
  const rows = await query(db, "SELECT version FROM schema_migrations ORDER BY version").catch(
    (error: { code?: string }) => {
      if (error.code === "42P01") return []; // undefined_table: nothing applied yet
      throw error;
    },
  );
  return rows.map((row) => Number(row.version));
}

/** The versions not applied yet, for a process that must not migrate itself. */
export async function pendingVersions(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const done = new Set(await appliedVersions(pool));
  return migrations.filter((m) => !done.has(m.version)).map((m) => m.version);
}
