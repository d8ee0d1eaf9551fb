/**
 * Questions about the store that its interface does not answer, asked on a connection of
 * the probe's own so that a busy pool cannot hide the answer: are the migrations this code
 * knows all applied (readiness), and how many jobs wait or train in each state (the queue
 * depth gauge, across every process sharing the store).
 *
 * PostgreSQL: a pool of one connection. SQLite: the same file opened read-only.
 */
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createPool } from "../store/postgres/database.ts";
import { MIGRATIONS as POSTGRES_MIGRATIONS, pendingVersions } from "../store/postgres/migrations.ts";
import { DATABASE_FILE } from "../store/sqlite.ts";
import { appliedVersions, MIGRATIONS as SQLITE_MIGRATIONS } from "../store/sqlite/migrations.ts";

export interface StoreProbe {
  /** Migration versions this code has that the store has not applied. */
  pendingMigrations(): Promise<number[]>;
  /** Jobs not yet ended, by state (QUEUED is the queue depth). */
  liveJobCounts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** The training_jobs states a job waits or trains in. */
const LIVE_STATES = ["JOB_STATE_QUEUED", "JOB_STATE_RUNNING", "JOB_STATE_CHECKPOINTING", "JOB_STATE_FINALIZING"];
const PROBE_TIMEOUT_MS = 2_000;

export function openStoreProbe(config: { dataDir: string; databaseUrl?: string }): StoreProbe {
  return config.databaseUrl ? postgresProbe(config.databaseUrl) : sqliteProbe(path.join(config.dataDir, DATABASE_FILE));
}

function postgresProbe(databaseUrl: string): StoreProbe {
  const pool = createPool(databaseUrl, {
    poolSize: 1,
    connectTimeoutMs: PROBE_TIMEOUT_MS,
    statementTimeoutMs: PROBE_TIMEOUT_MS,
  });
  // An idle connection the database dropped must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  return {
    pendingMigrations: () => pendingVersions(pool, POSTGRES_MIGRATIONS),
    async liveJobCounts() {
      const result = await pool.query(
        "SELECT state, COUNT(*)::int AS n FROM training_jobs WHERE state = ANY($1) GROUP BY state",
        [LIVE_STATES],
      );
      return countsByState(result.rows as { state: string; n: number }[]);
    },
    close: () => pool.end(),
  };
}

function sqliteProbe(file: string): StoreProbe {
  let db: DatabaseSync | undefined;
  // Opened at the first question: the server has created and migrated the file by then.
  const open = () => (db ??= new DatabaseSync(file, { readOnly: true, timeout: PROBE_TIMEOUT_MS }));
  return {
    async pendingMigrations() {
      const done = new Set(appliedVersions(open()));
      return SQLITE_MIGRATIONS.filter((m) => !done.has(m.version)).map((m) => m.version);
    },
    async liveJobCounts() {
      const placeholders = LIVE_STATES.map(() => "?").join(", ");
      const rows = open()
        .prepare(`SELECT state, COUNT(*) AS n FROM training_jobs WHERE state IN (${placeholders}) GROUP BY state`)
        .all(...LIVE_STATES);
      return countsByState(rows as { state: string; n: number }[]);
    },
    async close() {
      db?.close();
    },
  };
}

function countsByState(rows: { state: string; n: number }[]): Record<string, number> {
  const counts = Object.fromEntries(LIVE_STATES.map((state) => [state, 0]));
  for (const row of rows) counts[row.state] = Number(row.n);
  return counts;
}
