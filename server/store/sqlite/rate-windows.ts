/** Per-account request windows in SQLite, for the requests-per-minute limit. */
import type { DatabaseSync } from "node:sqlite";
import type { RateWindow, RateWindowStore } from "../store.ts";
import { storeCall } from "./database.ts";

export class SqliteRateWindowStore implements RateWindowStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  hit(accountId: string, now: Date, lengthMs: number, count = 1): Promise<RateWindow> {
    const nowMs = now.getTime();
    return storeCall(() => {
      // One upsert reads and counts atomically, so concurrent requests from several
      // processes are each counted once. (SET expressions all see the row's old values.)
      const row = this.#db
        .prepare(
          `INSERT INTO rate_windows (account_id, start_ms, count) VALUES (:account, :now, :count)
           ON CONFLICT (account_id) DO UPDATE SET
             start_ms = CASE WHEN start_ms + :length <= :now THEN :now ELSE start_ms END,
             count = CASE WHEN start_ms + :length <= :now THEN :count ELSE count + :count END
           RETURNING start_ms, count`,
        )
        .get({ account: accountId, now: nowMs, length: lengthMs, count });
      return { start: new Date(Number(row?.start_ms)), count: Number(row?.count) };
    });
  }
}
