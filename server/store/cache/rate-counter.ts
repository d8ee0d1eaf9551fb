/**
 * Requests per minute counted in process and added to the store's shared window in
 * batches, instead of one write per request (README "Caches and consistency").
 *
 * Per account, a process knows the window's start and its count in the store as of its
 * last write (`synced`), plus the requests it admitted since (`pending`, written every
 * `flushMs`). It admits a request on its own while `synced + pending` is below the limit
 * and `pending` is below the account's allowance (a twentieth of the limit, at least 1);
 * otherwise it writes first and decides on the count the store returns. So each process
 * holds at most `allowance` admitted requests the others cannot see yet, and across N
 * processes an account gets about `limit + (N − 1) × allowance` requests in a window:
 * exactly that bound when the store answers writes in the order it commits them, a little
 * more when writes overtake each other, less than `limit + N × allowance`
 * (test/store/rate-counter.test.ts, README "Caches and consistency"). One process alone is exact.
 */
import type { RateWindowStore } from "../store.ts";

export const RATE_FLUSH_MS = 100;

interface Window {
  startMs: number;
  /** The store's count for the window as of this process's last write. */
  synced: number;
  /** Admitted here since, not yet written. */
  pending: number;
  /** Admitted here and being written now: not in `synced` yet, nor seen by other processes. */
  writing: number;
  /** When the first of them was admitted: they are written at that time. */
  pendingFromMs: number;
}

/** A write's answer: the window as the store counts it, and what this process admitted that the count may lack. */
interface Written {
  startMs: number;
  count: number;
  unseen: number;
}

export interface Admission {
  allowed: boolean;
  /** When the window ends (Retry-After for a refusal). */
  windowEndMs: number;
}

/** Requests one process may admit without the store seeing them: 5 % of the limit, at least 1. */
export function rateAllowance(limit: number): number {
  return Math.max(1, Math.floor(limit / 20));
}

export class RateCounter {
  readonly #store: RateWindowStore;
  readonly #lengthMs: number;
  readonly #flushMs: number;
  readonly #windows = new Map<string, Window>();
  /** Writes under way, so that flush() also waits for one its timer began. */
  readonly #writes = new Set<Promise<unknown>>();
  #timer: NodeJS.Timeout | undefined;

  constructor(store: RateWindowStore, lengthMs: number, flushMs = RATE_FLUSH_MS) {
    this.#store = store;
    this.#lengthMs = lengthMs;
    this.#flushMs = flushMs;
  }

  async admit(accountId: string, limit: number, nowMs: number): Promise<Admission> {
    const window = this.#windows.get(accountId);
    if (window !== undefined && nowMs < window.startMs + this.#lengthMs) {
      const windowEndMs = window.startMs + this.#lengthMs;
      if (window.synced + window.writing + window.pending >= limit) return { allowed: false, windowEndMs };
      if (window.writing + window.pending < rateAllowance(limit)) {
        if (window.pending++ === 0) window.pendingFromMs = nowMs;
        this.#scheduleFlush();
        return { allowed: true, windowEndMs };
      }
    }
    // A window this process does not know yet, one that ended, or its allowance used up.
    // The store's count lacks what this process admitted that is not written yet (another
    // write of it still under way, requests admitted meanwhile): counting those too keeps
    // this process's unseen requests out of the decision, so only the other processes'
    // allowances can overshoot (3 counters admitted limit + 3 × allowance without it).
    const stored = await this.#write(accountId, nowMs, 1);
    return { allowed: stored.count + stored.unseen <= limit, windowEndMs: stored.startMs + this.#lengthMs };
  }

  /**
   * Writes every pending count now, and waits for writes already under way (tests, and a
   * process about to stop): when it returns, the store has every request admitted here.
   */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const now = Date.now();
    const underWay = [...this.#writes].map((write) => write.catch(() => undefined));
    await Promise.all([
      ...underWay,
      ...[...this.#windows].filter(([, w]) => w.pending > 0).map(([id]) => this.#write(id, now, 0)),
    ]);
    for (const [id, w] of this.#windows)
      if (w.pending === 0 && now >= w.startMs + this.#lengthMs) this.#windows.delete(id);
  }

  /** Adds this process's pending requests and `extra` more to the store; learns the window's count. */
  #write(accountId: string, nowMs: number, extra: number): Promise<Written> {
    const write = this.#writeNow(accountId, nowMs, extra);
    this.#writes.add(write);
    const forget = () => void this.#writes.delete(write);
    write.then(forget, forget);
    return write;
  }

  async #writeNow(accountId: string, nowMs: number, extra: number): Promise<Written> {
    const window = this.#windows.get(accountId);
    let pending = window?.pending ?? 0;
    const pendingFrom = window?.pendingFromMs ?? nowMs;
    if (window) {
      window.pending = 0;
      window.writing += pending;
    }
    const written = pending;
    try {
      let stored: { startMs: number; count: number } | undefined;
      // Requests admitted in a window that has ended since are written at their own time.
      if (pending > 0 && window !== undefined && nowMs >= window.startMs + this.#lengthMs) {
        stored = await this.#hit(accountId, pendingFrom, pending);
        pending = 0;
      }
      if (pending + extra > 0) stored = await this.#hit(accountId, nowMs, pending + extra);
      pending = 0;
      const current = this.#windows.get(accountId);
      const unseen = current === undefined ? 0 : Math.max(0, current.writing - written) + current.pending;
      return { ...(stored ?? { startMs: window?.startMs ?? nowMs, count: window?.synced ?? 0 }), unseen };
    } catch (error) {
      const current = this.#windows.get(accountId);
      if (current && pending > 0) current.pending += pending; // counted again at the next write
      throw error;
    } finally {
      const current = this.#windows.get(accountId);
      if (current) current.writing = Math.max(0, current.writing - written);
    }
  }

  async #hit(accountId: string, atMs: number, count: number): Promise<{ startMs: number; count: number }> {
    const window = await this.#store.hit(accountId, new Date(atMs), this.#lengthMs, count);
    const stored = { startMs: window.start.getTime(), count: window.count };
    const known = this.#windows.get(accountId);
    if (known && known.startMs === stored.startMs) {
      known.synced = Math.max(known.synced, stored.count);
    } else {
      const carried = {
        pending: known?.pending ?? 0,
        writing: known?.writing ?? 0,
        pendingFromMs: known?.pendingFromMs ?? atMs,
      };
      this.#windows.set(accountId, { startMs: stored.startMs, synced: stored.count, ...carried });
    }
    return stored;
  }

  #scheduleFlush(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch(() => undefined); // the store is unavailable: the counts stay pending
    }, this.#flushMs);
    this.#timer.unref();
  }
}
