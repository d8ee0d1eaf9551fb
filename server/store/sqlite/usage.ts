/** Usage charges in SQLite: each charge is a record and a balance change, written together. */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { StoreError } from "../errors.ts";
import type { ChargeOutcome, UsageCharge, UsageStore } from "../store.ts";
import { inTransaction, storeCall } from "./database.ts";

export class SqliteUsageStore implements UsageStore {
  readonly #db: DatabaseSync;
  #statements: { debit: StatementSync; record: StatementSync } | undefined;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  charge(charge: UsageCharge): Promise<{ balanceMicros: number }> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        checkAmount(charge);
        return this.#record(charge);
      }),
    );
  }

  chargeMany(charges: readonly UsageCharge[]): Promise<ChargeOutcome[]> {
    return storeCall(() => {
      charges.forEach(checkAmount);
      const outcomes = inTransaction(this.#db, () =>
        charges.map((charge): ChargeOutcome => {
          try {
            return this.#record(charge);
          } catch (error) {
            if (error instanceof StoreError) return { error };
            throw error;
          }
        }),
      );
      // Every charge of an account gets the balance after the whole batch.
      const last = new Map(
        outcomes.flatMap((outcome, i) =>
          "balanceMicros" in outcome ? [[charges[i]!.accountId, outcome.balanceMicros] as const] : [],
        ),
      );
      return outcomes.map((outcome, i) =>
        "balanceMicros" in outcome ? { balanceMicros: last.get(charges[i]!.accountId)! } : outcome,
      );
    });
  }

  /** The balance update comes first: when the account is missing nothing is written. */
  #record(charge: UsageCharge): { balanceMicros: number } {
    // Prepared once: compiling the two statements cost more than running them (CPU profile).
    this.#statements ??= {
      debit: this.#db.prepare(
        "UPDATE accounts SET balance_micros = balance_micros - ? WHERE id = ? RETURNING balance_micros",
      ),
      record: this.#db.prepare(
        "INSERT INTO usage_records (account_id, key_id, kind, amount_micros, at_ms) VALUES (?, ?, ?, ?, ?)",
      ),
    };
    const updated = this.#statements.debit.get(charge.amountMicros, charge.accountId);
    if (updated === undefined) throw new StoreError("not-found", `No account ${charge.accountId}.`);
    this.#statements.record.run(charge.accountId, charge.keyId, charge.kind, charge.amountMicros, charge.at.getTime());
    return { balanceMicros: Number(updated.balance_micros) };
  }

  spentSince(accountId: string, since: Date): Promise<number> {
    return storeCall(() => {
      const row = this.#db
        .prepare(
          "SELECT COALESCE(SUM(amount_micros), 0) AS spent FROM usage_records WHERE account_id = ? AND at_ms >= ?",
        )
        .get(accountId, since.getTime());
      return Number(row?.spent ?? 0);
    });
  }
}

function checkAmount(charge: UsageCharge): void {
  if (!Number.isSafeInteger(charge.amountMicros) || charge.amountMicros < 0) {
    throw new RangeError(`A charge is a whole, non-negative number of micro-units, not ${charge.amountMicros}`);
  }
}
