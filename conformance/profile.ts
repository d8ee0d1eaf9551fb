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
import {
  checkProfileFile,
  PROFILE_KEYS,
  withoutComments,
  type AccountFile,
  type FaultFile,
  type ProfileFile,
  type TimeoutsFile,
} from "./profile-schema.ts";
import { describeProblem, type SchemaProblem } from "./typed-schema.ts";

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

export { PROFILE_KEYS } from "./profile-schema.ts";

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
 * Keys may be given as `"env:NAME"` to read them from the environment. An error names the
 * file and the field.
 */
export function loadProfile(file: string, overrides: { baseUrl?: string; origin?: string } = {}): Profile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ProfileError(`cannot read profile ${file}: ${(error as Error).message}`);
  }
  try {
    return parseProfile(raw, overrides, path.basename(file, ".json"));
  } catch (error) {
    if (error instanceof ProfileError) throw new ProfileError(`profile ${file}: ${error.message}`);
    throw error;
  }
}

/** Builds a profile from an already parsed object (same rules as loadProfile). */
export function parseProfile(
  raw: unknown,
  overrides: { baseUrl?: string; origin?: string } = {},
  fallbackName = "profile",
): Profile {
  if (!isObject(raw)) throw new ProfileError("a profile is a JSON object");
  const checked = checkProfileFile(withoutComments(raw));
  if (!checked.ok) throw new ProfileError(profileProblem(checked.problem));
  const file = checked.value;
  const fileBaseUrl = file.baseUrl ?? undefined;
  const baseUrl = stripSlash(overrides.baseUrl ?? fileBaseUrl ?? fail("baseUrl must be a non-empty string"));
  if (!/^https?:\/\//.test(baseUrl))
    throw new ProfileError(`baseUrl must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  const origin = stripSlash(
    overrides.origin ??
      (overrides.baseUrl === undefined ? (file.origin ?? deriveOrigin(baseUrl)) : deriveOrigin(baseUrl)),
  );
  return {
    ...(file.implements ? { implements: file.implements } : {}),
    name: file.name ?? fallbackName,
    baseUrl,
    origin,
    accounts: accountsOf(file.accounts),
    models: modelsOf(file.models),
    settings: definedOnly(file.settings ?? {}),
    capabilities: file.capabilities ?? {},
    faults: faultsOf(file.faults ?? {}),
    timeouts: timeoutsOf(file.timeouts ?? {}),
    concurrency: file.concurrency ?? 4,
  };
}

function accountsOf(roles: ProfileFile["accounts"]): ProfileAccounts {
  const accounts: Record<string, AccountRef> = {};
  for (const [role, value] of Object.entries(roles)) {
    if (value === null) continue;
    // An optional role whose key comes from an environment variable that is not set is left out (its transcripts skip).
    if (value.key.startsWith("env:") && !process.env[value.key.slice(4)] && role !== "primary" && role !== "secondary")
      continue;
    accounts[role] = accountRef(role, value);
  }
  const { primary, secondary } = accounts;
  if (primary === undefined) return fail("accounts.primary is required");
  if (secondary === undefined) return fail("accounts.secondary is required");
  return { ...accounts, primary, secondary };
}

function accountRef(role: string, value: AccountFile): AccountRef {
  return { id: value.id, key: resolveSecret(value.key, `accounts.${role}.key`) };
}

function modelsOf(roles: ProfileFile["models"]): ProfileModels {
  const { chat, ...others } = definedOnly(roles);
  if (chat === undefined) return fail("models.chat is required");
  return { ...others, chat };
}

function faultsOf(recipes: NonNullable<ProfileFile["faults"]>): Record<string, FaultRecipe> {
  const faults: Record<string, FaultRecipe> = {};
  for (const [name, recipe] of Object.entries(definedOnly(recipes))) faults[name] = faultRecipe(recipe);
  return faults;
}

function faultRecipe(v: FaultFile): FaultRecipe {
  const headers = Object.fromEntries(Object.entries(v.headers ?? {}).map(([h, x]) => [h, String(x)]));
  return { model: v.model, input: v.input ?? "Hi", headers, ...(v.term ? { term: v.term } : {}) };
}

/** The defaults, with what the file sets (`file[key]` keeps the file's type in step with ProfileTimeouts). */
function timeoutsOf(file: TimeoutsFile): ProfileTimeouts {
  const timeouts = { ...DEFAULT_TIMEOUTS };
  for (const key of Object.keys(DEFAULT_TIMEOUTS) as (keyof ProfileTimeouts)[]) {
    const value = file[key];
    if (value !== undefined && value !== null) timeouts[key] = value;
  }
  return timeouts;
}

/** The entries whose value is not null (a null role or setting is as if absent). */
function definedOnly<V>(record: Record<string, V | null | undefined>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const [key, value] of Object.entries(record)) if (value !== null && value !== undefined) out[key] = value;
  return out;
}

/** The schema's problem in the words the kit has always used; an unknown key with the closest known ones. */
function profileProblem(problem: SchemaProblem): string {
  if (problem.unknownKey === undefined) return describeProblem(problem);
  const section = problem.field.includes(".") ? problem.field.split(".")[0] : "top";
  const known: readonly string[] = PROFILE_KEYS[section as keyof typeof PROFILE_KEYS] ?? [];
  const key = problem.unknownKey;
  return `unknown profile key ${problem.field}${didYouMean(key, [...known]) || ` (known: ${known.join(", ")})`}`;
}

function fail(message: string): never {
  throw new ProfileError(message);
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
