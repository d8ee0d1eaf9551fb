/**
 * Opens the store the configuration names: PostgreSQL when a database URL is given (many
 * processes, many machines), else the embedded SQLite file in the data directory.
 * The server, the training worker, the admin command and `npm run migrate` all open the
 * store through here, so they always agree on which one it is.
 */
import { openPostgresStore, type PostgresStoreOptions } from "./postgres.ts";
import { dataDirFromEnv, openSqliteStore } from "./sqlite.ts";
import type { VersionedStore } from "./store.ts";

export interface StoreConfig {
  /** Where files live (and, without a database URL, the SQLite database). */
  dataDir: string;
  /** `postgres://…`: use PostgreSQL. */
  databaseUrl?: string;
  postgres?: PostgresStoreOptions;
}

export function openStore(config: StoreConfig): Promise<VersionedStore> {
  return config.databaseUrl
    ? openPostgresStore(config.databaseUrl, config.dataDir, config.postgres)
    : openSqliteStore(config.dataDir);
}

/**
 * The store settings from the environment:
 *   DATA_DIR                 files (and the SQLite database); default ./data
 *   DATABASE_URL             postgres://user:password@host:port/database; unset: SQLite
 *   PG_POOL_SIZE             connections per process (default 10)
 *   PG_CONNECT_TIMEOUT_MS    longest wait for a connection (default 5000)
 *   PG_STATEMENT_TIMEOUT_MS  longest a statement may run (default 15000)
 *   MIGRATE_ON_START         `0`: do not migrate on start; refuse a schema that is behind (default 1)
 */
export function storeConfigFromEnv(env: Record<string, string | undefined> = process.env): StoreConfig {
  const databaseUrl = env.DATABASE_URL || undefined;
  return {
    dataDir: dataDirFromEnv(env),
    databaseUrl,
    postgres: {
      poolSize: positiveInteger(env, "PG_POOL_SIZE"),
      connectTimeoutMs: positiveInteger(env, "PG_CONNECT_TIMEOUT_MS"),
      statementTimeoutMs: positiveInteger(env, "PG_STATEMENT_TIMEOUT_MS"),
      migrate: env.MIGRATE_ON_START !== "0",
    },
  };
}

export function positiveInteger(env: Record<string, string | undefined>, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === "") return undefined;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1)
    throw new Error(`${name} must be a whole number of at least 1, not "${value}"`);
  return number;
}
