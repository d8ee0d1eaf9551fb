/**
 * Tells a process's caches when what they hold may have changed in the store, and whether
 * they may be trusted at all (README "Caches and consistency").
 *
 * The store keeps a version counter that every cached kind of change bumps in its own
 * transaction (store.ts CacheVersionStore). This feed reads it every `pollMs` and, when it
 * moved, calls the listeners (which drop what they hold) before it records the poll as
 * verified. A cache answers from memory only while `trusted()`: while the last poll that
 * succeeded *started* at most `maxStaleMs` ago. So a change committed at time t is seen
 * by every request that starts at t + maxStaleMs or later, whether polls are slow, late or
 * failing (then caches read through to the store, which answers or is unavailable).
 */
import type { CacheVersionStore } from "../store.ts";

export interface ChangeFeedOptions {
  /** How often the version is read (default 250 ms): the usual staleness. */
  pollMs: number;
  /** The bound: the most a cached answer may lag a committed change (default 1 s). */
  maxStaleMs: number;
}

export const CHANGE_FEED_DEFAULTS: ChangeFeedOptions = { pollMs: 250, maxStaleMs: 1_000 };

export class ChangeFeed {
  readonly #source: CacheVersionStore;
  readonly #options: ChangeFeedOptions;
  readonly #listeners: (() => void)[] = [];
  #version: number | undefined;
  /** When the last successful poll started (performance.now() milliseconds). */
  #verifiedFrom = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #closed = false;

  constructor(source: CacheVersionStore, options: Partial<ChangeFeedOptions> = {}) {
    this.#source = source;
    this.#options = { ...CHANGE_FEED_DEFAULTS, ...options };
    if (this.#options.pollMs >= this.#options.maxStaleMs)
      throw new RangeError("pollMs must be below maxStaleMs, or the caches are never trusted");
  }

  get maxStaleMs(): number {
    return this.#options.maxStaleMs;
  }

  /** Starts polling; resolves after the first poll (failed or not). */
  start(): Promise<void> {
    const first = this.poll();
    this.#schedule();
    return first;
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Whether cached answers are at most `maxStaleMs` behind the store now. */
  trusted(): boolean {
    return performance.now() - this.#verifiedFrom <= this.#options.maxStaleMs;
  }

  /** Reads the version once (one poll at a time; a caller during a poll waits for it). */
  poll(): Promise<void> {
    this.#polling ??= this.#readVersion().finally(() => (this.#polling = undefined));
    return this.#polling;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  async #readVersion(): Promise<void> {
    const started = performance.now();
    let version: number;
    try {
      version = await this.#source.current();
    } catch {
      return; // the store is unavailable: trust runs out, and requests read through to the store
    }
    if (version !== this.#version) {
      this.#version = version;
      for (const listener of this.#listeners) listener();
    }
    this.#verifiedFrom = Math.max(this.#verifiedFrom, started);
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      void this.poll().finally(() => this.#schedule());
    }, this.#options.pollMs);
    this.#timer.unref();
  }
}
