/**
 * `npm run migrate`: brings the store's schema up to date and says what it applied. With
 * DATABASE_URL set it migrates that PostgreSQL database (safe while other processes start:
 * an advisory lock lets one migrate at a time); without, the SQLite file in DATA_DIR.
 *
 * Servers and workers also migrate when they start unless MIGRATE_ON_START=0; with that
 * setting they refuse a schema that is behind, and this command is the deploy step.
 */
import { createPool, POSTGRES_DEFAULTS } from "./postgres/database.ts";
import { appliedVersions, migrate, MIGRATIONS } from "./postgres/migrations.ts";
import { readSettings } from "../settings/environment.ts";
import { storeConfig } from "./open.ts";
import { openSqliteStore } from "./sqlite.ts";

try {
  const config = storeConfig(readSettings("admin"));
  if (config.databaseUrl) {
    // The PG_* settings apply here as in every process: an operator who shortened the connect
    // timeout or raised the statement timeout for a long migration gets what they set.
    const { migrate: _ignored, ...poolSettings } = config.postgres ?? {};
    const pool = createPool(config.databaseUrl, { ...POSTGRES_DEFAULTS, ...poolSettings });
    try {
      const applied = await migrate(pool);
      const all = await appliedVersions(pool);
      console.log(
        `PostgreSQL schema at version ${Math.max(0, ...all)} of ${MIGRATIONS.length}; applied now: ${applied.length === 0 ? "none" : applied.join(", ")}.`,
      );
    } finally {
      await pool.end();
    }
  } else {
    // Opening the SQLite store applies its migrations (store/sqlite/migrations.ts).
    const store = await openSqliteStore(config.dataDir);
    await store.close();
    console.log(`SQLite schema in ${config.dataDir} is up to date.`);
  }
} catch (error) {
  console.error(`Migration failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
