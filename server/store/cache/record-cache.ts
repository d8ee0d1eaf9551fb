/**
 * One kind of cached record (keys by secret hash, accounts by id, an account's models),
 * dropped whole when the change feed says the store changed. A record read from the store
 * is kept only if nothing was dropped while it was being read: a read that began before a
 * change and ended after the feed saw it would otherwise put the old record back.
 */
import type { ChangeFeed } from "./change-feed.ts";

export interface RecordCacheOptions {
  /** Also reread a record this long after it was read (accounts: their balance); undefined: never. */
  ttlMs?: number;
  /** Held at most; past it the cache starts empty again (a bound on memory, not a policy). */
  maxEntries: number;
}

interface Entry<V> {
  value: V;
  readAtMs: number;
}

export class RecordCache<K, V> {
  readonly #feed: ChangeFeed;
  readonly #options: RecordCacheOptions;
  readonly #entries = new Map<K, Entry<V>>();
  /** Bumped on every drop; a read started under an older generation is not kept. */
  #generation = 0;

  constructor(feed: ChangeFeed, options: RecordCacheOptions) {
    this.#feed = feed;
    this.#options = options;
    feed.onChange(() => this.clear());
  }

  /** The cached value, or `load()`'s (kept unless `keep` says no, e.g. for a miss). */
  async get(key: K, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    const trusted = this.#feed.trusted();
    const entry = trusted ? this.#entries.get(key) : undefined;
    if (entry !== undefined && !this.#expired(entry)) return entry.value;
    const generation = this.#generation;
    const readAtMs = performance.now();
    const value = await load();
    if (trusted && generation === this.#generation && keep(value)) this.#set(key, { value, readAtMs });
    return value;
  }

  /** Changes a cached value in place (a balance a charge just returned); nothing when not cached. */
  update(key: K, change: (value: V) => V): void {
    const entry = this.#entries.get(key);
    if (entry !== undefined) entry.value = change(entry.value);
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }

  #expired(entry: Entry<V>): boolean {
    return this.#options.ttlMs !== undefined && performance.now() - entry.readAtMs > this.#options.ttlMs;
  }

  #set(key: K, entry: Entry<V>): void {
    if (this.#entries.size >= this.#options.maxEntries && !this.#entries.has(key)) this.#entries.clear();
    this.#entries.set(key, entry);
  }
}
