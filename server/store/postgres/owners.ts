/** Heartbeats of the processes doing dataset work (server/datasets/owners.ts), in PostgreSQL. */
import type pg from "pg";
import type { OwnerStore } from "../store.ts";
import { pgCall, queryOne } from "./database.ts";

/** Heartbeats this long past their end are deleted: nobody asks about such an owner any more. */
const KEEP_MS = 24 * 3_600_000;

export class PostgresOwnerStore implements OwnerStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  heartbeat(owners: readonly string[], until: Date): Promise<void> {
    return pgCall(async () => {
      if (owners.length > 0) {
        await this.#pool.query(
          `INSERT INTO owner_heartbeats (owner, until_ms) SELECT unnest($1::text[]), $2
           ON CONFLICT (owner) DO UPDATE SET until_ms = GREATEST(owner_heartbeats.until_ms, EXCLUDED.until_ms)`,
          [owners, until.getTime()],
        );
      }
      await this.#pool.query("DELETE FROM owner_heartbeats WHERE until_ms < $1", [until.getTime() - KEEP_MS]);
    });
  }

  forget(owner: string): Promise<void> {
    return pgCall(async () => {
      await this.#pool.query("DELETE FROM owner_heartbeats WHERE owner = $1", [owner]);
    });
  }

  alive(owner: string, now: Date): Promise<boolean> {
    return pgCall(
      async () =>
        (await queryOne(this.#pool, "SELECT 1 FROM owner_heartbeats WHERE owner = $1 AND until_ms >= $2", [
          owner,
          now.getTime(),
        ])) !== undefined,
    );
  }
}
