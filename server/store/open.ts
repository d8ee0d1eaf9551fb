/**
 * Opens the store the configuration names: PostgreSQL when a database URL is given (many
 * processes, many machines), else the embedded SQLite file in the data directory.
 * The server, the training worker, the admin command and `npm run migrate` all open the
 * store through here, so they always agree on which one it is.
 */
import { openPostgresStore, type PostgresStoreOptions } from "./postgres.ts";
import type { AllSettings } from "../settings/parse.ts";
import { openSqliteStore } from "./sqlite.ts";
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

/** The settings the store is opened with (settings/table.ts). */
export type StoreSettings = Pick<
  AllSettings,
  | "DATA_DIR"
  | "DATABASE_URL"
  | "PG_POOL_SIZE"
  | "PG_CONNECT_TIMEOUT_MS"
  | "PG_STATEMENT_TIMEOUT_MS"
  | "MIGRATE_ON_START"
>;

export function storeConfig(settings: StoreSettings): StoreConfig {
  return {
    dataDir: settings.DATA_DIR,
    databaseUrl: settings.DATABASE_URL,
    postgres: {
      poolSize: settings.PG_POOL_SIZE,
      connectTimeoutMs: settings.PG_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: settings.PG_STATEMENT_TIMEOUT_MS,
      migrate: settings.MIGRATE_ON_START,
    },
  };
}
