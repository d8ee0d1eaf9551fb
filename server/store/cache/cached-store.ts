/**
 * The store as a server process uses it: API keys, accounts and each account's fine-tuned
 * models are answered from memory, usage charges are committed in groups, and the day's
 * spend is counted in process. README "Caches and consistency" states the bounds:
 *
 * - a key, an account or a model changed by any process (another server, a worker, the
 *   admin command) is seen within `maxStaleMs` (1 s; change-feed.ts says why it holds);
 *   a change made through this store is seen by this process at once;
 * - a balance or a day's spend changed by another process's charges is seen within
 *   `maxStaleMs` too: cached accounts are reread that long after they were read, and a
 *   charge committed here updates the balance at once (group-commit.ts);
 * - everything else passes straight through.
 */
import type { AccountModel, FineTuningStore } from "../fine-tuning.ts";
import type {
  Account,
  AccountStore,
  ApiKey,
  ApiKeyStore,
  Store,
  UsageCharge,
  UsageStore,
  VersionedStore,
} from "../store.ts";
import { ChangeFeed, type ChangeFeedOptions } from "./change-feed.ts";
import { GroupCommit } from "./group-commit.ts";
import { RecordCache } from "./record-cache.ts";

/** Records of each kind held at most (a bound on memory against, say, a flood of new keys). */
const MAX_ENTRIES = 100_000;

export interface CachedStore extends Store {
  /** Resolves once the first version read is done (caches answer from memory from then on). */
  readonly ready: Promise<void>;
}

export function withCaches(store: VersionedStore, options: Partial<ChangeFeedOptions> = {}): CachedStore {
  const feed = new ChangeFeed(store.cacheVersion, options);
  const keys = new RecordCache<string, ApiKey | undefined>(feed, { maxEntries: MAX_ENTRIES });
  const accounts = new RecordCache<string, Account | undefined>(feed, {
    maxEntries: MAX_ENTRIES,
    ttlMs: feed.maxStaleMs,
  });
  const models = new RecordCache<string, AccountModel[]>(feed, { maxEntries: MAX_ENTRIES });
  /** After a change made through this store: this process sees it at once. */
  const changed = <T>(result: T): T => {
    keys.clear();
    accounts.clear();
    models.clear();
    return result;
  };
  const spend = new SpendCounter(store.usage, feed.maxStaleMs);
  const group = new GroupCommit(store.usage, (charge, balanceMicros) => {
    accounts.update(charge.accountId, (account) => account && { ...account, balanceMicros });
    spend.committed(charge);
  });
  const ready = feed.start();
  return {
    ...store,
    ready,
    accounts: cachedAccounts(store.accounts, accounts, changed),
    apiKeys: cachedApiKeys(store.apiKeys, keys, changed),
    fineTuning: cachedFineTuning(store.fineTuning, models, changed),
    usage: {
      charge: (charge) => group.charge(charge),
      chargeMany: (charges) => store.usage.chargeMany(charges),
      spentSince: (accountId, since) => spend.spentSince(accountId, since),
    },
    close: async () => {
      feed.close();
      await group.flushed();
      await store.close();
    },
  };
}

type Changed = <T>(result: T) => T;
const isDefined = <T>(value: T | undefined): boolean => value !== undefined;

function cachedAccounts(
  inner: AccountStore,
  cache: RecordCache<string, Account | undefined>,
  changed: Changed,
): AccountStore {
  return {
    create: async (account) => changed(await inner.create(account)),
    get: (id) => cache.get(id, () => inner.get(id), isDefined),
    list: () => inner.list(),
    update: async (id, patch) => changed(await inner.update(id, patch)),
    importIfEmpty: async (entries) => changed(await inner.importIfEmpty(entries)),
  };
}

function cachedApiKeys(
  inner: ApiKeyStore,
  cache: RecordCache<string, ApiKey | undefined>,
  changed: Changed,
): ApiKeyStore {
  return {
    create: async (key) => changed(await inner.create(key)),
    // Misses are not kept: a flood of made-up keys must not fill the cache.
    findBySecretHash: (hash) => cache.get(hash, () => inner.findBySecretHash(hash), isDefined),
    list: (accountId) => inner.list(accountId),
    revoke: async (id) => changed(await inner.revoke(id)),
  };
}

function cachedFineTuning(
  inner: FineTuningStore,
  cache: RecordCache<string, AccountModel[]>,
  changed: Changed,
): FineTuningStore {
  const listModels = (accountId: string) => cache.get(accountId, () => inner.listModels(accountId));
  const overrides: Partial<FineTuningStore> = {
    listModels,
    findModel: async (accountId, modelId) => (await listModels(accountId)).find((m) => m.modelId === modelId),
    completeJob: async (...args) => changed(await inner.completeJob(...args)),
    // A cancel charges the account in the same transaction: its balance is read afresh.
    updateJob: async (...args) =>
      args[5] === undefined ? inner.updateJob(...args) : changed(await inner.updateJob(...args)),
  };
  return delegate(inner, overrides);
}

/** `target` with some methods replaced; the others called on `target` itself (they use private fields). */
function delegate<T extends object>(target: T, overrides: Partial<T>): T {
  // Each method bound once, and bound again if the target's method is replaced (a test's
  // stand-in for a store that fails), so the proxy never serves a stale method.
  const bound = new Map<PropertyKey, { method: unknown; bound: unknown }>();
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      let entry = bound.get(property);
      if (entry?.method !== value) bound.set(property, (entry = { method: value, bound: value.bind(object) }));
      return entry.bound;
    },
  });
}

/**
 * Each account's spend since the start of its budget period, read from the store at most
 * once per `ttlMs` and counted up by every charge this process commits in between; another
 * process's charges are seen at the next read.
 */
class SpendCounter {
  readonly #usage: UsageStore;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, { sinceMs: number; spentMicros: number; readAtMs: number }>();

  constructor(usage: UsageStore, ttlMs: number) {
    this.#usage = usage;
    this.#ttlMs = ttlMs;
  }

  async spentSince(accountId: string, since: Date): Promise<number> {
    const entry = this.#entries.get(accountId);
    const sinceMs = since.getTime();
    if (entry && entry.sinceMs === sinceMs && performance.now() - entry.readAtMs <= this.#ttlMs)
      return entry.spentMicros;
    const readAtMs = performance.now();
    const spentMicros = await this.#usage.spentSince(accountId, since);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(accountId, { sinceMs, spentMicros, readAtMs });
    return spentMicros;
  }

  committed(charge: UsageCharge): void {
    const entry = this.#entries.get(charge.accountId);
    if (entry && charge.at.getTime() >= entry.sinceMs) entry.spentMicros += charge.amountMicros;
  }
}
