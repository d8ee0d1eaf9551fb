/**
 * The runner: replays transcripts as a client against a server. For each transcript it
 * resolves the setups it uses, evaluates its variables, sends each step's request (once,
 * repeated, paged or polled), checks every answer (contract, protocol, expectation,
 * golden), captures values for later steps, and always runs the cleanup steps.
 */
import { randomBytes, createHash } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { didYouMean, implementedOperations, missingOperations } from "./capabilities.ts";
import { checkExchange, checkSameAndDistinct, exchangeView, matchExpectation, type Problem } from "./checks.ts";
import { Contract } from "./contract.ts";
import { CoverageTracker, loadRules, type CoverageSummary, type Rule } from "./coverage.ts";
import { compareGolden, loadGolden, type Golden, type GoldenRecorder } from "./golden.ts";
import { buildBody, send, TransportError, type Exchange, type PreparedRequest } from "./http.ts";
import { getPath, match, type Mismatch } from "./matchers.ts";
import { profileHas, type Profile } from "./profile.ts";
import { interpolate, interpolateText, TemplateError, type Scope } from "./template.ts";
import {
  kitRoot,
  loadTranscripts,
  transcriptsDir,
  type Expectation,
  type Step,
  type Transcript,
} from "./transcript.ts";

export interface RunOptions {
  profile: Profile;
  /** Only transcripts of these areas (and the setups they use). */
  areas?: string[];
  /** Only these transcripts, by id (`responses/stream-events`) or name. */
  transcripts?: string[];
  stopOnFirstFailure?: boolean;
  /** Transcripts running at once; default the profile's `concurrency`. */
  concurrency?: number;
  /** Pre-loaded transcripts (default: everything under conformance/transcripts). */
  transcriptList?: Transcript[];
  contract?: Contract;
  rules?: Rule[];
  fixturesDir?: string;
  goldensDir?: string;
  /** Where each transcript's requests go (the mock server serves each transcript at its own prefix). */
  targetFor?: (transcript: Transcript) => { baseUrl: string; origin: string };
  /** Called as each transcript ends. */
  onResult?: (result: TranscriptResult) => void;
  /** Record mode: receives every exchange of every step. */
  recorder?: GoldenRecorder;
  /** Fixed run id (default random): the `{{run}}` variable. */
  runId?: string;
  /**
   * Remove what the run made at its end (default true): every job it created is cancelled
   * and every dataset deleted, whatever the transcripts' own cleanup did. False keeps
   * them for inspection (and suits a mock that only replays recordings).
   */
  cleanUp?: boolean;
  /**
   * Interrupts the run (Ctrl-C): requests in flight are aborted, no further step or
   * transcript starts, and every cleanup still runs (without the signal).
   */
  signal?: AbortSignal;
}

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

export interface RunReport {
  passed: number;
  failed: number;
  skipped: number;
  notImplemented: number;
  /** Ctrl-C (the signal) ended the run early; cleanups ran. */
  interrupted: boolean;
  /** Datasets the run made that were still there after its cleanup (names), or all it made with `cleanUp: false`. */
  leftBehind: string[];
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

/** The run was interrupted (the signal): the transcript stops where it is, its cleanup runs. */
class Interrupted extends Error {
  override name = "Interrupted";
}

class StepFailed extends Error {
  readonly failures: StepFailure[];
  constructor(failures: StepFailure[]) {
    super(failures[0]?.message ?? "step failed");
    this.failures = failures;
  }
}

interface SetupOutcome {
  status: Outcome;
  reason?: string;
  exports: Record<string, unknown>;
}

export async function runConformance(options: RunOptions): Promise<RunReport> {
  const started = performance.now();
  const contract = options.contract ?? Contract.load();
  const rules = options.rules ?? loadRules();
  const all = options.transcriptList ?? loadTranscripts(transcriptsDir());
  const byId = new Map(all.map((t) => [t.id, t]));
  const runId = options.runId ?? `r${randomBytes(5).toString("hex")}`;
  const coverage = new CoverageTracker(contract, rules);
  const ctx: RunContext = {
    options,
    contract,
    coverage,
    runId,
    fixturesDir: options.fixturesDir ?? path.join(kitRoot(), "fixtures"),
    goldensDir: options.goldensDir ?? path.join(kitRoot(), "goldens"),
    byId,
    setups: new Map(),
    requests: 0,
    rateLimitWaitedMs: 0,
    rateLimitWaitingUntil: 0,
    deferredCleanups: [],
    created: [],
    ruleIds: new Set(rules.map((r) => r.id)),
    requestIds: new Map(),
    stopped: false,
  };

  const selected = select(all, options);
  const implemented = implementedOperations(contract, options.profile.implements);
  const results: TranscriptResult[] = [];
  const runnable: Transcript[] = [];
  for (const t of selected) {
    const missing = implemented ? missingOperations(t, byId, contract, implemented) : [];
    if (missing.length)
      results.push({
        transcript: t.id,
        title: t.title,
        status: "not-implemented",
        reason: `calls ${missing.join(", ")}, which the profile does not implement`,
        durationMs: 0,
        rules: t.rules,
        requests: 0,
        failures: [],
      });
    else runnable.push(t);
  }
  if (runnable.length === 0)
    throw new SelectionError(
      `nothing to run: the ${selected.length} selected transcripts all call operations outside the profile's implements (${options.profile.implements?.join(", ")})`,
    );
  const shared = runnable.filter((t) => !t.exclusive);
  const exclusive = runnable.filter((t) => t.exclusive);
  const finish = (r: TranscriptResult) => {
    results.push(r);
    if (r.status === "failed" && options.stopOnFirstFailure) ctx.stopped = true;
    options.onResult?.(r);
  };

  const concurrency = Math.max(1, options.concurrency ?? options.profile.concurrency);
  let next = 0;
  const worker = async () => {
    while (!ctx.stopped && !options.signal?.aborted && next < shared.length) {
      const t = shared[next++] as Transcript;
      finish(await runOne(t, ctx));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, shared.length) }, worker));
  for (const t of exclusive) {
    if (ctx.stopped || options.signal?.aborted) break;
    finish(await runOne(t, ctx));
  }
  // What setups made (datasets, jobs) is removed when everything that used it is done, last made first.
  for (const cleanup of ctx.deferredCleanups.reverse()) await cleanup();
  const leftBehind = options.cleanUp === false ? ctx.created.map((c) => c.name) : await removeCreated(ctx);
  const interrupted = options.signal?.aborted === true;
  if (interrupted) {
    const ran = new Set(results.map((r) => r.transcript));
    for (const t of runnable)
      if (!ran.has(t.id))
        results.push({
          transcript: t.id,
          title: t.title,
          status: "skipped",
          reason: "not run: the run was interrupted",
          durationMs: 0,
          rules: t.rules,
          requests: 0,
          failures: [],
        });
  }
  // Setups count as transcripts too: a failed setup is a failure of the implementation.
  for (const [id, outcome] of ctx.setups) {
    const o = await outcome;
    if (o.result) results.push(o.result);
    else if (o.status === "failed")
      results.push({
        transcript: id,
        title: id,
        status: "failed",
        reason: o.reason ?? "",
        durationMs: 0,
        rules: [],
        requests: 0,
        failures: [],
      });
  }
  results.sort((a, b) => a.transcript.localeCompare(b.transcript));

  const failures = results.flatMap((r) => r.failures);
  return {
    passed: results.filter((r) => r.status === "passed").length,
    failed: results.filter((r) => r.status === "failed").length,
    skipped: results.filter((r) => r.status === "skipped").length,
    notImplemented: results.filter((r) => r.status === "not-implemented").length,
    interrupted,
    leftBehind,
    made: {
      datasets: ctx.created.filter((c) => c.kind === "dataset").length,
      jobs: ctx.created.filter((c) => c.kind === "job").length,
    },
    failures,
    results: results.map((r) => ({
      transcript: r.transcript,
      status: r.status,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      durationMs: r.durationMs,
    })),
    coverage: coverage.summary(),
    durationMs: performance.now() - started,
    details: results,
    profile: options.profile.name,
    contractVersion: contract.version,
    runId,
    requests: ctx.requests,
    rateLimitWaitedMs: ctx.rateLimitWaitedMs,
  };
}

interface Created {
  kind: "dataset" | "job";
  name: string;
  method: string;
  url: string;
  headers: Record<string, string>;
}

/**
 * Cancels every job the run created (a finished one refuses, which is fine) and then
 * deletes every dataset; answers to both are ignored but for what they say was left: a
 * dataset whose DELETE was neither 2xx nor 404 is returned as left behind. Fine-tuned
 * models stay: the interface has no operation that deletes a model.
 */
async function removeCreated(ctx: RunContext): Promise<string[]> {
  const timeoutMs = ctx.options.profile.timeouts.requestMs;
  const leftBehind: string[] = [];
  const jobs = ctx.created.filter((c) => c.kind === "job");
  const datasets = ctx.created.filter((c) => c.kind === "dataset");
  const call = async (c: Pick<Created, "method" | "url" | "headers">): Promise<Exchange | undefined> => {
    ctx.requests++;
    try {
      return await send(
        {
          method: c.method,
          url: c.url,
          relativePath: c.url,
          apiPath: c.url,
          headers: { ...c.headers, ...(c.method === "POST" ? { "content-type": "application/json" } : {}) },
          ...(c.method === "POST" ? { body: "{}" } : {}),
        },
        timeoutMs,
      );
    } catch {
      return undefined;
    }
  };
  const concurrency = Math.max(1, ctx.options.concurrency ?? ctx.options.profile.concurrency);
  await eachAtOnce(jobs, concurrency, async (job) => {
    await call(job);
    // A job may have made a dataset of its own (the evaluation rows it held out): that goes too.
    const read = await call({ method: "GET", url: job.url.replace(/:cancel$/, ""), headers: job.headers });
    const evaluation = /^accounts\/[^/]+\/datasets\/[^/]+/.exec(
      String((read?.json as { evaluationDatasetVersion?: unknown } | undefined)?.evaluationDatasetVersion ?? ""),
    )?.[0];
    const base = job.url.slice(0, job.url.indexOf("/accounts/"));
    if (evaluation && !datasets.some((d) => d.name === evaluation))
      datasets.push({
        kind: "dataset",
        name: evaluation,
        method: "DELETE",
        url: `${base}/${evaluation}`,
        headers: job.headers,
      });
  });
  await eachAtOnce(datasets, concurrency, async (dataset) => {
    const status = (await call(dataset))?.status;
    if (status === undefined || (status !== 404 && (status < 200 || status > 299)))
      leftBehind.push(`${dataset.name} (DELETE → ${status ?? "no answer"})`);
  });
  return leftBehind.sort();
}

/** Runs `work` on every item, at most `limit` at once (the run's concurrency, so the cleanup loads the service no more than the run did). */
async function eachAtOnce<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A selection (areas, transcripts) that names nothing, or matches nothing: a usage error, never an empty pass. */
export class SelectionError extends Error {
  override name = "SelectionError";
}

/** The transcripts `--area` and `--transcript` select; an unknown name is an error with the closest names. */
export function select(all: Transcript[], options: Pick<RunOptions, "areas" | "transcripts">): Transcript[] {
  const candidates = all.filter((t) => !t.setup);
  const areas = [...new Set(candidates.map((t) => t.area))];
  for (const area of options.areas ?? []) {
    if (!areas.includes(area))
      throw new SelectionError(
        `no area ${JSON.stringify(area)}${didYouMean(area, areas) || ` (areas: ${areas.join(", ")}; to run only what an implementation has, list it in the profile's implements)`}`,
      );
  }
  const named = (t: Transcript, x: string) => x === t.id || x === t.name || x === `${t.id}.yaml`;
  for (const x of options.transcripts ?? []) {
    if (candidates.some((t) => named(t, x))) continue;
    // Close by id, else by name in another area (responses/stream-text → events/stream-text).
    const name = x.split("/").at(-1) ?? x;
    const hint =
      didYouMean(
        x,
        candidates.map((t) => t.id),
      ) ||
      didYouMean(
        name,
        candidates.map((t) => t.name),
      ).replace(
        /did you mean (.*)\?/,
        (_, names: string) =>
          `did you mean ${names
            .split(", ")
            .map((n) => candidates.find((t) => t.name === n)?.id ?? n)
            .join(", ")}?`,
      );
    throw new SelectionError(`no transcript ${JSON.stringify(x)}${hint}`);
  }
  const selected = candidates.filter(
    (t) =>
      (!options.areas?.length || options.areas.includes(t.area)) &&
      (!options.transcripts?.length || options.transcripts.some((x) => named(t, x))),
  );
  if (selected.length === 0)
    throw new SelectionError(
      `no transcript matches --area ${options.areas?.join(", ")} and --transcript ${options.transcripts?.join(", ")} together`,
    );
  return selected;
}

interface RunContext {
  options: RunOptions;
  contract: Contract;
  coverage: CoverageTracker;
  runId: string;
  fixturesDir: string;
  goldensDir: string;
  byId: Map<string, Transcript>;
  setups: Map<string, Promise<SetupOutcome & { result?: TranscriptResult }>>;
  requests: number;
  /** Time spent honouring Retry-After of unexpected rate limits (wall time: waits that overlap count once). */
  rateLimitWaitedMs: number;
  /** When the latest of the waits in progress ends (performance.now()). */
  rateLimitWaitingUntil: number;
  /** Rule ids of the catalogue. */
  ruleIds: Set<string>;
  /** What the run made (datasets, jobs), removed at its end. */
  created: Created[];
  /** Cleanups of setups, run at the end of the run. */
  deferredCleanups: (() => Promise<void>)[];
  /** Every x-request-id seen in the run, with where: an id handles one request, so a repeat is a fault. */
  requestIds: Map<string, { where: string; exchange: Exchange }>;
  stopped: boolean;
}

function runSetup(id: string, ctx: RunContext): Promise<SetupOutcome & { result?: TranscriptResult }> {
  let pending = ctx.setups.get(id);
  if (!pending) {
    const t = ctx.byId.get(id);
    pending = t
      ? (async () => {
          const exports: Record<string, unknown> = {};
          const result = await runOne(t, ctx, exports);
          return {
            status: result.status,
            ...(result.reason !== undefined ? { reason: result.reason } : {}),
            exports,
            result,
          };
        })()
      : Promise.resolve({ status: "failed" as const, reason: `setup ${id} does not exist`, exports: {} });
    ctx.setups.set(id, pending);
  }
  return pending;
}

async function runOne(t: Transcript, ctx: RunContext, exportsOut?: Record<string, unknown>): Promise<TranscriptResult> {
  const started = performance.now();
  const base: Omit<TranscriptResult, "status" | "durationMs"> = {
    transcript: t.id,
    title: t.title,
    rules: t.rules,
    requests: 0,
    failures: [],
  };
  const done = (status: TranscriptResult["status"], reason?: string): TranscriptResult => ({
    ...base,
    status,
    ...(reason !== undefined ? { reason } : {}),
    durationMs: Math.round(performance.now() - started),
  });

  const missing = t.requires.filter((r) => !profileHas(ctx.options.profile, r));
  if (missing.length) return done("skipped", `the profile lacks ${missing.join(", ")}`);

  const setups: Record<string, Record<string, unknown>> = {};
  for (const [alias, id] of Object.entries(t.uses)) {
    const outcome = await runSetup(id, ctx);
    if (outcome.status === "skipped" || outcome.status === "not-implemented")
      return done("skipped", `setup ${id} was skipped: ${outcome.reason ?? ""}`);
    // The setup's failure is reported once, as the setup's; what needed it cannot run.
    if (outcome.status === "failed") return done("skipped", `setup ${id} failed (see its failures)`);
    setups[alias] = outcome.exports;
  }

  const target = ctx.options.targetFor?.(t) ?? {
    baseUrl: ctx.options.profile.baseUrl,
    origin: ctx.options.profile.origin,
  };
  const vars: Record<string, unknown> = {};
  const tag = `${ctx.runId}-${createHash("sha256").update(t.id).digest("hex").slice(0, 6)}`;
  const scope = makeScope(ctx, t, vars, setups, tag, target);
  const golden = loadGolden(ctx.goldensDir, t.id);
  const runner = new TranscriptRun(t, ctx, scope, vars, target, golden, base);

  let status: TranscriptResult["status"] = "passed";
  let reason: string | undefined;
  try {
    for (const [name, value] of Object.entries(t.vars)) vars[name] = interpolate(value, scope);
    for (const step of t.steps) await runner.step(step);
    if (exportsOut) for (const [name, value] of Object.entries(t.exports)) exportsOut[name] = interpolate(value, scope);
  } catch (error) {
    if (error instanceof Interrupted) {
      status = "skipped";
      reason = `interrupted at step ${runner.currentLabel}`;
    } else {
      status = "failed";
      if (error instanceof StepFailed) base.failures.push(...error.failures);
      else
        base.failures.push({
          transcript: t.id,
          step: runner.currentLabel,
          rule: "kit.error",
          message:
            error instanceof Error
              ? `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`
              : String(error),
        });
      reason = base.failures[0]?.message;
    }
  } finally {
    // A setup's cleanup waits for the end of the run: the transcripts using what it made come first.
    const cleanup = () => runner.cleanup(t.cleanup);
    if (t.setup) ctx.deferredCleanups.push(cleanup);
    else await cleanup();
  }
  const result = done(status, reason);
  ctx.coverage.rules([...t.rules, ...t.steps.flatMap((s) => s.rules), ...runner.rulesChecked], status === "passed");
  return result;
}

function makeScope(
  ctx: RunContext,
  t: Transcript,
  vars: Record<string, unknown>,
  setups: Record<string, unknown>,
  tag: string,
  target: { baseUrl: string; origin: string },
): Scope {
  const p = ctx.options.profile;
  const builtins: Record<string, unknown> = {
    run: ctx.runId,
    tag,
    transcript: t.id,
    baseUrl: target.baseUrl,
    origin: target.origin,
    account: p.accounts.primary.id,
    otherAccount: p.accounts.secondary.id,
    accounts: p.accounts,
    models: p.models,
    settings: p.settings,
    capabilities: p.capabilities,
    timeouts: p.timeouts,
    faults: p.faults,
  };
  return (name) => {
    if (name in vars) return vars[name];
    if (name in setups) return setups[name];
    return builtins[name];
  };
}

class TranscriptRun {
  readonly #t: Transcript;
  readonly #ctx: RunContext;
  readonly #scope: Scope;
  readonly #vars: Record<string, unknown>;
  readonly #target: { baseUrl: string; origin: string };
  readonly #golden: Golden | undefined;
  readonly #result: Omit<TranscriptResult, "status" | "durationMs">;
  readonly rulesChecked = new Set<string>();
  currentLabel: string = "-";

  constructor(
    t: Transcript,
    ctx: RunContext,
    scope: Scope,
    vars: Record<string, unknown>,
    target: { baseUrl: string; origin: string },
    golden: Golden | undefined,
    result: Omit<TranscriptResult, "status" | "durationMs">,
  ) {
    this.#t = t;
    this.#ctx = ctx;
    this.#scope = scope;
    this.#vars = vars;
    this.#target = target;
    this.#golden = golden;
    this.#result = result;
  }

  /** Cleanup is best effort: it must not turn a pass into a failure, nor hide the first failure; it runs even when interrupted. */
  async cleanup(steps: Step[]): Promise<void> {
    for (const step of steps) {
      try {
        await this.step(step);
      } catch {
        // Ignored, as above.
      }
    }
  }

  async step(step: Step): Promise<void> {
    if (this.#ctx.options.signal?.aborted && !step.cleanup) throw new Interrupted();
    this.currentLabel = step.label;
    const expect = step.expect ? (this.#interp(step.expect) as Expectation) : undefined;
    let final: Exchange;
    let extra: Record<string, unknown> = {};
    let recorded: Exchange[] | undefined;
    if (step.paginate) {
      const { exchanges, items } = await this.#paginate(step, expect);
      final = exchanges.at(-1) as Exchange;
      recorded = exchanges;
      extra = { items, pages: exchanges.length };
    } else if (step.repeat) {
      const exchanges = await this.#repeat(step, expect);
      final = exchanges[0] as Exchange;
      recorded = [final];
      extra = { responses: exchanges.map((e) => exchangeView(e)) };
    } else if (step.poll) {
      final = await this.#poll(step, expect);
    } else {
      final = await this.#send(step);
      this.#check(step, final, expect);
    }
    if (step.golden && !step.cleanup && !this.#ctx.options.recorder) {
      const problems = this.#golden
        ? compareGolden(this.#golden, step.index, final, step.goldenIgnore, this.#scope)
        : [{ path: "", message: "the step is compared with its golden, but there is none; run `conformance record`" }];
      if (problems.length)
        this.#fail(
          step,
          final,
          problems.map((m) => ({
            kind: "expectation",
            rule: "golden",
            message: `${m.path ? `${m.path}: ` : ""}${m.message} (golden goldens/${this.#t.id}.yaml)`,
            expected: m.expected,
            received: m.received,
          })),
        );
    }
    if (step.capture) {
      const view = { ...exchangeView(final), ...extra };
      for (const [name, p] of Object.entries(step.capture)) {
        const value = getPath(view, interpolateText(p, this.#scope));
        if (value === undefined)
          this.#fail(step, final, [{ kind: "expectation", message: `capture ${name}: nothing at ${p}`, at: p }]);
        this.#vars[name] = value;
      }
    }
    this.#ctx.options.recorder?.record(this.#t, step, recorded ?? [final], this.substitutions());
  }

  /** Values of the variables this transcript uses, longest first, for writing goldens with `{{name}}` again. */
  substitutions(): [string, string][] {
    const pairs: [string, string][] = [];
    const seen = new Set<string>();
    const add = (value: unknown, name: string) => {
      if (typeof value !== "string" || value === "" || seen.has(value)) return;
      seen.add(value);
      pairs.push([value, name]);
    };
    for (const [name, value] of Object.entries(this.#vars)) add(value, name);
    for (const expr of this.#t.document.toString().matchAll(/\{\{\s*([A-Za-z_][\w.-]*(?:\[\d+\])?)\s*\}\}/g)) {
      const name = expr[1] as string;
      try {
        add(interpolate(`{{${name}}}`, this.#scope), name);
      } catch {
        // Not defined yet (a capture of a later step).
      }
    }
    add(this.#scope("tag"), "tag");
    add(this.#scope("run"), "run");
    return pairs.sort((a, b) => b[0].length - a[0].length);
  }

  #interp(value: unknown): unknown {
    try {
      return interpolate(value, this.#scope);
    } catch (error) {
      if (error instanceof TemplateError)
        throw new StepFailed([
          {
            transcript: this.#t.id,
            step: this.currentLabel,
            rule: "transcript",
            message: `transcript error: ${error.message}`,
          },
        ]);
      throw error;
    }
  }

  #prepare(step: Step, queryOverride?: Record<string, string>): PreparedRequest {
    const spec = this.#interp(step.request) as Step["request"];
    const base = spec.base === "origin" ? this.#target.origin : this.#target.baseUrl;
    let rel = spec.path;
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...spec.query, ...queryOverride })) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v])
        query.append(k, typeof item === "string" ? item : JSON.stringify(item));
    }
    const qs = query.toString().replace(/%3A/gi, ":");
    if (qs) rel += (rel.includes("?") ? "&" : "?") + qs;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(spec.headers ?? {}))
      if (v !== undefined && v !== null) headers[k.toLowerCase()] = String(v);
    this.#auth(spec.auth, headers);
    const body = buildBody(spec, this.#ctx.fixturesDir);
    const declaredLength = spec.declaredLength === undefined ? undefined : Number(spec.declaredLength);
    if (declaredLength !== undefined && !(Number.isSafeInteger(declaredLength) && declaredLength > 0)) {
      throw new StepFailed([
        {
          transcript: this.#t.id,
          step: step.label,
          rule: "transcript",
          message: `declaredLength must be a whole number of bytes above 0, not ${String(spec.declaredLength)}`,
        },
      ]);
    }
    if (body.contentType && headers["content-type"] === undefined) headers["content-type"] = body.contentType;
    const apiPath = spec.base === "origin" ? (rel.startsWith("/v1/") ? rel.slice(3) : rel) : rel;
    return {
      method: spec.method.toUpperCase(),
      url: base + rel,
      relativePath: rel,
      apiPath,
      headers,
      ...(body.body !== undefined ? { body: body.body } : {}),
      ...(spec.json !== undefined ? { json: spec.json } : {}),
      ...(body.kind ? { bodyKind: body.kind } : {}),
      ...(body.label ? { bodyLabel: body.label } : {}),
      ...(declaredLength !== undefined
        ? { declaredLength, bodyKind: "declared" as const, bodyLabel: `${declaredLength} bytes, none sent` }
        : {}),
    };
  }

  #auth(auth: Step["request"]["auth"], headers: Record<string, string>): void {
    const spec = typeof auth === "string" ? { role: auth } : (auth ?? {});
    if (spec.role === "none" || spec.scheme === "none") return;
    if (spec.header) {
      headers[spec.header.toLowerCase()] = spec.value ?? "";
      return;
    }
    let key = spec.key;
    if (key === undefined) {
      const role = spec.role ?? "primary";
      const account = this.#ctx.options.profile.accounts[role];
      if (!account)
        throw new StepFailed([
          {
            transcript: this.#t.id,
            step: this.currentLabel,
            rule: "transcript",
            message: `the profile has no account role ${role} (declare it in requires)`,
          },
        ]);
      key = account.key;
    }
    if (spec.scheme === "x-api-key") headers["x-api-key"] = key;
    else headers.authorization = `Bearer ${key}`;
  }

  async #send(step: Step, queryOverride?: Record<string, string>): Promise<Exchange> {
    const request = this.#prepare(step, queryOverride);
    for (let attempt = 0; ; attempt++) {
      this.#ctx.requests++;
      this.#result.requests++;
      const signal = step.cleanup ? undefined : this.#ctx.options.signal;
      if (signal?.aborted) throw new Interrupted();
      let ex: Exchange;
      try {
        ex = await send(request, this.#ctx.options.profile.timeouts.requestMs, signal);
      } catch (error) {
        if (signal?.aborted) throw new Interrupted();
        if (error instanceof TransportError)
          throw new StepFailed([
            {
              transcript: this.#t.id,
              step: step.label,
              rule: "transport",
              message: error.message,
              exchange: requestOnly(request),
            },
          ]);
        throw error;
      }
      this.#noteCreated(ex);
      const wait = this.#rateLimitWait(step, ex, attempt);
      if (wait === undefined) return ex;
      // The answer is still a 429 of the contract: checked like any other.
      const problems = this.#checkQuietly(step, ex, undefined);
      if (problems.length) this.#fail(step, ex, problems);
      if (wait === "budget spent") {
        const budget = this.#ctx.options.profile.timeouts.rateLimitWaitMs;
        this.#fail(step, ex, [
          {
            kind: "protocol",
            rule: "kit.rate-limit-budget",
            message: `gave up after ${Math.round(this.#ctx.rateLimitWaitedMs / 1000)} s of Retry-After: the service rate-limited this run (429 TENANT_RATE_LIMITED, Retry-After ${ex.headers.get("retry-after")}, ${attempt} retries of this request) beyond what the kit waits (3 retries per request, timeouts.rateLimitWaitMs ${Math.round(budget / 1000)} s per run); run again when the account's window has passed, or raise the budget`,
          },
        ]);
      }
      this.#noteRateLimitWait(wait);
      try {
        await sleep(wait, undefined, signal ? { signal } : {});
      } catch {
        throw new Interrupted();
      }
    }
  }

  /**
   * Remembers what an answer says the service made (a dataset, a fine-tuning job), with the
   * key that made it, so the run can remove it at the end whatever the transcript did.
   */
  #noteCreated(ex: Exchange): void {
    if (ex.status < 200 || ex.status > 299 || ex.request.method !== "POST") return;
    const op = this.#ctx.contract.findOperation("POST", ex.request.apiPath)?.id;
    const body = ex.json as { name?: unknown; jobId?: unknown } | undefined;
    const auth = Object.fromEntries(
      Object.entries(ex.request.headers).filter(([k]) => k === "authorization" || k === "x-api-key"),
    );
    if (op === "createDataset" && typeof body?.name === "string") {
      this.#ctx.created.push({
        kind: "dataset",
        name: body.name,
        method: "DELETE",
        url: `${this.#target.baseUrl}/${body.name}`,
        headers: auth,
      });
    } else if ((op === "createSupervisedFineTuningJob" || op === "createDpoJob") && typeof body?.jobId === "string") {
      const collection = ex.request.url.split("?")[0] as string;
      this.#ctx.created.push({
        kind: "job",
        name: typeof body.name === "string" ? body.name : body.jobId,
        method: "POST",
        url: `${collection}/${encodeURIComponent(body.jobId)}:cancel`,
        headers: auth,
      });
    }
  }

  /** Adds a wait to the run's total as wall time: waits of concurrent transcripts that overlap count once. */
  #noteRateLimitWait(wait: number): void {
    const now = performance.now();
    const end = now + wait;
    this.#ctx.rateLimitWaitedMs += Math.max(0, end - Math.max(now, this.#ctx.rateLimitWaitingUntil));
    this.#ctx.rateLimitWaitingUntil = Math.max(this.#ctx.rateLimitWaitingUntil, end);
  }

  /**
   * A 429 TENANT_RATE_LIMITED the step does not expect is the service's rate limit, not a
   * verdict: the kit honours Retry-After and sends the request again (as a client must),
   * at most 3 times per request and within the profile's timeouts.rateLimitWaitMs per run.
   */
  #rateLimitWait(step: Step, ex: Exchange, attempt: number): number | "budget spent" | undefined {
    if (ex.status !== 429) return undefined;
    const code = (ex.json as { error?: { code?: unknown } } | undefined)?.error?.code;
    if (code !== "TENANT_RATE_LIMITED") return undefined;
    if (/429|TENANT_RATE_LIMITED/.test(JSON.stringify([step.expect, step.poll]))) return undefined;
    const seconds = Number(ex.headers.get("retry-after"));
    if (!Number.isInteger(seconds) || seconds < 0) return undefined;
    const wait = Math.max(seconds * 1000, 100);
    if (attempt >= 3 || this.#ctx.rateLimitWaitedMs + wait > this.#ctx.options.profile.timeouts.rateLimitWaitMs)
      return "budget spent";
    return wait;
  }

  /** Contract and protocol checks, then the expectation; throws StepFailed on any problem. */
  #check(step: Step, ex: Exchange, expect: Expectation | undefined, alsoCheck: Problem[] = []): void {
    const problems = this.#checkQuietly(step, ex, expect);
    problems.push(...alsoCheck);
    if (problems.length) this.#fail(step, ex, problems);
  }

  #checkQuietly(step: Step, ex: Exchange, expect: Expectation | undefined): Problem[] {
    const includeUsage =
      (ex.request.json as { stream_options?: { include_usage?: boolean } } | undefined)?.stream_options
        ?.include_usage === true;
    const { problems, operation, rulesChecked } = checkExchange(this.#ctx.contract, ex, { includeUsage });
    problems.push(...this.#uniqueRequestId(step, ex));
    for (const r of rulesChecked) this.rulesChecked.add(r);
    this.#ctx.coverage.exchange(operation, ex.status, ex.json, ex.events);
    if (expect) for (const m of matchExpectation(expect, ex)) problems.push(mismatchProblem(m));
    return problems;
  }

  /** x-request-id is a handle for one request: the same id on two answers is a fault. */
  #uniqueRequestId(step: Step, ex: Exchange): Problem[] {
    const id = ex.headers.get("x-request-id");
    if (!id) return [];
    const where = `${this.#t.id} / ${step.label}`;
    const first = this.#ctx.requestIds.get(id);
    if (first === undefined) {
      this.#ctx.requestIds.set(id, { where, exchange: ex });
      return [];
    }
    if (first.exchange === ex) return []; // the same answer checked again (a poll's last attempt)
    return [
      {
        kind: "protocol",
        rule: "headers.x-request-id",
        message: `x-request-id ${JSON.stringify(id)} was already sent with another answer (${first.where}); each request needs its own`,
      },
    ];
  }

  /**
   * Fails the step: one failure per broken rule, each naming that one rule (see
   * `groupByRule`), with the filled-in request, the answer and its events up to the failure.
   */
  #fail(step: Step, ex: Exchange | undefined, problems: Problem[]): never {
    const requestId = ex?.headers.get("x-request-id") ?? undefined;
    const fallbackRule = step.rules[0] ?? this.#t.rules[0] ?? "transcript";
    const where = (p: Problem) => `${p.at ? `${p.at}: ` : ""}${p.message}`;
    throw new StepFailed(
      groupByRule(problems, fallbackRule, this.#ctx.ruleIds).map(({ rule, first, rest }) => ({
        transcript: this.#t.id,
        step: step.label,
        rule,
        message: `${step.title}: ${where(first)}${rest.length ? ` (and ${rest.length} more under this rule)` : ""}${ex ? ` [${ex.request.method} ${ex.request.relativePath} → ${ex.status}]` : ""}`,
        ...(rest.length ? { details: rest.map(where) } : {}),
        ...(first.expected !== undefined ? { expected: first.expected } : {}),
        ...(first.received !== undefined ? { received: first.received } : {}),
        ...(requestId ? { requestId } : {}),
        ...(ex ? { exchange: failureExchange(ex, [first, ...rest]) } : {}),
      })),
    );
  }

  async #poll(step: Step, expect: Expectation | undefined): Promise<Exchange> {
    const spec = this.#interp(step.poll) as NonNullable<Step["poll"]>;
    const until = spec.until;
    const during = spec.while;
    const timeouts = this.#ctx.options.profile.timeouts;
    const timeoutMs =
      typeof spec.timeout === "number" ? spec.timeout : spec.timeout === "job" ? timeouts.jobMs : timeouts.pollMs;
    const interval = spec.interval ?? timeouts.pollIntervalMs;
    const deadline = performance.now() + timeoutMs;
    let attempts = 0;
    for (;;) {
      const ex = await this.#send(step);
      attempts++;
      if (matchExpectation(until, ex).length === 0) {
        this.#check(step, ex, expect);
        return ex;
      }
      const problems = this.#checkQuietly(step, ex, during);
      if (problems.length)
        this.#fail(
          step,
          ex,
          problems.map((p) => (p.kind === "expectation" ? { ...p, message: `while waiting: ${p.message}` } : p)),
        );
      if ((spec.maxAttempts !== undefined && attempts >= spec.maxAttempts) || performance.now() > deadline) {
        const why = matchExpectation(until, ex);
        this.#fail(step, ex, [
          {
            kind: "expectation",
            message: `gave up waiting after ${attempts} requests${spec.maxAttempts !== undefined && attempts >= spec.maxAttempts ? "" : ` and ${timeoutMs} ms (timeouts.${spec.timeout === "job" ? "jobMs" : "pollMs"} of the profile)`}; still: ${why.map((m) => `${m.path} ${m.message}`).join("; ")}`,
            expected: until,
            received: { status: ex.status, body: ex.json },
          },
        ]);
      }
      if (interval > 0) {
        const signal = step.cleanup ? undefined : this.#ctx.options.signal;
        try {
          await sleep(interval, undefined, signal ? { signal } : {});
        } catch {
          throw new Interrupted();
        }
      }
    }
  }

  async #repeat(step: Step, expect: Expectation | undefined): Promise<Exchange[]> {
    const spec = this.#interp(step.repeat) as NonNullable<Step["repeat"]>;
    let exchanges: Exchange[];
    if (spec.parallel) exchanges = await Promise.all(Array.from({ length: spec.count }, () => this.#send(step)));
    else {
      exchanges = [];
      for (let i = 0; i < spec.count; i++) exchanges.push(await this.#send(step));
    }
    for (const ex of exchanges) this.#check(step, ex, expect);
    const diff = checkSameAndDistinct(exchanges, spec.same, spec.distinct);
    if (diff.length) this.#fail(step, exchanges[0], diff.map(mismatchProblem));
    return exchanges;
  }

  async #paginate(step: Step, expect: Expectation | undefined): Promise<{ exchanges: Exchange[]; items: unknown[] }> {
    const spec = this.#interp(step.paginate) as NonNullable<Step["paginate"]>;
    const tokenField = spec.token ?? "nextPageToken";
    const param = spec.param ?? "pageToken";
    const maxPages = spec.maxPages ?? 50;
    const until = spec.until;
    const exchanges: Exchange[] = [];
    const items: unknown[] = [];
    let token: string | undefined;
    for (;;) {
      const ex = await this.#send(step, token === undefined ? undefined : { [param]: token });
      exchanges.push(ex);
      this.#check(step, ex, expect);
      const pageItems = getPath(ex.json, spec.items);
      if (!Array.isArray(pageItems))
        this.#fail(step, ex, [
          { kind: "expectation", message: `the page has no ${spec.items} array`, at: `body.${spec.items}` },
        ]);
      items.push(...pageItems);
      const next = getPath(ex.json, tokenField);
      const seenAll = until
        ? until.values.every((v) => items.some((item) => match(v, getPath(item, until.at)).length === 0))
        : false;
      if (seenAll || next === undefined || next === "" || next === null) break;
      if (typeof next !== "string")
        this.#fail(step, ex, [
          { kind: "expectation", message: `${tokenField} must be a string`, at: `body.${tokenField}`, received: next },
        ]);
      if (exchanges.length >= maxPages)
        this.#fail(step, ex, [
          {
            kind: "expectation",
            message: `still a ${tokenField} after ${maxPages} pages (paginate.maxPages): the token does not advance, or pageSize is ignored`,
          },
        ]);
      if (next === token)
        this.#fail(step, ex, [
          {
            kind: "expectation",
            message: `${tokenField} repeats the token just used: paging would never end`,
            received: next,
          },
        ]);
      token = next as string;
    }
    const last = exchanges.at(-1) as Exchange;
    if (until) {
      const missing = until.values.filter((v) => !items.some((item) => match(v, getPath(item, until.at)).length === 0));
      if (missing.length)
        this.#fail(step, last, [
          {
            kind: "expectation",
            message: `paging ended (after ${exchanges.length} pages, ${items.length} items) without ${missing.length} of the items expected at ${until.at}`,
            expected: missing,
            received: items.map((item) => getPath(item, until.at)).slice(0, 20),
          },
        ]);
    }
    if (step.expectItems !== undefined) {
      const m = match(this.#interp(step.expectItems), items, "items");
      if (m.length) this.#fail(step, last, m.map(mismatchProblem));
    }
    return { exchanges, items };
  }
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
function failureExchange(ex: Exchange, problems: Problem[]): FailureExchange {
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

function requestOnly(request: PreparedRequest): FailureExchange {
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

function mismatchProblem(m: Mismatch): Problem {
  return {
    kind: "expectation",
    message: m.message,
    at: m.path,
    ...(m.expected !== undefined ? { expected: m.expected } : {}),
    ...(m.received !== undefined ? { received: m.received } : {}),
  };
}
