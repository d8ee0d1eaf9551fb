/** Usage charges in PostgreSQL: each charge is a record and a balance change, written together. */
import type pg from "pg";
import { ApiError } from "../../http/errors.ts";
import type { UsageCharge, UsageStore } from "../store.ts";
import { inTransaction, pgCall, queryOne } from "./database.ts";

export class PostgresUsageStore implements UsageStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  charge(charge: UsageCharge): Promise<{ balanceMicros: number }> {
    if (!Number.isSafeInteger(charge.amountMicros) || charge.amountMicros < 0) {
      return Promise.reject(new RangeError(`A charge is a whole, non-negative number of micro-units, not ${charge.amountMicros}`));
    }
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        // The UPDATE locks the account row until COMMIT: concurrent charges from any number
        // of processes are applied one after the other, none lost.
        const updated = await queryOne(db, "UPDATE accounts SET balance_micros = balance_micros - $1 WHERE id = $2 RETURNING balance_micros", [charge.amountMicros, charge.accountId]);
        if (updated === undefined) throw new ApiError("NOT_FOUND", `No account ${charge.accountId}.`);
        await db.query("INSERT INTO usage_records (account_id, key_id, kind, amount_micros, at_ms) VALUES ($1, $2, $3, $4, $5)", [
          charge.accountId,
          charge.keyId,
          charge.kind,
          charge.amountMicros,
          charge.at.getTime(),
        ]);
        return { balanceMicros: Number(updated.balance_micros) };
      }),
    );
  }

  spentSince(accountId: string, since: Date): Promise<number> {
    return pgCall(async () => {
      const row = await queryOne(this.#pool, "SELECT COALESCE(SUM(amount_micros), 0) AS spent FROM usage_records WHERE account_id = $1 AND at_ms >= $2", [accountId, since.getTime()]);
      return Number(row?.spent ?? 0);
    });
  }
}
