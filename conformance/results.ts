/**
 * What a run reports: the outcomes of transcripts, their failures (one broken rule at one
 * step, with the exchange as sent and received), and the run's report. Also how problems
 * become failures: one per broken rule, the exchange shortened for reading.
 */
import type { Problem } from "./checks.ts";
import type { CoverageSummary } from "./coverage.ts";
import type { Exchange, PreparedRequest } from "./http.ts";
import type { Mismatch } from "./matchers.ts";

/**
 * The outcomes of a transcript, the same words in every report: `passed`; `failed`;
 * `skipped` (the profile lacks a value it requires, a setup it uses failed or was skipped,
 * or the run was interrupted first); `not-implemented` (it calls an operation outside the
 * profile's `implements`).
 */
export type Outcome = "passed" | "failed" | "skipped" | "not-implemented";
export const OUTCOMES: Outcome[] = ["passed", "failed", "skipped", "not-implemented"];

/** What was sent and what came back, as a failure shows it (keys shortened, long bodies cut). */
export interface FailureExchange {
  request: { method: string; url: string; headers: Record<string, string>; body?: unknown };
  response: { status: number; headers: Record<string, string>; body?: unknown };
  /** The SSE events received up to (and including) the one that broke the rule. */
  events?: { event?: string; data: unknown }[];
}

/** One broken rule at one step: several problems under the same rule are one failure, the rest in `details`. */
export interface StepFailure {
  transcript: string;
  step: number | string;
  /** The rule (conformance/rules.yaml), `contract:<operation>` for a schema, or `kit.*` for the kit's own limits. */
  rule?: string;
  message: string;
  /** The other problems under the same rule at this step. */
  details?: string[];
  expected?: unknown;
  received?: unknown;
  requestId?: string;
  /** The filled-in request, the answer and its events up to the failure. */
  exchange?: FailureExchange;
}

export interface TranscriptResult {
  transcript: string;
  title: string;
  status: Outcome;
  reason?: string;
  durationMs: number;
  rules: string[];
  requests: number;
  failures: StepFailure[];
}

/** A transcript running when the run's time limit passed. */
export interface InFlight {
  transcript: string;
  step: string;
  /** `METHOD url` of the request sent and not yet answered, if any (else it was waiting between requests). */
  request?: string;
}

export interface RunReport {
  passed: number;
  failed: number;
  skipped: number;
  notImplemented: number;
  /** Ctrl-C (the signal) ended the run early; cleanups ran. */
  interrupted: boolean;
  /** The run's time limit (`timeLimitMs`) passed: what was in flight failed, what had not started was skipped. */
  timedOut: boolean;
  /** What was running when the time limit passed: the transcript, its step and the request awaiting an answer. */
  inFlight: InFlight[];
  /**
   * Datasets and jobs the run made that a service still showed after the cleanup (`name (why)`),
   * or all it made with `cleanUp: false`. A 429 that a retry or a GET resolved is not here.
   */
  leftBehind: string[];
  /** Models trained by the run's jobs: they stay, since the interface cannot delete a model. */
  modelsLeft: string[];
  /** What the run made: datasets and fine-tuning jobs (cancelled and deleted at its end unless `cleanUp: false`). */
  made: { datasets: number; jobs: number };
  failures: StepFailure[];
  results: { transcript: string; status: Outcome; reason?: string; durationMs: number }[];
  coverage: CoverageSummary;
  durationMs: number;
  /** Extra detail: per transcript results with titles, rules and request counts. */
  details: TranscriptResult[];
  profile: string;
  contractVersion: string;
  runId: string;
  requests: number;
  /** Milliseconds spent waiting out the service's rate limits (Retry-After of unexpected 429 TENANT_RATE_LIMITED). */
  rateLimitWaitedMs: number;
}

/**
 * One entry per broken rule, in the order first seen. A problem's rule is its own, else
 * the header rule of the header it is about (`headers.x-request-id`, whichever check saw
 * it), else the step's (or transcript's) first rule. An expectation about a field the
 * contract or a protocol check already faulted is the same fault seen again, and dropped.
 */
export function groupByRule(
  problems: Problem[],
  fallbackRule: string,
  ruleIds: Set<string>,
): { rule: string; first: Problem; rest: Problem[] }[] {
  const ruleOf = (p: Problem): string => {
    const header = /^headers\.([a-z0-9-]+)$/i.exec(p.at ?? "")?.[1]?.toLowerCase();
    if (header && ruleIds.has(`headers.${header}`) && (p.rule === undefined || p.kind !== "protocol"))
      return `headers.${header}`;
    return p.rule ?? fallbackRule;
  };
  const faulted = problems.filter((p) => p.kind !== "expectation" && p.at).map((p) => p.at as string);
  const covered = (at: string | undefined) =>
    at !== undefined && faulted.some((f) => at === f || at.startsWith(`${f}.`) || at.startsWith(`${f}[`));
  const groups = new Map<string, { rule: string; first: Problem; rest: Problem[] }>();
  for (const p of problems) {
    if (p.kind === "expectation" && covered(p.at)) continue;
    const rule = ruleOf(p);
    const group = groups.get(rule);
    // Two checks that saw the same fault (the contract's required header and the protocol's) report it once.
    if (group && p.at !== undefined && [group.first, ...group.rest].some((q) => q.at === p.at)) continue;
    if (group) group.rest.push(p);
    else groups.set(rule, { rule, first: p, rest: [] });
  }
  return [...groups.values()];
}

const SHOWN_BODY_CHARS = 4000;

/** The exchange as a failure shows it: keys shortened to their first characters, long text cut. */
export function failureExchange(ex: Exchange, problems: Problem[]): FailureExchange {
  const out: FailureExchange = {
    ...requestOnly(ex.request),
    response: {
      status: ex.status,
      headers: headerObject(ex.headers),
      ...(ex.isJson ? { body: ex.json } : ex.text && !ex.events ? { body: cut(ex.text) } : {}),
    },
  };
  if (ex.events) {
    const indexes = problems
      .map((p) => /^events\[(\d+)\]/.exec(p.at ?? "")?.[1])
      .filter((i) => i !== undefined)
      .map(Number);
    const upTo = indexes.length ? Math.min(...indexes) + 1 : ex.events.length;
    out.events = ex.events
      .slice(0, Math.min(upTo, 200))
      .map((e) => ({ ...(e.event !== undefined ? { event: e.event } : {}), data: e.json ?? e.data }));
  }
  return out;
}

export function requestOnly(request: PreparedRequest): FailureExchange {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers))
    headers[k] = /^(authorization|x-api-key)$/.test(k) ? redact(v) : v;
  const body =
    request.json !== undefined
      ? request.json
      : request.bodyLabel !== undefined
        ? `(${request.bodyKind ?? "body"}: ${request.bodyLabel})`
        : typeof request.body === "string"
          ? cut(request.body)
          : undefined;
  return {
    request: { method: request.method, url: request.url, headers, ...(body !== undefined ? { body } : {}) },
    response: { status: 0, headers: {} },
  };
}

/** `Bearer sk-dev-acme-0000…` → `Bearer sk-dev…(48 chars)`: enough to tell keys apart, not to use one. */
function redact(value: string): string {
  const [scheme, key] = value.includes(" ") ? (value.split(" ", 2) as [string, string]) : ["", value];
  const shown = key.length > 10 ? `${key.slice(0, 6)}…(${key.length} chars)` : "…";
  return scheme ? `${scheme} ${shown}` : shown;
}

function headerObject(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

function cut(text: string): string {
  return text.length > SHOWN_BODY_CHARS ? `${text.slice(0, SHOWN_BODY_CHARS)}… (${text.length} characters)` : text;
}

export function mismatchProblem(m: Mismatch): Problem {
  return {
    kind: "expectation",
    message: m.message,
    at: m.path,
    ...(m.expected !== undefined ? { expected: m.expected } : {}),
    ...(m.received !== undefined ? { received: m.received } : {}),
  };
}
