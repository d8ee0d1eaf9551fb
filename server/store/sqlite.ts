/**
 * The embedded store: one SQLite file, `DATA_DIR/service.db`, opened in WAL mode and
 * brought up to the current schema on open. Several processes may open the same file.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { VersionedStore } from "./store.ts";
import { SqliteCacheVersionStore } from "./sqlite/cache-version.ts";
import { SqliteAccountStore } from "./sqlite/accounts.ts";
import { SqliteApiKeyStore } from "./sqlite/api-keys.ts";
import { SqliteDatasetStore } from "./sqlite/datasets.ts";
import { SqliteFineTuningStore } from "./sqlite/fine-tuning.ts";
import { openDatabase } from "./sqlite/database.ts";
import { migrate } from "./sqlite/migrations.ts";
import { SqliteOwnerStore } from "./sqlite/owners.ts";
import { SqliteRateWindowStore } from "./sqlite/rate-windows.ts";
import { SqliteUsageStore } from "./sqlite/usage.ts";

export const DATABASE_FILE = "service.db";

export async function openSqliteStore(dataDir: string): Promise<VersionedStore> {
  mkdirSync(dataDir, { recursive: true });
  const db = openDatabase(path.join(dataDir, DATABASE_FILE));
  try {
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return {
    accounts: new SqliteAccountStore(db),
    apiKeys: new SqliteApiKeyStore(db),
    usage: new SqliteUsageStore(db),
    rateWindows: new SqliteRateWindowStore(db),
    datasets: new SqliteDatasetStore(db, dataDir),
    fineTuning: new SqliteFineTuningStore(db),
    owners: new SqliteOwnerStore(db),
    cacheVersion: new SqliteCacheVersionStore(db),
    close: async () => {
      if (db.isOpen) db.close();
    },
  };
}
