/**
 * Transcripts: YAML files under `transcripts/<area>/<name>.yaml`, each a sequence of
 * steps (a request and what must come back) and the interface-document rules it proves.
 * This file defines the format (documented in conformance/README.md) and loads and
 * checks the files, so a malformed transcript fails loudly instead of passing quietly.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument, type Document } from "yaml";
import { ANY_LIST, ANY_VALUE, compileCheck, describeProblem, refTo, type SchemaCheck } from "./typed-schema.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The folder holding `transcripts/`, `fixtures/`, `goldens/`, `profiles/` and `rules.yaml`. */
export function kitRoot(): string {
  for (const candidate of [HERE, path.dirname(HERE)])
    if (existsSync(path.join(candidate, "transcripts"))) return candidate;
  return HERE;
}

export type AuthSpec =
  | string
  | {
      /** An account role of the profile (default primary). */
      role?: string;
      /** How the key is sent: `bearer` (Authorization: Bearer), `x-api-key`, or `none`. */
      scheme?: "bearer" | "x-api-key" | "none";
      /** A literal key instead of a role's. */
      key?: string;
      /** A literal header instead: `{header: authorization, value: "Basic abc"}`. */
      header?: string;
      value?: string;
    };

export interface RequestSpec {
  method: string;
  /** Relative to `{base_url}` (or `{origin}` with `base: origin`); may hold a query string. */
  path: string;
  base?: "baseUrl" | "origin";
  query?: Record<string, unknown>;
  /** The headers, or a template for all of them (`"{{faults.blockedOutput.headers}}"`). */
  headers?: Record<string, unknown> | Template;
  auth?: AuthSpec;
  /** A JSON body. */
  json?: unknown;
  /** A raw text body (sent as is; set contentType). */
  text?: string;
  /** A fixture file under `fixtures/`, sent as the raw body. */
  file?: string;
  /** A multipart form: a string value is a field; `{file, filename?, contentType?}` is a file part. */
  form?: Record<string, unknown>;
  contentType?: string;
  /**
   * Declares a body of this many bytes (`Content-Length`) and sends none of it: the answer
   * must come without the body (a key checked first, a length refused at once). Not with
   * another body.
   */
  declaredLength?: number | string;
}

export interface Expectation {
  status?: unknown;
  headers?: Record<string, unknown>;
  body?: unknown;
  /** Shorthand for an error envelope: `{code, type, param}`; `type` defaults to the one decided for the status. */
  error?: { code?: unknown; type?: unknown; param?: unknown; message?: unknown };
  stream?: StreamExpectation;
  /** Alternatives: the response must satisfy one of them. */
  anyOf?: Expectation[];
}

export interface EventPattern {
  event?: unknown;
  data?: unknown;
  /** How many events this entry stands for: `"+"`, `"*"`, `"?"` or a number (default 1). */
  repeat?: "+" | "*" | "?" | number;
}

export interface StreamExpectation {
  /** The whole sequence, entry by entry (runs with `repeat`). */
  events?: EventPattern[];
  /** Each must match some event. */
  includes?: EventPattern[];
  /** None may match any event. */
  excludes?: EventPattern[];
  /** Must match the last event. */
  last?: EventPattern;
  /** The concatenated output text of the stream's text deltas. */
  text?: unknown;
  /** The number of events. */
  count?: unknown;
}

export interface PollSpec {
  /** The response that ends the wait. */
  until: Expectation;
  /** Every response before it must match this (for example: only states that may come before). */
  while?: Expectation;
  /** `poll` (default), `job`, or milliseconds. */
  timeout?: "poll" | "job" | number;
  interval?: number;
  maxAttempts?: number;
}

export interface RepeatSpec {
  count: number;
  parallel?: boolean;
  /** Paths whose values must be equal in every response. */
  same?: string[];
  /** Paths whose values must differ between every two responses. */
  distinct?: string[];
}

export interface PaginateSpec {
  /** The field of each page holding its items. */
  items: string;
  token?: string;
  param?: string;
  maxPages?: number;
  /** Stop once every value in `values` was seen at path `at` of the items. */
  until?: { at: string; values: unknown[] };
}

/** A value a transcript writes as a template that the run interpolates: `"{{add(n, 1)}}"`. */
export type Template = `{{${string}}}`;
type NumberOr<V> = V extends number ? V | Template : V;
/** A spec as a transcript writes it: any number in it may be a template (the run interpolates it first). */
export type Written<T> = { [K in keyof T]: NumberOr<T[K]> };

export interface Step {
  index: number;
  /** For reports: the step's `id`, else its number (1-based). */
  label: string;
  title: string;
  request: RequestSpec;
  expect?: Expectation;
  capture?: Record<string, string>;
  poll?: Written<PollSpec>;
  repeat?: Written<RepeatSpec>;
  paginate?: Written<PaginateSpec>;
  /** A matcher over the items collected by `paginate`. */
  expectItems?: unknown;
  rules: string[];
  /** Compare this step's body or events with the recorded golden (goldens/<id>.yaml). */
  golden: boolean;
  /** Options of the golden comparison: paths (JSON, by key name) whose values may differ. */
  goldenIgnore: string[];
  cleanup: boolean;
}

export interface Transcript {
  /** `<area>/<name>`. */
  id: string;
  area: string;
  name: string;
  file: string;
  title: string;
  description: string;
  rules: string[];
  requires: string[];
  /** Setup transcripts this one needs, by alias: `{sft: _setup/sft-dataset}` → `{{sft.version}}`. */
  uses: Record<string, string>;
  vars: Record<string, unknown>;
  exports: Record<string, unknown>;
  /** Runs alone (nothing else at the same time), for lists whose order others would disturb. */
  exclusive: boolean;
  setup: boolean;
  steps: Step[];
  cleanup: Step[];
  document: Document;
}

export class TranscriptError extends Error {
  override name = "TranscriptError";
}

const TOP_KEYS = new Set([
  "title",
  "description",
  "rules",
  "requires",
  "uses",
  "vars",
  "exports",
  "exclusive",
  "steps",
  "cleanup",
]);
const STEP_KEYS = new Set([
  "id",
  "title",
  "request",
  "expect",
  "capture",
  "poll",
  "repeat",
  "paginate",
  "expectItems",
  "rules",
  "golden",
  "goldenIgnore",
]);
const REQUEST_KEYS = new Set([
  "method",
  "path",
  "base",
  "query",
  "headers",
  "auth",
  "json",
  "text",
  "file",
  "form",
  "contentType",
  "declaredLength",
]);
const EXPECT_KEYS = new Set(["status", "headers", "body", "error", "stream", "anyOf"]);
const STREAM_KEYS = new Set(["events", "includes", "excludes", "last", "text", "count"]);

const TEMPLATE = "^\\{\\{.*\\}\\}$";
/** A whole number, or a template for one. */
const count = { type: ["integer", "string"], pattern: TEMPLATE } as const;
const optionalCount = { ...count, nullable: true } as const;
const optionalText = { type: "string", nullable: true } as const;
const optionalMap = { type: "object", nullable: true } as const;
/** An expectation's own keys are checked by checkExpectation, with its messages. */
const expectation = { type: "object" } as const;
const AUTH = refTo<AuthSpec>("transcript-auth", {
  anyOf: [
    { type: "string" },
    {
      type: "object",
      additionalProperties: false,
      properties: {
        role: { type: "string", nullable: true },
        scheme: { type: "string", enum: ["bearer", "x-api-key", "none"], nullable: true },
        key: { type: "string", nullable: true },
        header: { type: "string", nullable: true },
        value: { type: "string", nullable: true },
      },
    },
  ],
});

const checkRequest = compileCheck<RequestSpec>({
  type: "object",
  required: ["method", "path"],
  properties: {
    method: { type: "string" },
    path: { type: "string" },
    base: { type: "string", enum: ["baseUrl", "origin"], nullable: true },
    query: optionalMap,
    headers: refTo<Record<string, unknown> | Template>("transcript-headers", {
      anyOf: [{ type: "object" }, { type: "string", pattern: TEMPLATE }],
    }),
    auth: AUTH,
    json: ANY_VALUE,
    text: optionalText,
    file: optionalText,
    form: optionalMap,
    contentType: optionalText,
    declaredLength: { type: ["integer", "string"], nullable: true },
  },
});

const checkPoll = compileCheck<Written<PollSpec>>({
  type: "object",
  required: ["until"],
  additionalProperties: false,
  properties: {
    until: expectation,
    while: { ...expectation, nullable: true },
    timeout: { type: ["integer", "string"], pattern: "^(poll|job|\\{\\{.*\\}\\})$", nullable: true },
    interval: optionalCount,
    maxAttempts: optionalCount,
  },
});

const checkRepeat = compileCheck<Written<RepeatSpec>>({
  type: "object",
  required: ["count"],
  additionalProperties: false,
  properties: {
    count,
    parallel: { type: "boolean", nullable: true },
    same: { type: "array", items: { type: "string" }, nullable: true },
    distinct: { type: "array", items: { type: "string" }, nullable: true },
  },
});

const checkPaginate = compileCheck<Written<PaginateSpec>>({
  type: "object",
  required: ["items"],
  additionalProperties: false,
  properties: {
    items: { type: "string" },
    token: optionalText,
    param: optionalText,
    maxPages: optionalCount,
    until: {
      type: "object",
      required: ["at", "values"],
      additionalProperties: false,
      properties: { at: { type: "string" }, values: ANY_LIST },
      nullable: true,
    },
  },
});

export function transcriptsDir(root = kitRoot()): string {
  return path.join(root, "transcripts");
}

/** Every transcript under `dir`, sorted by id; throws TranscriptError on the first malformed file. */
export function loadTranscripts(dir = transcriptsDir()): Transcript[] {
  const out: Transcript[] = [];
  for (const area of readdirSync(dir).sort()) {
    const areaDir = path.join(dir, area);
    if (!statSync(areaDir).isDirectory()) continue;
    for (const file of readdirSync(areaDir).sort()) {
      if (!file.endsWith(".yaml") && !file.endsWith(".yml")) continue;
      out.push(loadTranscript(path.join(areaDir, file), area));
    }
  }
  return out;
}

export function loadTranscript(file: string, area = path.basename(path.dirname(file))): Transcript {
  const name = path.basename(file).replace(/\.ya?ml$/, "");
  const id = `${area}/${name}`;
  const text = readFileSync(file, "utf8");
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length) throw new TranscriptError(`${id}: ${document.errors[0]?.message}`);
  const raw = document.toJS({ maxAliasCount: -1 }) as unknown;
  const where = (s: string) => `${id} (${file}): ${s}`;
  if (!isObject(raw)) throw new TranscriptError(where("a transcript is a YAML mapping"));
  for (const key of Object.keys(raw))
    if (!TOP_KEYS.has(key))
      throw new TranscriptError(where(`unknown key ${key} (allowed: ${[...TOP_KEYS].join(", ")})`));
  if (typeof raw.title !== "string") throw new TranscriptError(where("title is required"));
  const setup = area === "_setup";
  const rules = stringList(raw.rules ?? [], where("rules"));
  if (!setup && rules.length === 0)
    throw new TranscriptError(where("rules must name at least one rule of conformance/rules.yaml"));
  if (!Array.isArray(raw.steps) || raw.steps.length === 0)
    throw new TranscriptError(where("steps must be a non-empty list"));
  const uses = raw.uses ?? {};
  if (!isObject(uses) || !Object.values(uses).every((v) => typeof v === "string"))
    throw new TranscriptError(where("uses maps aliases to setup transcript ids"));
  const steps = raw.steps.map((s, i) => parseStep(s, i, where, false));
  const cleanup = (
    Array.isArray(raw.cleanup) ? raw.cleanup : raw.cleanup === undefined ? [] : fail(where("cleanup must be a list"))
  ).map((s, i) => parseStep(s, i, where, true));
  return {
    id,
    area,
    name,
    file,
    title: raw.title,
    description: typeof raw.description === "string" ? raw.description.trim() : "",
    rules,
    requires: stringList(raw.requires ?? [], where("requires")),
    uses: uses as Record<string, string>,
    vars: isObject(raw.vars) ? raw.vars : {},
    exports: isObject(raw.exports) ? raw.exports : {},
    exclusive: raw.exclusive === true,
    setup,
    steps,
    cleanup,
    document,
  };
}

function parseStep(raw: unknown, index: number, where: (s: string) => string, cleanup: boolean): Step {
  const at = (s: string) => where(`${cleanup ? "cleanup" : "steps"}[${index}]: ${s}`);
  if (!isObject(raw)) throw new TranscriptError(at("a step is a mapping"));
  for (const key of Object.keys(raw))
    if (!STEP_KEYS.has(key))
      throw new TranscriptError(at(`unknown key ${key} (allowed: ${[...STEP_KEYS].join(", ")})`));
  const request = raw.request;
  if (!isObject(request)) throw new TranscriptError(at("request is required"));
  for (const key of Object.keys(request))
    if (!REQUEST_KEYS.has(key)) throw new TranscriptError(at(`request: unknown key ${key}`));
  if (typeof request.method !== "string" || typeof request.path !== "string")
    throw new TranscriptError(at("request needs method and path"));
  const bodies = ["json", "text", "file", "form", "declaredLength"].filter((k) => request[k] !== undefined);
  if (bodies.length > 1) throw new TranscriptError(at(`request has more than one body (${bodies.join(", ")})`));
  if (raw.expect !== undefined) checkExpectation(raw.expect, at);
  else if (!cleanup) throw new TranscriptError(at("expect is required"));
  if (raw.poll !== undefined) {
    if (!isObject(raw.poll) || !isObject(raw.poll.until)) throw new TranscriptError(at("poll needs until"));
    checkExpectation(raw.poll.until, at);
    if (raw.poll.while !== undefined) checkExpectation(raw.poll.while, at);
  }
  if (raw.repeat !== undefined && (!isObject(raw.repeat) || raw.repeat.count === undefined))
    throw new TranscriptError(at("repeat needs count"));
  if (raw.paginate !== undefined && (!isObject(raw.paginate) || typeof raw.paginate.items !== "string"))
    throw new TranscriptError(at("paginate needs items"));
  if (
    raw.capture !== undefined &&
    (!isObject(raw.capture) || !Object.values(raw.capture).every((v) => typeof v === "string"))
  )
    throw new TranscriptError(at("capture maps names to paths"));
  const label = typeof raw.id === "string" ? raw.id : String(index + 1);
  return {
    index,
    label: cleanup ? `cleanup ${label}` : label,
    title: typeof raw.title === "string" ? raw.title : `${request.method} ${request.path}`,
    request: checked(checkRequest, request, "request", at),
    ...(raw.expect !== undefined ? { expect: raw.expect as Expectation } : {}),
    ...(raw.capture !== undefined ? { capture: raw.capture as Record<string, string> } : {}),
    ...(raw.poll !== undefined ? { poll: checked(checkPoll, raw.poll, "poll", at) } : {}),
    ...(raw.repeat !== undefined ? { repeat: checked(checkRepeat, raw.repeat, "repeat", at) } : {}),
    ...(raw.paginate !== undefined ? { paginate: checked(checkPaginate, raw.paginate, "paginate", at) } : {}),
    ...(raw.expectItems !== undefined ? { expectItems: raw.expectItems } : {}),
    rules: stringList(raw.rules ?? [], at("rules")),
    golden: raw.golden === true,
    goldenIgnore: stringList(raw.goldenIgnore ?? [], at("goldenIgnore")),
    cleanup,
  };
}

/** The value as a T, or a TranscriptError naming the step and the field (`steps[2]: poll.maxAttempts must be …`). */
function checked<T>(check: SchemaCheck<T>, value: unknown, name: string, at: (s: string) => string): T {
  const result = check(value);
  if (!result.ok) throw new TranscriptError(at(describeProblem(result.problem, name)));
  return result.value;
}

function checkExpectation(raw: unknown, at: (s: string) => string): void {
  if (!isObject(raw)) throw new TranscriptError(at("an expectation is a mapping"));
  for (const key of Object.keys(raw))
    if (!EXPECT_KEYS.has(key))
      throw new TranscriptError(at(`expect: unknown key ${key} (allowed: ${[...EXPECT_KEYS].join(", ")})`));
  if (raw.stream !== undefined) {
    if (!isObject(raw.stream)) throw new TranscriptError(at("expect.stream is a mapping"));
    for (const key of Object.keys(raw.stream))
      if (!STREAM_KEYS.has(key)) throw new TranscriptError(at(`expect.stream: unknown key ${key}`));
  }
  if (raw.anyOf !== undefined) {
    if (!Array.isArray(raw.anyOf)) throw new TranscriptError(at("expect.anyOf is a list"));
    for (const alt of raw.anyOf) checkExpectation(alt, at);
  }
}

function stringList(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string"))
    throw new TranscriptError(`${where} must be a list of strings`);
  return value;
}

function fail(message: string): never {
  throw new TranscriptError(message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
