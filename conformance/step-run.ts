/**
 * One transcript's steps as they run: each step's request sent (once, repeated, paged or
 * polled: step-modes.ts), every answer checked (contract, protocol, expectation, golden),
 * values captured for later steps, and what the service made noted for the run's cleanup.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { checkExchange, exchangeView, matchExpectation, type Problem } from "./checks.ts";
import { noteCreated } from "./cleanup.ts";
import { compareGolden, type Golden } from "./golden.ts";
import { send, TransportError, type Exchange, type PreparedRequest } from "./http.ts";
import { getPath } from "./matchers.ts";
import { noteRateLimitWait, rateLimitWait } from "./rate-limit.ts";
import { prepareRequest, RequestSpecError, type RequestTarget } from "./request.ts";
import { failureExchange, groupByRule, mismatchProblem, requestOnly, type TranscriptResult } from "./results.ts";
import { Interrupted, StepFailed, type RunContext } from "./run-context.ts";
import { paginate, poll, repeat, type StepIo } from "./step-modes.ts";
import { interpolate, interpolateText, TemplateError, type Scope } from "./template.ts";
import type { Expectation, Step, Transcript } from "./transcript.ts";

export class TranscriptRun implements StepIo {
  readonly #t: Transcript;
  readonly #ctx: RunContext;
  /** Retry-After this transcript honoured: a failure after such a wait may be the wait's doing. */
  #rateLimitWaitedMs = 0;
  get ctx(): RunContext {
    return this.#ctx;
  }
  readonly #scope: Scope;
  readonly #vars: Record<string, unknown>;
  readonly #target: RequestTarget;
  readonly #golden: Golden | undefined;
  readonly #result: Omit<TranscriptResult, "status" | "durationMs">;
  readonly rulesChecked = new Set<string>();
  currentLabel: string = "-";

  constructor(
    t: Transcript,
    ctx: RunContext,
    scope: Scope,
    vars: Record<string, unknown>,
    target: RequestTarget,
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
    if (this.#ctx.signal?.aborted && !step.cleanup) throw new Interrupted();
    this.currentLabel = step.label;
    this.#ctx.running.set(this.#t.id, { transcript: this.#t.id, step: step.label });
    const expect = step.expect ? (this.interp(step.expect) as Expectation) : undefined;
    let final: Exchange;
    let extra: Record<string, unknown> = {};
    let recorded: Exchange[] | undefined;
    if (step.paginate) {
      const { exchanges, items } = await paginate(this, step, expect);
      final = exchanges.at(-1) as Exchange;
      recorded = exchanges;
      extra = { items, pages: exchanges.length };
    } else if (step.repeat) {
      const exchanges = await repeat(this, step, expect);
      final = exchanges[0] as Exchange;
      recorded = [final];
      extra = { responses: exchanges.map((e) => exchangeView(e)) };
    } else if (step.poll) {
      final = await poll(this, step, expect);
    } else {
      final = await this.send(step);
      this.check(step, final, expect);
    }
    if (step.golden && !step.cleanup && !this.#ctx.options.recorder) {
      const problems = this.#golden
        ? compareGolden(this.#golden, step.index, final, step.goldenIgnore, this.#scope)
        : [{ path: "", message: "the step is compared with its golden, but there is none; run `conformance record`" }];
      if (problems.length)
        this.fail(
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
          this.fail(step, final, [{ kind: "expectation", message: `capture ${name}: nothing at ${p}`, at: p }]);
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

  interp(value: unknown): unknown {
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
    const spec = this.interp(step.request) as Step["request"];
    try {
      return prepareRequest(spec, this.#target, this.#ctx.options.profile, this.#ctx.fixturesDir, queryOverride);
    } catch (error) {
      if (!(error instanceof RequestSpecError)) throw error;
      throw new StepFailed([{ transcript: this.#t.id, step: step.label, rule: "transcript", message: error.message }]);
    }
  }

  async send(step: Step, queryOverride?: Record<string, string>): Promise<Exchange> {
    const request = this.#prepare(step, queryOverride);
    for (let attempt = 0; ; attempt++) {
      this.#ctx.requests++;
      this.#result.requests++;
      const signal = step.cleanup ? undefined : this.#ctx.signal;
      if (signal?.aborted) throw new Interrupted();
      let ex: Exchange;
      this.#ctx.running.set(this.#t.id, {
        transcript: this.#t.id,
        step: step.label,
        request: `${request.method} ${request.url}`,
      });
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
      this.#ctx.running.set(this.#t.id, { transcript: this.#t.id, step: step.label });
      noteCreated(this.#ctx.created, this.#ctx.contract, ex, this.#target.baseUrl);
      const wait = rateLimitWait(this.#ctx, step, ex, attempt);
      if (wait === undefined) return ex;
      // The answer is still a 429 of the contract: checked like any other.
      const problems = this.checkQuietly(step, ex, undefined);
      if (problems.length) this.fail(step, ex, problems);
      if (wait === "budget spent") {
        const budget = this.#ctx.options.profile.timeouts.rateLimitWaitMs;
        this.fail(step, ex, [
          {
            kind: "protocol",
            rule: "kit.rate-limit-budget",
            message: `gave up after ${Math.round(this.#ctx.rateLimitWaitedMs / 1000)} s of Retry-After: the service rate-limited this run (429 TENANT_RATE_LIMITED, Retry-After ${ex.headers.get("retry-after")}, ${attempt} retries of this request) beyond what the kit waits (3 retries per request, timeouts.rateLimitWaitMs ${Math.round(budget / 1000)} s per run); run again when the account's window has passed, or raise the budget`,
          },
        ]);
      }
      noteRateLimitWait(this.#ctx, wait);
      this.#rateLimitWaitedMs += wait;
      try {
        await sleep(wait, undefined, signal ? { signal } : {});
      } catch {
        throw new Interrupted();
      }
    }
  }

  /** Contract and protocol checks, then the expectation; throws StepFailed on any problem. */
  check(step: Step, ex: Exchange, expect: Expectation | undefined, alsoCheck: Problem[] = []): void {
    const problems = this.checkQuietly(step, ex, expect);
    problems.push(...alsoCheck);
    if (problems.length) this.fail(step, ex, problems);
  }

  checkQuietly(step: Step, ex: Exchange, expect: Expectation | undefined): Problem[] {
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
  /**
   * A job keeps training while the kit waits out the service's rate limit, so a wait for a
   * state can fail because of the wait, not the service: the failure says so.
   */
  #rateLimitWaitNote(): string {
    if (this.#rateLimitWaitedMs === 0) return "";
    const seconds = Math.round(this.#rateLimitWaitedMs / 1000);
    return ` (the kit waited ${seconds} s for the service's rate limit in this transcript, and jobs move on meanwhile: run again once the account's window has passed, or give the test accounts a higher requests-per-minute limit)`;
  }

  fail(step: Step, ex: Exchange | undefined, problems: Problem[]): never {
    const requestId = ex?.headers.get("x-request-id") ?? undefined;
    const fallbackRule = step.rules[0] ?? this.#t.rules[0] ?? "transcript";
    const where = (p: Problem) => `${p.at ? `${p.at}: ` : ""}${p.message}`;
    const waited = this.#rateLimitWaitNote();
    throw new StepFailed(
      groupByRule(problems, fallbackRule, this.#ctx.ruleIds).map(({ rule, first, rest }) => ({
        transcript: this.#t.id,
        step: step.label,
        rule,
        message: `${step.title}: ${where(first)}${rest.length ? ` (and ${rest.length} more under this rule)` : ""}${ex ? ` [${ex.request.method} ${ex.request.relativePath} → ${ex.status}]` : ""}${waited}`,
        ...(rest.length ? { details: rest.map(where) } : {}),
        ...(first.expected !== undefined ? { expected: first.expected } : {}),
        ...(first.received !== undefined ? { received: first.received } : {}),
        ...(requestId ? { requestId } : {}),
        ...(ex ? { exchange: failureExchange(ex, [first, ...rest]) } : {}),
      })),
    );
  }
}
