/** Usage charges in SQLite: each charge is a record and a balance change, written together. */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { StoreError } from "../errors.ts";
import type { ChargeOutcome, UsageCharge, UsageStore } from "../store.ts";
import { inTransaction, storeCall } from "./database.ts";

const DEBIT = "UPDATE accounts SET balance_micros = balance_micros - ? WHERE id = ? RETURNING balance_micros";
const RECORD = "INSERT INTO usage_records (account_id, key_id, kind, amount_micros, at_ms) VALUES (?, ?, ?, ?, ?)";

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

  /**
   * The batch in one transaction, as the PostgreSQL store does it: each account's balance
   * goes down once, by the sum of its charges, and a record is written for every charge of
   * an account that exists. One UPDATE per account instead of one per charge: in a CPU
   * profile under `POST /v1/responses` the batches went from 7.9 % of the samples to 6.4 %.
   */
  chargeMany(charges: readonly UsageCharge[]): Promise<ChargeOutcome[]> {
    return storeCall(() => {
      charges.forEach(checkAmount);
      return inTransaction(this.#db, () => {
        const { debit, record } = this.#prepared();
        // BigInt: the sum of safe integers need not be one.
        const totals = new Map<string, bigint>();
        for (const c of charges) totals.set(c.accountId, (totals.get(c.accountId) ?? 0n) + BigInt(c.amountMicros));
        const balances = new Map<string, number>();
        for (const [accountId, total] of totals) {
          const updated = debit.get(total, accountId);
          if (updated !== undefined) balances.set(accountId, Number(updated.balance_micros));
        }
        // Every charge of an account gets the balance after the whole batch.
        return charges.map((charge): ChargeOutcome => {
          const balanceMicros = balances.get(charge.accountId);
          if (balanceMicros === undefined)
            return { type: "refused", error: new StoreError("not-found", `No account ${charge.accountId}.`) };
          record.run(charge.accountId, charge.keyId, charge.kind, charge.amountMicros, charge.at.getTime());
          return { type: "charged", balanceMicros };
        });
      });
    });
  }

  #record(charge: UsageCharge): { balanceMicros: number } {
    return recordWith(this.#prepared(), charge);
  }

  /** Prepared once: compiling the two statements cost more than running them (CPU profile). */
  #prepared(): { debit: StatementSync; record: StatementSync } {
    return (this.#statements ??= { debit: this.#db.prepare(DEBIT), record: this.#db.prepare(RECORD) });
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

/**
 * One charge inside the caller's transaction (a job's bill, written as the job ends): the
 * balance and the record, as `charge` writes them.
 */
export function recordCharge(db: DatabaseSync, charge: UsageCharge): { balanceMicros: number } {
  checkAmount(charge);
  return recordWith(
    {
      debit: db.prepare(DEBIT),
      record: db.prepare(RECORD),
    },
    charge,
  );
}

/** The balance update comes first: when the account is missing nothing is written. */
function recordWith(
  statements: { debit: StatementSync; record: StatementSync },
  charge: UsageCharge,
): { balanceMicros: number } {
  const updated = statements.debit.get(charge.amountMicros, charge.accountId);
  if (updated === undefined) throw new StoreError("not-found", `No account ${charge.accountId}.`);
  statements.record.run(charge.accountId, charge.keyId, charge.kind, charge.amountMicros, charge.at.getTime());
  return { balanceMicros: Number(updated.balance_micros) };
}

function checkAmount(charge: UsageCharge): void {
  if (!Number.isSafeInteger(charge.amountMicros) || charge.amountMicros < 0) {
    throw new RangeError(`A charge is a whole, non-negative number of micro-units, not ${charge.amountMicros}`);
  }
}
