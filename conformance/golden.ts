/**
 * Goldens: what the reference server answered to each step of a transcript, recorded by
 * `conformance record` into `goldens/<area>/<name>.yaml`, so a behaviour change shows as
 * a diff in review. Streams keep the raw event text the reference produced.
 *
 * Recording normalises what changes from run to run and from implementation to
 * implementation without meaning anything:
 * - values of the transcript's variables, captures and profile values become `{{name}}`
 *   again (a dataset id made from `{{run}}`, the account id, the model name);
 * - generated ids (`resp_…`, `msg_…`, `req_…`, `sft-…`) become stable placeholders of the
 *   same shape, numbered in order of appearance, so ids that were equal stay equal;
 * - date-times become 2026-01-01T00:00:00Z (and Unix creation times its 1767225600).
 *
 * The mock server serves goldens; a step marked `golden: true` is also compared with its
 * golden when the kit runs: the same status, and the same body or event sequence, where
 * model text, token counts, ids, times and sequence numbers may differ (runs of deltas
 * may have any length).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { matchExpectation } from "./checks.ts";
import type { Exchange } from "./http.ts";
import { deepEqual, isPlainObject, type Mismatch } from "./matchers.ts";
import { formatSse, parseSse } from "./sse.ts";
import { interpolate, type Scope } from "./template.ts";
import type { EventPattern, Expectation, Step, Transcript } from "./transcript.ts";

export interface GoldenRequest {
  method: string;
  /** Relative to the base it used, with its query. */
  path: string;
  base?: "origin";
  /** The account role whose key was sent, `none`, or `literal` (a key or header written in the transcript). */
  auth?: string;
  json?: unknown;
  body?: string;
}

export interface GoldenResponse {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
  text?: string;
  sse?: string;
}

export interface GoldenExchange {
  request: GoldenRequest;
  response: GoldenResponse;
}

export interface GoldenStep {
  step: number;
  label: string;
  /** The step sends the same request several times (`repeat`), each answered alike. */
  repeated?: boolean;
  exchanges: GoldenExchange[];
}

export interface Golden {
  transcript: string;
  /** Values of the variables at recording time: what the mock answers with before a request binds them. */
  vars: Record<string, unknown>;
  steps: GoldenStep[];
}

/** Steps are numbered from 1; cleanup steps from 1001. */
export function goldenStepNumber(step: Step): number {
  return (step.cleanup ? 1001 : 1) + step.index;
}

export function goldenFile(dir: string, id: string): string {
  return path.join(dir, `${id}.yaml`);
}

export function loadGolden(dir: string, id: string): Golden | undefined {
  const file = goldenFile(dir, id);
  if (!existsSync(file)) return undefined;
  return parseYaml(readFileSync(file, "utf8"), { maxAliasCount: -1 }) as Golden;
}

/** Headers worth keeping: what a client reads. */
const KEPT_HEADERS = ["content-type", "x-provider-class", "x-config-version", "retry-after", "allow"];

// ---------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------

/** Keys whose values legitimately differ between runs and implementations (compared by type only). */
const VOLATILE: Record<string, unknown> = {
  id: "$string",
  item_id: "$string",
  call_id: "$string",
  created_at: "$integer",
  // The response object's compatibility fields: null while in progress, then the finishing second.
  completed_at: "$any",
  created: "$integer",
  sequence_number: "$integer",
  delta: "$any",
  text: "$string",
  arguments: "$string",
  input_tokens: "$integer",
  output_tokens: "$integer",
  total_tokens: "$integer",
  reasoning_tokens: "$integer",
  prompt_tokens: "$integer",
  completion_tokens: "$integer",
  finish_reason: "$any",
  stop_reason: "$any",
  incomplete_details: { $optional: "$any" },
  partial_json: "$string",
  thinking: "$string",
  signature: "$string",
};

/** An expectation made from a golden value: constants stay, volatile keys become type matchers. */
export function goldenExpectation(value: unknown, ignore: string[] = [], key?: string): unknown {
  if (key !== undefined && (ignore.includes(key) || key in VOLATILE)) {
    if (ignore.includes(key)) return { $optional: "$any" };
    const m = VOLATILE[key];
    if (key === "text" && typeof value !== "string") return goldenExpectation(value, ignore);
    return m;
  }
  if (Array.isArray(value)) return value.map((v) => goldenExpectation(v, ignore));
  if (isPlainObject(value)) {
    // Every key of the golden must be there with its value. Other keys are the schema's
    // business: the service's own objects are closed, the vendor formats open.
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = goldenExpectation(v, ignore, k);
    return out;
  }
  // A null of the reference (logprobs, stop_sequence) may be left out by another implementation.
  if (value === null) return "$nullOrAbsent";
  if (typeof value === "string" && value.startsWith("$")) return `$${value}`;
  return value;
}

function isDeltaLike(e: { event: string | undefined; json: unknown }): boolean {
  if (e.event && /delta/.test(e.event) && e.event !== "message_delta") return true;
  const choices = isPlainObject(e.json) ? e.json.choices : undefined;
  return (
    e.event === undefined &&
    Array.isArray(choices) &&
    choices.length > 0 &&
    choices.every(
      (c: unknown) =>
        isPlainObject(c) &&
        c.finish_reason == null &&
        ((isPlainObject(c.delta) && typeof c.delta.content === "string") || typeof c.text === "string"),
    )
  );
}

/** The event sequence of a golden stream as patterns: runs of deltas may have any length. */
export function goldenEventPatterns(sse: string, ignore: string[] = []): EventPattern[] {
  const events = parseSse(sse);
  const patterns: EventPattern[] = [];
  for (const e of events) {
    const data = e.json === undefined ? e.data : goldenExpectation(e.json, ignore);
    const pattern: EventPattern = { event: e.event ?? "message", data };
    const prev = patterns.at(-1);
    if (isDeltaLike(e)) {
      if (prev && prev.repeat === "+" && deepEqual(prev.event, pattern.event) && deepEqual(prev.data, pattern.data))
        continue;
      pattern.repeat = "+";
    }
    patterns.push(pattern);
  }
  return patterns;
}

/** Compares a live exchange with the step's golden (the last recorded exchange of that step). */
export function compareGolden(
  golden: Golden,
  stepIndex: number,
  ex: Exchange,
  ignore: string[],
  scope: Scope,
): Mismatch[] {
  const step = golden.steps.find((s) => s.step === stepIndex + 1);
  const recorded = step?.exchanges.at(-1);
  if (!recorded) return [{ path: "", message: "the golden has no recording of this step; run `conformance record`" }];
  const goldenScope: Scope = (name) => {
    const v = scope(name);
    return v !== undefined ? v : golden.vars[name];
  };
  const r = recorded.response;
  const expect: Expectation = { status: r.status };
  try {
    if (r.sse !== undefined)
      expect.stream = { events: interpolate(goldenEventPatterns(r.sse, ignore), goldenScope) as EventPattern[] };
    else if (r.body !== undefined) expect.body = interpolate(goldenExpectation(r.body, ignore), goldenScope);
  } catch (error) {
    return [
      { path: "", message: `the golden cannot be read with this transcript's variables: ${(error as Error).message}` },
    ];
  }
  return matchExpectation(expect, ex);
}

// ---------------------------------------------------------------------------
// Recording
// ---------------------------------------------------------------------------

export interface GoldenRecorder {
  record(t: Transcript, step: Step, exchanges: Exchange[], substitutions: [string, string][]): void;
}

/** Collects the exchanges of a run and writes one golden per transcript that passed. */
export class GoldenWriter implements GoldenRecorder {
  readonly #dir: string;
  readonly #byTranscript = new Map<string, { golden: Golden; normaliser: Normaliser }>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  record(t: Transcript, step: Step, exchanges: Exchange[], substitutions: [string, string][]): void {
    let entry = this.#byTranscript.get(t.id);
    if (!entry) {
      entry = { golden: { transcript: t.id, vars: {}, steps: [] }, normaliser: new Normaliser() };
      this.#byTranscript.set(t.id, entry);
    }
    const { golden, normaliser } = entry;
    normaliser.substitutions = substitutions;
    for (const [value, name] of substitutions)
      if (!(name in golden.vars) && !PROFILE_ROOTS.has(name.split(/[.[]/)[0] as string)) golden.vars[name] = value;
    const number = goldenStepNumber(step);
    golden.steps = golden.steps.filter((s) => s.step !== number);
    golden.steps.push({
      step: number,
      label: step.label,
      ...(step.repeat ? { repeated: true } : {}),
      exchanges: exchanges.map((ex) => normaliser.exchange(ex, step)),
    });
  }

  /** Writes the goldens of the transcripts given (those that passed); returns the files written. */
  write(ids: string[]): string[] {
    const written: string[] = [];
    for (const id of ids) {
      const entry = this.#byTranscript.get(id);
      if (!entry) continue;
      entry.golden.steps.sort((a, b) => a.step - b.step);
      entry.golden.vars = entry.normaliser.normaliseVars(entry.golden.vars);
      normaliseTimes(entry.golden);
      const file = goldenFile(this.#dir, id);
      mkdirSync(path.dirname(file), { recursive: true });
      const header = `# Recorded from the reference server by \`npm run conformance -- record\`: do not edit by hand.\n# ${id}: what the reference answered to each step, normalised (conformance/golden.ts).\n`;
      writeFileSync(
        file,
        header + stringifyYaml(entry.golden, { lineWidth: 0, aliasDuplicateObjects: false, blockQuote: "literal" }),
      );
      written.push(file);
    }
    return written;
  }
}

/** Request strings longer than this are recorded as their length and hash. */
const LONG = 512;
const FIXED_UNIX_TIME = 1767225600;
const FIXED_TIME = "2026-01-01T00:00:00.000Z";

/** The marker of a long request string: `{{$long:<length>:<sha256 prefix>}}`. */
export function longMarker(value: string): string {
  return `{{$long:${value.length}:${createHash("sha256").update(value).digest("hex").slice(0, 16)}}}`;
}

/**
 * Names that the profile supplies (the mock reads them from its own profile), so a golden
 * does not record them as variables: the roots the mock evaluates, and the addresses.
 */
export const PROFILE_ROOTS = new Set([
  "accounts",
  "models",
  "settings",
  "capabilities",
  "timeouts",
  "account",
  "otherAccount",
  "faults",
  "baseUrl",
  "origin",
]);

const ID = /\b((?:resp|msg|rs|fc|call|chatcmpl|cmpl|req|key|toolu|sft|dpo)[_-])([0-9a-f]{12,40})\b/g;
const DATETIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g;

class Normaliser {
  substitutions: [string, string][] = [];
  readonly #ids = new Map<string, string>();

  exchange(ex: Exchange, step: Step): GoldenExchange {
    const auth =
      typeof step.request.auth === "string"
        ? step.request.auth
        : step.request.auth?.key || step.request.auth?.header
          ? "literal"
          : (step.request.auth?.role ?? (step.request.auth?.scheme === "none" ? "none" : "primary"));
    const request: GoldenRequest = { method: ex.request.method, path: this.text(ex.request.relativePath, true) };
    if (step.request.base === "origin") request.base = "origin";
    if (auth !== "primary") request.auth = auth;
    if (ex.request.json !== undefined) request.json = this.normaliseValue(ex.request.json, true);
    else if (ex.request.bodyLabel !== undefined)
      request.body = `${ex.request.bodyKind}: ${this.text(ex.request.bodyLabel, true)}`;
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const v = ex.headers.get(name);
      if (v !== null) headers[name] = v;
    }
    const response: GoldenResponse = { status: ex.status, headers };
    if (ex.events)
      response.sse = formatSse(
        ex.events.map((e) => ({
          event: e.event,
          data: e.json === undefined ? e.data : JSON.stringify(this.normaliseValue(e.json, false)),
        })),
      );
    else if (ex.isJson) response.body = this.normaliseValue(ex.json, false);
    else if (ex.text !== "") response.text = this.text(ex.text, false);
    return { request, response };
  }

  normaliseValue(value: unknown, request: boolean, key?: string): unknown {
    if (typeof value === "string") {
      // A long request string (a generated input, inline media) is kept as its length and hash.
      if (request && value.length > LONG) return longMarker(value);
      return this.text(value, request);
    }
    // Unix times of creation (created_at, created) and of a response's completion (completed_at) are the same instant in every golden.
    if (
      !request &&
      typeof value === "number" &&
      (key === "created_at" || key === "created" || key === "completed_at") &&
      value > 1e9
    )
      return FIXED_UNIX_TIME;
    if (Array.isArray(value)) return value.map((v) => this.normaliseValue(v, request));
    if (isPlainObject(value)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.normaliseValue(v, request, k);
      return out;
    }
    return value;
  }

  /**
   * The recorded values of variables, each written with the shorter variables it holds
   * (`version: accounts/{{account}}/datasets/{{ds}}/versions/1`), so that the mock derives
   * it from the values a client's requests bind.
   */
  normaliseVars(vars: Record<string, unknown>): Record<string, unknown> {
    const saved = this.substitutions;
    const out: Record<string, unknown> = {};
    try {
      for (const [name, value] of Object.entries(vars)) {
        this.substitutions =
          typeof value === "string" ? saved.filter(([v, n]) => n !== name && v.length < value.length) : [];
        out[name] = this.normaliseValue(value, false);
      }
    } finally {
      this.substitutions = saved;
    }
    return out;
  }

  text(s: string, request: boolean): string {
    let out = s;
    for (const [value, name] of this.substitutions) {
      if (value === "") continue;
      if (value.length >= 6) out = out.split(value).join(`{{${name}}}`);
      else if (out === value) return `{{${name}}}`;
      else out = out.replace(new RegExp(`(?<=^|/)${escapeRe(value)}(?=/|$)`, "g"), `{{${name}}}`);
    }
    if (request) return out;
    out = out.replace(ID, (whole, prefix: string, hex: string) => {
      let mapped = this.#ids.get(whole);
      if (!mapped) {
        mapped = prefix + String(this.#ids.size + 1).padStart(hex.length, "0");
        this.#ids.set(whole, mapped);
      }
      return mapped;
    });
    return out;
  }
}

/**
 * Replaces every date-time of a golden by one instant, 2026-01-01T00:00:00Z: times differ
 * on every recording, and equal times keep every order check of the transcripts true.
 */
function normaliseTimes(golden: Golden): void {
  walkStrings(golden, (s) => s.replace(DATETIME, FIXED_TIME));
}

function walkStrings(value: unknown, fn: (s: string) => string): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++)
      value[i] = typeof value[i] === "string" ? fn(value[i]) : walkStrings(value[i], fn);
  } else if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) value[k] = typeof v === "string" ? fn(v) : walkStrings(v, fn);
  }
  return value;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
