/**
 * The development seed (server/dev-seed.json): demo accounts with fixed, public keys, so
 * that `npm start` on an empty data directory can be called at once.
 *
 * Its keys are published in the repository, so a production server must never load it:
 * the entry point calls `assertDevSeedAllowed` before `loadDevSeed`, and `loadDevSeed`
 * checks again itself.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { processEnvironment } from "../settings/environment.ts";
import type { Environment } from "../settings/parse.ts";
import { apiKeyRecord } from "./api-keys.ts";
import { parseMoney } from "./money.ts";
import type { AccountImport, NewAccount, Store } from "./store.ts";

export const DEV_SEED_PATH = fileURLToPath(new URL("../dev-seed.json", import.meta.url));

/** Throws when the environment is production: the seed's keys are public. */
export function assertDevSeedAllowed(env: Environment = processEnvironment()): void {
  if (env.NODE_ENV === "production") {
    throw new Error(
      "Refusing to load the development seed with NODE_ENV=production: its API keys are published in the " +
        "repository. Start without the seed and create accounts and keys with `npm run admin -- accounts create` " +
        "and `npm run admin -- keys create --account <id>`.",
    );
  }
}

/**
 * Loads the seed's accounts and keys into the store when it has no account yet (in one
 * transaction); returns whether it did. A store that already has accounts is left alone.
 */
export async function loadDevSeed(store: Store, seedPath: string = DEV_SEED_PATH): Promise<boolean> {
  assertDevSeedAllowed();
  const entries = parseDevSeed(JSON.parse(await readFile(seedPath, "utf8")), seedPath);
  return store.accounts.importIfEmpty(entries);
}

/** The seed file's accounts as store imports; throws naming the first bad field. */
export function parseDevSeed(seed: unknown, source: string): AccountImport[] {
  const fail = (where: string, what: string): never => {
    throw new Error(`${source}: ${where} ${what}`);
  };
  if (!isObject(seed) || !Array.isArray(seed.accounts)) return fail("accounts", "must be a list");
  return seed.accounts.map((entry: unknown, i: number) => {
    const at = (field: string) => `accounts[${i}].${field}`;
    if (!isObject(entry)) return fail(`accounts[${i}]`, "must be an object");
    const account = seedAccount(entry, at, fail);
    const keys = entry.keys;
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === "string" && k.length >= 20)) {
      return fail(at("keys"), "must be a list of key strings of at least 20 characters");
    }
    return { account, keys: keys.map((secret: string) => apiKeyRecord(account.id, secret)) };
  });
}

type Fail = (where: string, what: string) => never;

function seedAccount(entry: Record<string, unknown>, at: (field: string) => string, fail: Fail): NewAccount {
  const optional = <T>(field: string, check: (v: unknown) => v is T, what: string): T | undefined => {
    const value = entry[field];
    if (value === undefined) return undefined;
    return check(value) ? value : fail(at(field), what);
  };
  const id = optional("id", isString, "must be a string");
  if (!id) return fail(at("id"), "is required");
  const money = (field: string) => {
    const text = optional(field, isString, 'must be an amount such as "100.00"');
    try {
      return text === undefined ? undefined : parseMoney(text);
    } catch (error) {
      return fail(at(field), (error as Error).message);
    }
  };
  return {
    id,
    suspended: optional("suspended", isBoolean, "must be true or false"),
    balanceMicros: money("balance"),
    budgetMicros: money("budget"),
    requestsPerMinute: optional("requestsPerMinute", isPositiveInteger, "must be a whole number of at least 1"),
    allowedModels: optional("allowedModels", isStringList, "must be a list of model ids"),
    acceptedAgreementVersion: optional("acceptedAgreementVersion", isString, "must be a string"),
    hasPaymentMethod: optional("hasPaymentMethod", isBoolean, "must be true or false"),
    fineTuningEnabled: optional("fineTuningEnabled", isBoolean, "must be true or false"),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

function isBoolean(value: unknown): value is boolean {
  return typeof value === "boolean";
}

function isPositiveInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isString);
}
