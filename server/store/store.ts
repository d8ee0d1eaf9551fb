/**
 * The one storage interface of the server. Every method returns a Promise, so that the
 * embedded SQLite implementation (sqlite.ts) and the scale-out PostgreSQL one are
 * interchangeable behind it.
 *
 * The interface is split by concern: one sub-store per kind of record, each a property of
 * `Store`. Datasets, versions, jobs, idempotency records, metrics and models join the same
 * way, as further properties with their own interface.
 *
 * Money is held in integer micro-units (1 unit = 1 000 000), never in floating point, so
 * that sums of many small charges are exact; see money.ts for parsing and formatting.
 *
 * Methods throw `StoreError` (errors.ts), never an HTTP error: `not-found` for a missing
 * record the caller named, `already-exists` for a duplicate id, `unavailable` when the
 * database does not answer. The HTTP edge (server/http/store-errors.ts) maps each kind to
 * the envelope's code.
 */
import type { StoreError } from "./errors.ts";
import type { DatasetStore } from "./datasets.ts";
import type { FineTuningStore } from "./fine-tuning.ts";

export interface Account {
  id: string;
  /** A suspended account's keys are refused with TENANT_SUSPENDED. */
  suspended: boolean;
  /** Prepaid balance in micro-units; charges may take it below zero, calls then stop. */
  balanceMicros: number;
  /** Spend allowed per budget period (a UTC day) in micro-units; null: no budget. */
  budgetMicros: number | null;
  /** Requests allowed per minute; null: no limit. */
  requestsPerMinute: number | null;
  /** Model ids the account may call; null: every model. */
  allowedModels: string[] | null;
  /** The agreement version an operator recorded as accepted; null: none. */
  acceptedAgreementVersion: string | null;
  /** Whether a payment method is on file; paid models need one. */
  hasPaymentMethod: boolean;
  /** An operator may disable fine-tuning for an account. */
  fineTuningEnabled: boolean;
  createdAt: Date;
}

/** What an account is created with; fields left out take the defaults of `ACCOUNT_DEFAULTS`. */
export type NewAccount = Pick<Account, "id"> & Partial<Omit<Account, "id" | "createdAt">>;

/** The changeable fields of an account. */
export type AccountPatch = Partial<Omit<Account, "id" | "createdAt">>;

export const ACCOUNT_DEFAULTS: Omit<Account, "id" | "createdAt"> = {
  suspended: false,
  balanceMicros: 0,
  budgetMicros: null,
  requestsPerMinute: 600,
  allowedModels: null,
  acceptedAgreementVersion: null,
  hasPaymentMethod: false,
  fineTuningEnabled: true,
};

/** An API key as stored: its secret is never kept, only the secret's hash. */
export interface ApiKey {
  /** `key_…`; safe to show and to log (a job's `createdBy` is `keys/{id}`). */
  id: string;
  accountId: string;
  /** The first characters of the secret, so a person can tell keys apart in a list. */
  hint: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface NewApiKey {
  id: string;
  accountId: string;
  /** Hex SHA-256 of the secret (api-keys.ts says why a fast hash is right here). */
  secretHash: string;
  hint: string;
}

/** An account with the secrets of its keys, as the development seed lists them. */
export interface AccountImport {
  account: NewAccount;
  keys: NewApiKey[];
}

export interface AccountStore {
  /** `already-exists` when the id is taken. */
  create(account: NewAccount): Promise<Account>;
  get(id: string): Promise<Account | undefined>;
  /** Oldest first. */
  list(): Promise<Account[]>;
  /** `not-found` when there is no such account. */
  update(id: string, patch: AccountPatch): Promise<Account>;
  /**
   * Creates all the accounts and their keys in one transaction, only when the store has no
   * account yet; returns whether it did. The emptiness check is inside the transaction, so
   * two servers starting at once seed once.
   */
  importIfEmpty(entries: AccountImport[]): Promise<boolean>;
}

export interface ApiKeyStore {
  /** `not-found` when the account does not exist. */
  create(key: NewApiKey): Promise<ApiKey>;
  /** The key whose secret hashes to `secretHash`, revoked or not; undefined when none. */
  findBySecretHash(secretHash: string): Promise<ApiKey | undefined>;
  /** The account's keys, oldest first. */
  list(accountId: string): Promise<ApiKey[]>;
  /** Marks the key revoked (revoking twice keeps the first time). `not-found` when missing. */
  revoke(id: string): Promise<ApiKey>;
}

export interface UsageCharge {
  accountId: string;
  /** The key that made the call; null for charges not made through a key. */
  keyId: string | null;
  /** What was charged for, e.g. `inference` or `fine_tuning`. */
  kind: string;
  /** A positive amount in micro-units. */
  amountMicros: number;
  at: Date;
}

/** One charge of a batch: recorded, with the account's balance after the batch, or refused (no such account). */
export type ChargeOutcome = { type: "charged"; balanceMicros: number } | { type: "refused"; error: StoreError };

export interface UsageStore {
  /**
   * Records the charge and takes it from the account's balance in one transaction;
   * returns the balance after it. `not-found` when the account does not exist.
   */
  charge(charge: UsageCharge): Promise<{ balanceMicros: number }>;
  /**
   * Records many charges in one transaction (a group commit): one outcome per charge, in
   * order. A charge for a missing account is `not-found` alone; the others are recorded. Each
   * balance is the account's balance after the whole batch.
   */
  chargeMany(charges: readonly UsageCharge[]): Promise<ChargeOutcome[]>;
  /** The sum of the account's charges at or after `since`, in micro-units. */
  spentSince(accountId: string, since: Date): Promise<number>;
}

/** One account's current rate-limit window, after counting a request into it. */
export interface RateWindow {
  /** When the window began: at the first request after the previous window ended. */
  start: Date;
  /** Requests counted in the window, the one just counted included. */
  count: number;
}

export interface RateWindowStore {
  /**
   * Counts `count` requests (default 1) of the account at `now` into its window of
   * `lengthMs`. A window starts at the first request after the previous one ended and
   * lasts `lengthMs`. Kept in the store so that every server process shares it; a process
   * counts in memory and adds its requests here in batches (cache/rate-counter.ts).
   */
  hit(accountId: string, now: Date, lengthMs: number, count?: number): Promise<RateWindow>;
}

/**
 * Heartbeats of the processes that do dataset work (server/datasets/owners.ts). A process
 * on the same host is known dead by its pid; one on another host (several machines on one
 * PostgreSQL) only by its heartbeat running out.
 */
export interface OwnerStore {
  /** Records the owners alive until `until` (a later time already recorded stays). */
  heartbeat(owners: readonly string[], until: Date): Promise<void>;
  /** Forgets the owner (it stopped cleanly): its unfinished work may be taken over at once. */
  forget(owner: string): Promise<void>;
  /** Whether the owner's last heartbeat lasts until `now` or later. */
  alive(owner: string, now: Date): Promise<boolean>;
}

/**
 * A counter bumped in the same transaction as every change to what server processes cache:
 * an account (but not its balance), an API key, an account's model. A process that caches
 * them reads it a few times a second (cache/change-feed.ts) and drops its caches when it
 * moved. Kept by triggers, so every writer bumps it, the admin command and SQL by hand too.
 */
export interface CacheVersionStore {
  current(): Promise<number>;
}

export interface Store {
  readonly accounts: AccountStore;
  readonly apiKeys: ApiKeyStore;
  readonly usage: UsageStore;
  readonly rateWindows: RateWindowStore;
  readonly datasets: DatasetStore;
  readonly fineTuning: FineTuningStore;
  readonly owners: OwnerStore;
  /** Closes the connection; the store is unusable afterwards. */
  close(): Promise<void>;
}

/** A store as opened, with its cache version (what cache/cached-store.ts builds on). */
export interface VersionedStore extends Store {
  readonly cacheVersion: CacheVersionStore;
}
