/** Usage charges in PostgreSQL: each charge is a record and a balance change, written together. */
import type pg from "pg";
import { StoreError } from "../errors.ts";
import type { ChargeOutcome, UsageCharge, UsageStore } from "../store.ts";
import { inTransaction, pgCall, query, queryOne, type Db } from "./database.ts";

/**
 * A batch of charges in one statement: each account's balance goes down by the sum of its
 * charges, and a record is inserted for every charge of an account that exists; returns
 * the balance after the batch of each account charged.
 */
const GROUP_CHARGE = `
  WITH batch AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) WITH ORDINALITY
      AS b (account_id, key_id, kind, amount_micros, at_ms, n)
  ), charged AS (
    UPDATE accounts a SET balance_micros = a.balance_micros - t.total
    FROM (SELECT account_id, SUM(amount_micros) AS total FROM batch GROUP BY account_id) t
    WHERE a.id = t.account_id
    RETURNING a.id, a.balance_micros
  ), recorded AS (
    INSERT INTO usage_records (account_id, key_id, kind, amount_micros, at_ms)
    SELECT b.account_id, b.key_id, b.kind, b.amount_micros, b.at_ms FROM batch b JOIN charged c ON c.id = b.account_id ORDER BY b.n
  )
  SELECT id, balance_micros FROM charged`;

/**
 * One charge inside the caller's transaction (`charge` alone, or a job's bill written as the
 * job ends): the balance and the record together.
 */
export async function recordCharge(db: Db, charge: UsageCharge): Promise<{ balanceMicros: number }> {
  const updated = await queryOne(
    db,
    "UPDATE accounts SET balance_micros = balance_micros - $1 WHERE id = $2 RETURNING balance_micros",
    [charge.amountMicros, charge.accountId],
  );
  if (updated === undefined) throw new StoreError("not-found", `No account ${charge.accountId}.`);
  await db.query(
    "INSERT INTO usage_records (account_id, key_id, kind, amount_micros, at_ms) VALUES ($1, $2, $3, $4, $5)",
    [charge.accountId, charge.keyId, charge.kind, charge.amountMicros, charge.at.getTime()],
  );
  return { balanceMicros: Number(updated.balance_micros) };
}

export class PostgresUsageStore implements UsageStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  charge(charge: UsageCharge): Promise<{ balanceMicros: number }> {
    if (!Number.isSafeInteger(charge.amountMicros) || charge.amountMicros < 0) {
      return Promise.reject(
        new RangeError(`A charge is a whole, non-negative number of micro-units, not ${charge.amountMicros}`),
      );
    }
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        // The UPDATE locks the account row until COMMIT: concurrent charges from any number
        // of processes are applied one after the other, none lost.
        return recordCharge(db, charge);
      }),
    );
  }

  chargeMany(charges: readonly UsageCharge[]): Promise<ChargeOutcome[]> {
    const bad = charges.find((c) => !Number.isSafeInteger(c.amountMicros) || c.amountMicros < 0);
    if (bad)
      return Promise.reject(
        new RangeError(`A charge is a whole, non-negative number of micro-units, not ${bad.amountMicros}`),
      );
    const accountIds = [...new Set(charges.map((c) => c.accountId))].sort();
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        // The account rows are locked in one order (by id) before anything is written, so
        // two processes committing batches for the same accounts never deadlock.
        await db.query("SELECT id FROM accounts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE", [accountIds]);
        const charged = await query(db, GROUP_CHARGE, [
          charges.map((c) => c.accountId),
          charges.map((c) => c.keyId),
          charges.map((c) => c.kind),
          charges.map((c) => c.amountMicros),
          charges.map((c) => c.at.getTime()),
        ]);
        const balances = new Map(charged.map((row) => [String(row.id), Number(row.balance_micros)]));
        return charges.map((c): ChargeOutcome => {
          const balanceMicros = balances.get(c.accountId);
          return balanceMicros === undefined
            ? { type: "refused", error: new StoreError("not-found", `No account ${c.accountId}.`) }
            : { type: "charged", balanceMicros };
        });
      }),
    );
  }

  spentSince(accountId: string, since: Date): Promise<number> {
    return pgCall(async () => {
      const row = await queryOne(
        this.#pool,
        "SELECT COALESCE(SUM(amount_micros), 0) AS spent FROM usage_records WHERE account_id = $1 AND at_ms >= $2",
        [accountId, since.getTime()],
      );
      return Number(row?.spent ?? 0);
    });
  }
}
