/**
 * Usage charges written in groups: every charge made while the previous group is being
 * committed (or within the same turn of the event loop) goes into the next group, one
 * transaction for all of them (store.ts UsageStore.chargeMany). A charge's promise resolves
 * only once its group is committed, and the inference handlers await it before they send
 * the end of their answer: an answered call's charge is in the database, and a crash
 * (kill -9) loses only charges of calls not answered yet. No timer delays a charge: under
 * light load each group holds one charge, under heavy load groups grow by themselves.
 */
import type { ChargeOutcome, UsageCharge, UsageStore } from "../store.ts";

interface Waiting {
  charge: UsageCharge;
  resolve(balance: { balanceMicros: number }): void;
  reject(error: unknown): void;
}

export class GroupCommit {
  readonly #store: UsageStore;
  readonly #committed: (charge: UsageCharge, balanceMicros: number) => void;
  #queue: Waiting[] = [];
  #running: Promise<void> | undefined;

  /** `committed` hears of every charge once it is in the store, with the balance after its group. */
  constructor(store: UsageStore, committed: (charge: UsageCharge, balanceMicros: number) => void) {
    this.#store = store;
    this.#committed = committed;
  }

  charge(charge: UsageCharge): Promise<{ balanceMicros: number }> {
    if (!Number.isSafeInteger(charge.amountMicros) || charge.amountMicros < 0) {
      return Promise.reject(
        new RangeError(`A charge is a whole, non-negative number of micro-units, not ${charge.amountMicros}`),
      );
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ charge, resolve, reject });
      this.#running ??= this.#drain();
    });
  }

  /** Resolves once every charge made so far is committed (or has failed). */
  async flushed(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    // Let the rest of this event-loop turn add its charges to the first group.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0) {
      const group = this.#queue;
      this.#queue = [];
      await this.#commit(group);
    }
    this.#running = undefined;
  }

  async #commit(group: Waiting[]): Promise<void> {
    let outcomes: ChargeOutcome[];
    try {
      outcomes = await this.#store.chargeMany(group.map((w) => w.charge));
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
      return;
    }
    group.forEach((waiting, i) => {
      const outcome = outcomes[i]!;
      if (outcome.type === "refused") return waiting.reject(outcome.error);
      this.#committed(waiting.charge, outcome.balanceMicros);
      waiting.resolve({ balanceMicros: outcome.balanceMicros });
    });
  }
}
