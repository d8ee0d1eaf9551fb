/**
 * The scale-out store: one PostgreSQL database shared by any number of server processes
 * and training workers (`DATABASE_URL`). Records live in PostgreSQL; files (dataset
 * versions, checkpoints, adapters) stay under DATA_DIR, which must then be one directory
 * that every process mounts (README, "Scaling out").
 *
 * Opening brings the schema up to date (postgres/migrations.ts, safe when many processes
 * start at once) unless told not to, in which case it refuses a schema that is behind.
 */
import type pg from "pg";
import { PostgresAccountStore } from "./postgres/accounts.ts";
import { PostgresApiKeyStore } from "./postgres/api-keys.ts";
import { createPool, POSTGRES_DEFAULTS, type PostgresSettings } from "./postgres/database.ts";
import { PostgresDatasetStore } from "./postgres/datasets.ts";
import { PostgresFineTuningStore } from "./postgres/fine-tuning.ts";
import { migrate, pendingVersions } from "./postgres/migrations.ts";
import { PostgresOwnerStore } from "./postgres/owners.ts";
import { PostgresRateWindowStore } from "./postgres/rate-windows.ts";
import { PostgresUsageStore } from "./postgres/usage.ts";
import type { VersionedStore } from "./store.ts";
import { PostgresCacheVersionStore } from "./postgres/cache-version.ts";

export interface PostgresStoreOptions extends Partial<PostgresSettings> {
  /** Apply pending migrations on open (default true); false: refuse to open a schema that is behind. */
  migrate?: boolean;
}

export async function openPostgresStore(
  databaseUrl: string,
  dataDir: string,
  options: PostgresStoreOptions = {},
): Promise<VersionedStore> {
  const { migrate: migrateOnOpen = true, ...settings } = options;
  const pool = createPool(databaseUrl, { ...POSTGRES_DEFAULTS, ...definedOnly(settings) });
  try {
    if (migrateOnOpen) {
      await migrate(pool);
    } else {
      const pending = await pendingVersions(pool);
      if (pending.length > 0)
        throw new Error(
          `the database schema is behind (migrations ${pending.join(", ")} not applied); run \`npm run migrate\` first`,
        );
    }
  } catch (error) {
    await pool.end();
    throw error;
  }
  return postgresStore(pool, dataDir);
}

/** The store over an open pool; `close()` ends the pool. */
export function postgresStore(pool: pg.Pool, dataDir: string): VersionedStore {
  let closed: Promise<void> | undefined;
  return {
    accounts: new PostgresAccountStore(pool),
    apiKeys: new PostgresApiKeyStore(pool),
    usage: new PostgresUsageStore(pool),
    rateWindows: new PostgresRateWindowStore(pool),
    datasets: new PostgresDatasetStore(pool, dataDir),
    fineTuning: new PostgresFineTuningStore(pool),
    owners: new PostgresOwnerStore(pool),
    cacheVersion: new PostgresCacheVersionStore(pool),
    close: () => (closed ??= pool.end()),
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
