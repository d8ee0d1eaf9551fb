/**
 * Heartbeats of the processes doing dataset work, in SQLite. A SQLite file is shared by
 * processes on one host only, where owners.ts tells a dead process by its pid; these rows
 * are kept anyway so that both stores behave alike.
 */
import type { DatabaseSync } from "node:sqlite";
import type { OwnerStore } from "../store.ts";
import { inTransaction, storeCall } from "./database.ts";

const KEEP_MS = 24 * 3_600_000;

export class SqliteOwnerStore implements OwnerStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  heartbeat(owners: readonly string[], until: Date): Promise<void> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const beat = this.#db.prepare(
          `INSERT INTO owner_heartbeats (owner, until_ms) VALUES (?, ?)
           ON CONFLICT (owner) DO UPDATE SET until_ms = MAX(until_ms, excluded.until_ms)`,
        );
        for (const owner of owners) beat.run(owner, until.getTime());
        this.#db.prepare("DELETE FROM owner_heartbeats WHERE until_ms < ?").run(until.getTime() - KEEP_MS);
      }),
    );
  }

  forget(owner: string): Promise<void> {
    return storeCall(() => {
      this.#db.prepare("DELETE FROM owner_heartbeats WHERE owner = ?").run(owner);
    });
  }

  alive(owner: string, now: Date): Promise<boolean> {
    return storeCall(
      () =>
        this.#db
          .prepare("SELECT 1 FROM owner_heartbeats WHERE owner = ? AND until_ms >= ?")
          .get(owner, now.getTime()) !== undefined,
    );
  }
}
