/** Usage charges in SQLite: each charge is a record and a balance change, written together. */
import type { DatabaseSync } from "node:sqlite";
import { ApiError } from "../../http/errors.ts";
import type { UsageCharge, UsageStore } from "../store.ts";
import { inTransaction, storeCall } from "./database.ts";

export class SqliteUsageStore implements UsageStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  charge(charge: UsageCharge): Promise<{ balanceMicros: number }> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        if (!Number.isSafeInteger(charge.amountMicros) || charge.amountMicros < 0) {
          throw new RangeError(`A charge is a whole, non-negative number of micro-units, not ${charge.amountMicros}`);
        }
        // The balance update comes first: when the account is missing nothing is written.
        const updated = this.#db
          .prepare("UPDATE accounts SET balance_micros = balance_micros - ? WHERE id = ? RETURNING balance_micros")
          .get(charge.amountMicros, charge.accountId);
        if (updated === undefined) throw new ApiError("NOT_FOUND", `No account ${charge.accountId}.`);
        this.#db
          .prepare("INSERT INTO usage_records (account_id, key_id, kind, amount_micros, at_ms) VALUES (?, ?, ?, ?, ?)")
          .run(charge.accountId, charge.keyId, charge.kind, charge.amountMicros, charge.at.getTime());
        return { balanceMicros: Number(updated.balance_micros) };
      }),
    );
  }

  spentSince(accountId: string, since: Date): Promise<number> {
    return storeCall(() => {
      const row = this.#db
        .prepare("SELECT COALESCE(SUM(amount_micros), 0) AS spent FROM usage_records WHERE account_id = ? AND at_ms >= ?")
        .get(accountId, since.getTime());
      return Number(row?.spent ?? 0);
    });
  }
}
