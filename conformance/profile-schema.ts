/**
 * A profile file as written, and its schema: typed against ProfileFile by tsc (ajv's
 * JSONSchemaType), compiled once. Each node's `problem` is how a wrong value there is said
 * (`accounts.suspended must be {id, key}`), the words profile.ts used before the schema;
 * the keys a section may have come from PROFILE_KEYS, so a misspelt one is named with the
 * closest known ones. `$…` keys are comments, removed before the check (withoutComments).
 */
import type { JSONSchemaType } from "ajv";
import { compileCheck } from "./typed-schema.ts";

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
    "ignoredCeiling",
    "internalError",
    "slowAnswer",
    "stalledStream",
    "upstreamContentRejected",
    "upstreamRateLimited",
    "upstreamTimeout",
    "upstreamUnavailable",
  ],
} as const;

/** The sections whose keys are listed above (and whose `$…` keys are comments). */
export const PROFILE_SECTIONS = ["accounts", "models", "settings", "capabilities", "faults"] as const;

export interface AccountFile {
  id: string;
  /** The key, or `env:NAME` to read it from the environment. */
  key: string;
}

export interface FaultFile {
  model: string;
  input?: string;
  headers?: Record<string, unknown>;
  term?: string;
}

export interface TimeoutsFile {
  requestMs?: number;
  pollMs?: number;
  jobMs?: number;
  pollIntervalMs?: number;
  rateLimitWaitMs?: number;
}

/** A profile as its file holds it (comments removed). A role set to null is left out, as if absent. */
export interface ProfileFile {
  name?: string;
  /** Required unless the caller overrides it (`--base-url`). */
  baseUrl?: string;
  origin?: string;
  accounts: Record<string, AccountFile | null>;
  models: Record<string, string | null>;
  settings?: Record<string, unknown>;
  capabilities?: Record<string, boolean>;
  faults?: Record<string, FaultFile | null>;
  timeouts?: TimeoutsFile;
  concurrency?: number;
  implements?: string[];
}

const text = { type: "string", minLength: 1, problem: "must be a non-empty string" } as const;
const optionalText = { ...text, nullable: true } as const;
const milliseconds = {
  type: "number",
  exclusiveMinimum: 0,
  nullable: true,
  problem: "must be a positive number of milliseconds",
} as const;

const account: JSONSchemaType<AccountFile> = {
  type: "object",
  problem: "must be {id, key}",
  required: ["id", "key"],
  properties: { id: text, key: text },
};

const fault: JSONSchemaType<FaultFile> = {
  type: "object",
  problem: "must be {model, input?, headers?, term?}",
  required: ["model"],
  properties: {
    model: text,
    input: optionalText,
    headers: { type: "object", nullable: true, problem: "must be an object" },
    term: optionalText,
  },
};

export const profileFileSchema: JSONSchemaType<ProfileFile> = {
  type: "object",
  problem: "a profile is a JSON object",
  required: ["accounts", "models"],
  propertyNames: { enum: PROFILE_KEYS.top },
  properties: {
    name: { type: "string", nullable: true, problem: "must be a string" },
    baseUrl: optionalText,
    origin: optionalText,
    accounts: {
      type: "object",
      problem: "must be an object of roles",
      required: [],
      propertyNames: { enum: PROFILE_KEYS.accounts },
      additionalProperties: { ...account, nullable: true },
    },
    models: {
      type: "object",
      problem: "must be an object of roles",
      required: [],
      propertyNames: { enum: PROFILE_KEYS.models },
      additionalProperties: optionalText,
    },
    settings: {
      type: "object",
      nullable: true,
      problem: "must be an object",
      propertyNames: { enum: PROFILE_KEYS.settings },
    },
    capabilities: {
      type: "object",
      nullable: true,
      problem: "must be an object of booleans",
      required: [],
      propertyNames: { enum: PROFILE_KEYS.capabilities },
      additionalProperties: { type: "boolean", problem: "must be true or false" },
    },
    faults: {
      type: "object",
      nullable: true,
      problem: "must be an object of recipes",
      required: [],
      propertyNames: { enum: PROFILE_KEYS.faults },
      additionalProperties: { ...fault, nullable: true },
    },
    timeouts: {
      type: "object",
      nullable: true,
      problem: "must be an object",
      properties: {
        requestMs: milliseconds,
        pollMs: milliseconds,
        jobMs: milliseconds,
        pollIntervalMs: milliseconds,
        rateLimitWaitMs: milliseconds,
      },
    },
    concurrency: { type: "integer", minimum: 1, nullable: true, problem: "must be a whole number of at least 1" },
    implements: {
      type: "array",
      minItems: 1,
      items: {
        type: "string",
        minLength: 1,
        problem: 'must be a capability or an operation id, e.g. "chat.completions"',
      },
      nullable: true,
      problem: 'must be a non-empty list of capabilities or operation ids, e.g. ["chat.completions", "models"]',
    },
  },
};

export const checkProfileFile = compileCheck(profileFileSchema);

/** The object without its `$…` keys, at the top and in each section: they are comments. */
export function withoutComments(raw: Record<string, unknown>): Record<string, unknown> {
  const out = uncommented(raw);
  for (const section of PROFILE_SECTIONS) {
    const value = out[section];
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      out[section] = uncommented(value as Record<string, unknown>);
  }
  return out;
}

function uncommented(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !key.startsWith("$")));
}
