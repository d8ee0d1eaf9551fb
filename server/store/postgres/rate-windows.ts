/** Per-account request windows in PostgreSQL, shared by every server process. */
import type pg from "pg";
import type { RateWindow, RateWindowStore } from "../store.ts";
import { pgCall, queryOne } from "./database.ts";

export class PostgresRateWindowStore implements RateWindowStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  hit(accountId: string, now: Date, lengthMs: number, count = 1): Promise<RateWindow> {
    return pgCall(async () => {
      // One upsert reads and counts atomically (ON CONFLICT DO UPDATE locks the row), so
      // concurrent requests from several processes are each counted once.
      const row = await queryOne(
        this.#pool,
        `INSERT INTO rate_windows AS w (account_id, start_ms, count) VALUES ($1, $2, $4)
         ON CONFLICT (account_id) DO UPDATE SET
           start_ms = CASE WHEN w.start_ms + $3 <= $2 THEN $2 ELSE w.start_ms END,
           count = CASE WHEN w.start_ms + $3 <= $2 THEN $4 ELSE w.count + $4 END
         RETURNING start_ms, count`,
        [accountId, now.getTime(), lengthMs, count],
      );
      return { start: new Date(Number(row?.start_ms)), count: Number(row?.count) };
    });
  }
}
