/**
 * A profile tells the kit how to reach one implementation: its base URL, the keys of its
 * accounts by role, its models by role, a few settings, which optional capabilities it
 * has, and how long to wait for background work. Transcripts name what they need
 * (`requires: [accounts.suspended, capabilities.reasoning]`); what the profile lacks is
 * skipped, and reported as skipped.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { didYouMean } from "./capabilities.ts";

export interface AccountRef {
  /** The account id, as it appears in `/accounts/{account}` paths. */
  id: string;
  /** An API key of that account. */
  key: string;
}

/**
 * Roles of accounts. `primary` and `secondary` are required (two ordinary accounts, so a
 * key can be shown to reach its own account only); the others are optional and enable the
 * transcripts that need them.
 */
export interface ProfileAccounts {
  primary: AccountRef;
  secondary: AccountRef;
  /** A suspended tenant: every call is 403 TENANT_SUSPENDED. */
  suspended?: AccountRef;
  /** Balance at or below zero: paid calls are 402 INSUFFICIENT_BALANCE. */
  zeroBalance?: AccountRef;
  /** No payment method on file: paid models are 402 PAYMENT_REQUIRED. */
  noPaymentMethod?: AccountRef;
  /** An allow-list that excludes `models.disallowed`: 403 MODEL_NOT_ALLOWED. */
  restricted?: AccountRef;
  /** Fine-tuning disabled by an operator: 403 OPERATION_NOT_ALLOWED on job creation. */
  fineTuningDisabled?: AccountRef;
  /** Budget spent: paid calls are 429 TENANT_BUDGET_EXCEEDED. */
  budgetExhausted?: AccountRef;
  /** A small requests-per-minute limit (see `settings.rateLimitedRequestsPerMinute`): 429 TENANT_RATE_LIMITED. */
  rateLimited?: AccountRef;
  /** An account that has NOT accepted the agreement `models.agreementRequired` needs. */
  withoutAgreement?: AccountRef;
  [role: string]: AccountRef | undefined;
}

/** Model names by role, as a caller sends them in `model` (or `baseModel`). */
export interface ProfileModels {
  /** A platform chat model every ordinary account may call. Required. */
  chat: string;
  /** A model that calls function tools. */
  tools?: string;
  /** A model that reasons (accepts `reasoning`, answers with a reasoning item). */
  reasoning?: string;
  /** A model that does not reason (for MODEL_CAPABILITY_UNSUPPORTED). */
  nonReasoning?: string;
  /** A text-only model (for MEDIA_UNSUPPORTED). */
  textOnly?: string;
  /**
   * A model offered as a fine-tuning base, as the bare id: transcripts send
   * `accounts/maas/models/{id}` as `baseModel` (the only form it takes) and the bare id to
   * prove it is refused.
   */
  trainableBase?: string;
  /** A model that exists but is not offered for training, as the bare id (400 INVALID_REQUEST, param baseModel). */
  notTrainable?: string;
  /** A model that needs an agreement `accounts.primary` has accepted and `accounts.withoutAgreement` has not. */
  agreementRequired?: string;
  /** A model outside `accounts.restricted`'s allow-list. */
  disallowed?: string;
  /** A paid model (for `accounts.noPaymentMethod`, `zeroBalance`, `budgetExhausted`). */
  paid?: string;
  [role: string]: string | undefined;
}

export interface ProfileSettings {
  /** A term the input content policy blocks (400 CONTENT_BLOCKED_INPUT). */
  blockedInputTerm?: string;
  /** The largest inline media part in bytes; one byte more is 413 MEDIA_TOO_LARGE. */
  mediaMaxBytes?: number;
  /** An image URL the service cannot fetch (400 MEDIA_FETCH_FAILED). */
  unfetchableMediaUrl?: string;
  /** Requests per minute of `accounts.rateLimited`. */
  rateLimitedRequestsPerMinute?: number;
  /** The context window of `models.chat` in tokens (CONTEXT_LENGTH_EXCEEDED above it). */
  contextWindow?: number;
  /** The largest request body in bytes; one byte more is 413 REQUEST_TOO_LARGE. */
  maxRequestBytes?: number;
  /**
   * The least time in milliseconds a job stays in JOB_STATE_CHECKPOINTING at an epoch end
   * (a test deployment may hold it). With 500 or more the kit cancels a job there and
   * expects 409 JOB_STATE_INVALID; a shorter state cannot be hit reliably over HTTP.
   */
  checkpointingMs?: number;
  [name: string]: unknown;
}

/**
 * How to provoke a failure that needs a misbehaving upstream or a deployment state a
 * client cannot cause on its own: which model to call, with which input (and headers).
 * An implementation's test deployment can route a model to a failing upstream for this.
 */
export interface FaultRecipe {
  model: string;
  /** Default "Hi". */
  input: string;
  /** Default none. */
  headers: Record<string, string>;
  /** A term that must never reach the client (blocked output). */
  term?: string;
}

export interface ProfileTimeouts {
  /** One HTTP request, headers and body. */
  requestMs: number;
  /** A polling step without its own timeout: a dataset validating, a job leaving QUEUED. */
  pollMs: number;
  /** A polling step that waits for a training job to finish (`timeout: job`). */
  jobMs: number;
  /** Pause between two polls. */
  pollIntervalMs: number;
  /**
   * Most time per run spent honouring Retry-After when the service rate-limits an ordinary
   * account (429 TENANT_RATE_LIMITED that no transcript step expects); beyond it the 429 fails the step.
   */
  rateLimitWaitMs: number;
}

export interface Profile {
  /** A label for reports. */
  name: string;
  /** `{base_url}`: the service base address including `/v1`. */
  baseUrl: string;
  /** `{origin}`: the base address without `/v1` (the messages format's base URL). */
  origin: string;
  accounts: ProfileAccounts;
  models: ProfileModels;
  settings: ProfileSettings;
  /**
   * Optional behaviour this implementation has and a black-box client can provoke, by
   * name (see conformance/README.md for the list). Absent means false.
   */
  capabilities: Record<string, boolean>;
  /**
   * Recipes for failures a black-box client cannot provoke on an ordinary deployment
   * (upstream errors, stalls, blocked output, crashes); each enables the transcripts
   * that require `faults.<name>`. See conformance/README.md.
   */
  faults: Record<string, FaultRecipe>;
  timeouts: ProfileTimeouts;
  /** Transcripts running at once (default 4). Transcripts marked `exclusive` always run alone. */
  concurrency: number;
  /**
   * What the implementation implements: capabilities (`chat.completions`, `models`,
   * `datasets`, …; see conformance/README.md) or operation ids. Undefined: everything.
   * A transcript that calls anything else is reported as not implemented.
   */
  implements?: string[];
}

/** The keys a profile may have, by section: anything else is a typo and an error. */
export const PROFILE_KEYS = {
  top: [
    "name",
    "baseUrl",
    "origin",
    "accounts",
    "models",
    "settings",
    "capabilities",
    "faults",
    "timeouts",
    "concurrency",
    "implements",
  ],
  accounts: [
    "primary",
    "secondary",
    "suspended",
    "zeroBalance",
    "noPaymentMethod",
    "restricted",
    "fineTuningDisabled",
    "budgetExhausted",
    "rateLimited",
    "withoutAgreement",
  ],
  models: [
    "chat",
    "tools",
    "reasoning",
    "nonReasoning",
    "textOnly",
    "trainableBase",
    "notTrainable",
    "agreementRequired",
    "disallowed",
    "paid",
  ],
  settings: [
    "blockedInputTerm",
    "mediaMaxBytes",
    "unfetchableMediaUrl",
    "rateLimitedRequestsPerMinute",
    "contextWindow",
    "maxRequestBytes",
    "checkpointingMs",
  ],
  capabilities: ["mediaInput", "deterministicAtTemperatureZero"],
  faults: [
    "blockedOutput",
    "cutStream",
    "fallback",
    "internalError",
    "slowAnswer",
    "stalledStream",
    "upstreamContentRejected",
    "upstreamRateLimited",
    "upstreamTimeout",
    "upstreamUnavailable",
  ],
} as const;

const DEFAULT_TIMEOUTS: ProfileTimeouts = {
  requestMs: 30_000,
  pollMs: 30_000,
  jobMs: 120_000,
  pollIntervalMs: 100,
  rateLimitWaitMs: 120_000,
};

export class ProfileError extends Error {
  override name = "ProfileError";
}

/**
 * Reads a profile file (JSON). `overrides.baseUrl` replaces the file's base URL (and the
 * origin derived from it, unless the file sets both and the override leaves origin alone).
 * Keys may be given as `"env:NAME"` to read them from the environment.
 */
export function loadProfile(file: string, overrides: { baseUrl?: string; origin?: string } = {}): Profile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ProfileError(`cannot read profile ${file}: ${(error as Error).message}`);
  }
  return parseProfile(raw, overrides, path.basename(file, ".json"));
}

/** Builds a profile from an already parsed object (same rules as loadProfile). */
export function parseProfile(
  raw: unknown,
  overrides: { baseUrl?: string; origin?: string } = {},
  fallbackName = "profile",
): Profile {
  if (!isObject(raw)) throw new ProfileError("a profile is a JSON object");
  checkKeys(raw, PROFILE_KEYS.top, "");
  for (const section of ["accounts", "models", "settings", "capabilities", "faults"] as const)
    if (isObject(raw[section])) checkKeys(raw[section], PROFILE_KEYS[section], `${section}.`);
  const baseUrl = stripSlash(overrides.baseUrl ?? str(raw.baseUrl, "baseUrl"));
  if (!/^https?:\/\//.test(baseUrl))
    throw new ProfileError(`baseUrl must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  const origin = stripSlash(
    overrides.origin ??
      (overrides.baseUrl === undefined && typeof raw.origin === "string" ? raw.origin : deriveOrigin(baseUrl)),
  );

  const accountsRaw = raw.accounts;
  if (!isObject(accountsRaw)) throw new ProfileError("accounts must be an object of roles");
  const accounts: Record<string, AccountRef> = {};
  for (const [role, value] of Object.entries(accountsRaw)) {
    if (role.startsWith("$") || value === null) continue;
    if (!isObject(value)) throw new ProfileError(`accounts.${role} must be {id, key}`);
    const key = str(value.key, `accounts.${role}.key`);
    // An optional role whose key comes from an environment variable that is not set is left out (its transcripts skip).
    if (key.startsWith("env:") && !process.env[key.slice(4)] && role !== "primary" && role !== "secondary") continue;
    accounts[role] = { id: str(value.id, `accounts.${role}.id`), key: resolveSecret(key, `accounts.${role}.key`) };
  }
  for (const required of ["primary", "secondary"])
    if (!accounts[required]) throw new ProfileError(`accounts.${required} is required`);

  const modelsRaw = raw.models;
  if (!isObject(modelsRaw)) throw new ProfileError("models must be an object of roles");
  const models: Record<string, string> = {};
  for (const [role, value] of Object.entries(modelsRaw)) {
    if (role.startsWith("$") || value === null) continue;
    models[role] = str(value, `models.${role}`);
  }
  if (!models.chat) throw new ProfileError("models.chat is required");

  const settings: ProfileSettings = {};
  if (raw.settings !== undefined) {
    if (!isObject(raw.settings)) throw new ProfileError("settings must be an object");
    for (const [k, v] of Object.entries(raw.settings)) if (!k.startsWith("$") && v !== null) settings[k] = v;
  }

  const capabilities: Record<string, boolean> = {};
  if (raw.capabilities !== undefined) {
    if (!isObject(raw.capabilities)) throw new ProfileError("capabilities must be an object of booleans");
    for (const [k, v] of Object.entries(raw.capabilities)) {
      if (k.startsWith("$")) continue;
      if (typeof v !== "boolean") throw new ProfileError(`capabilities.${k} must be true or false`);
      capabilities[k] = v;
    }
  }

  const faults: Record<string, FaultRecipe> = {};
  if (raw.faults !== undefined) {
    if (!isObject(raw.faults)) throw new ProfileError("faults must be an object of recipes");
    for (const [k, v] of Object.entries(raw.faults)) {
      if (k.startsWith("$") || v === null) continue;
      if (!isObject(v)) throw new ProfileError(`faults.${k} must be {model, input?, headers?, term?}`);
      const recipe: FaultRecipe = {
        model: str(v.model, `faults.${k}.model`),
        input: v.input === undefined ? "Hi" : str(v.input, `faults.${k}.input`),
        headers: {},
      };
      if (v.term !== undefined) recipe.term = str(v.term, `faults.${k}.term`);
      if (v.headers !== undefined) {
        if (!isObject(v.headers)) throw new ProfileError(`faults.${k}.headers must be an object`);
        recipe.headers = Object.fromEntries(Object.entries(v.headers).map(([h, x]) => [h, String(x)]));
      }
      faults[k] = recipe;
    }
  }

  const timeouts = { ...DEFAULT_TIMEOUTS };
  if (raw.timeouts !== undefined) {
    if (!isObject(raw.timeouts)) throw new ProfileError("timeouts must be an object");
    for (const key of Object.keys(DEFAULT_TIMEOUTS) as (keyof ProfileTimeouts)[]) {
      const v = raw.timeouts[key];
      if (v === undefined) continue;
      if (typeof v !== "number" || !(v > 0))
        throw new ProfileError(`timeouts.${key} must be a positive number of milliseconds`);
      timeouts[key] = v;
    }
  }
  const concurrency = raw.concurrency === undefined ? 4 : raw.concurrency;
  if (typeof concurrency !== "number" || !Number.isInteger(concurrency) || concurrency < 1)
    throw new ProfileError("concurrency must be a whole number of at least 1");

  let implementsList: string[] | undefined;
  if (raw.implements !== undefined) {
    if (
      !Array.isArray(raw.implements) ||
      raw.implements.length === 0 ||
      !raw.implements.every((x) => typeof x === "string" && x !== "")
    ) {
      throw new ProfileError(
        'implements must be a non-empty list of capabilities or operation ids, e.g. ["chat.completions", "models"]',
      );
    }
    implementsList = raw.implements as string[];
  }

  return {
    ...(implementsList ? { implements: implementsList } : {}),
    name: typeof raw.name === "string" ? raw.name : fallbackName,
    baseUrl,
    origin,
    accounts: accounts as ProfileAccounts,
    models: models as ProfileModels,
    settings,
    capabilities,
    faults,
    timeouts,
    concurrency,
  };
}

/** Whether the profile has what a transcript's `requires` entry names (a dotted path that must be truthy). */
export function profileHas(profile: Profile, requirement: string): boolean {
  let value: unknown = profile;
  for (const part of requirement.split(".")) {
    if (!isObject(value)) return false;
    value = value[part];
  }
  return value !== undefined && value !== null && value !== false && value !== "";
}

/** Unknown keys are errors (a misspelt role would otherwise skip its transcripts in silence); `$…` keys are comments. */
function checkKeys(object: Record<string, unknown>, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(object)) {
    if (key.startsWith("$") || known.includes(key)) continue;
    throw new ProfileError(
      `unknown profile key ${prefix}${key}${didYouMean(key, [...known]) || ` (known: ${known.join(", ")})`}`,
    );
  }
}

function deriveOrigin(baseUrl: string): string {
  return baseUrl.endsWith("/v1") ? baseUrl.slice(0, -3) : baseUrl;
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

function resolveSecret(value: string, where: string): string {
  if (!value.startsWith("env:")) return value;
  const name = value.slice(4);
  const found = process.env[name];
  if (found === undefined || found === "")
    throw new ProfileError(`${where} names the environment variable ${name}, which is not set`);
  return found;
}

function str(value: unknown, where: string): string {
  if (typeof value !== "string" || value === "") throw new ProfileError(`${where} must be a non-empty string`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
