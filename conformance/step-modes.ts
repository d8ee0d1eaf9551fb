/**
 * The step kinds beyond one request: `poll` (until an answer matches, every answer before
 * it checked against `while`), `repeat` (the same request n times, in parallel or not, and
 * what must be the same or distinct across the answers) and `paginate` (following page
 * tokens, checking every page and then all items together).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { checkSameAndDistinct, matchExpectation, type Problem } from "./checks.ts";
import type { Exchange } from "./http.ts";
import { getPath, match } from "./matchers.ts";
import { mismatchProblem } from "./results.ts";
import { Interrupted, type RunContext } from "./run-context.ts";
import type { Expectation, PaginateSpec, PollSpec, RepeatSpec, Step } from "./transcript.ts";

/** What the step kinds need of the transcript run they are part of (step-run.ts). */
export interface StepIo {
  readonly ctx: RunContext;
  send(step: Step, queryOverride?: Record<string, string>): Promise<Exchange>;
  check(step: Step, ex: Exchange, expect: Expectation | undefined, alsoCheck?: Problem[]): void;
  checkQuietly(step: Step, ex: Exchange, expect: Expectation | undefined): Problem[];
  fail(step: Step, ex: Exchange | undefined, problems: Problem[]): never;
  interp(value: unknown): unknown;
}

export async function poll(io: StepIo, step: Step, expect: Expectation | undefined): Promise<Exchange> {
  // Interpolated, the templates of the written spec are the values they stand for.
  const spec = io.interp(step.poll) as PollSpec;
  const until = spec.until;
  const during = spec.while;
  const timeouts = io.ctx.options.profile.timeouts;
  const timeoutMs =
    typeof spec.timeout === "number" ? spec.timeout : spec.timeout === "job" ? timeouts.jobMs : timeouts.pollMs;
  const interval = spec.interval ?? timeouts.pollIntervalMs;
  const deadline = performance.now() + timeoutMs;
  let attempts = 0;
  for (;;) {
    const ex = await io.send(step);
    attempts++;
    if (matchExpectation(until, ex).length === 0) {
      io.check(step, ex, expect);
      return ex;
    }
    const problems = io.checkQuietly(step, ex, during);
    if (problems.length)
      io.fail(
        step,
        ex,
        problems.map((p) => (p.kind === "expectation" ? { ...p, message: `while waiting: ${p.message}` } : p)),
      );
    if ((spec.maxAttempts !== undefined && attempts >= spec.maxAttempts) || performance.now() > deadline) {
      const why = matchExpectation(until, ex);
      io.fail(step, ex, [
        {
          kind: "expectation",
          message: `gave up waiting after ${attempts} requests${spec.maxAttempts !== undefined && attempts >= spec.maxAttempts ? "" : ` and ${timeoutMs} ms (timeouts.${spec.timeout === "job" ? "jobMs" : "pollMs"} of the profile)`}; still: ${why.map((m) => `${m.path} ${m.message}`).join("; ")}`,
          expected: until,
          received: { status: ex.status, body: ex.json },
        },
      ]);
    }
    if (interval > 0) {
      const signal = step.cleanup ? undefined : io.ctx.signal;
      try {
        await sleep(interval, undefined, signal ? { signal } : {});
      } catch {
        throw new Interrupted();
      }
    }
  }
}

export async function repeat(io: StepIo, step: Step, expect: Expectation | undefined): Promise<Exchange[]> {
  const spec = io.interp(step.repeat) as RepeatSpec;
  let exchanges: Exchange[];
  if (spec.parallel) exchanges = await Promise.all(Array.from({ length: spec.count }, () => io.send(step)));
  else {
    exchanges = [];
    for (let i = 0; i < spec.count; i++) exchanges.push(await io.send(step));
  }
  for (const ex of exchanges) io.check(step, ex, expect);
  const diff = checkSameAndDistinct(exchanges, spec.same, spec.distinct);
  if (diff.length) io.fail(step, exchanges[0], diff.map(mismatchProblem));
  return exchanges;
}

export async function paginate(
  io: StepIo,
  step: Step,
  expect: Expectation | undefined,
): Promise<{ exchanges: Exchange[]; items: unknown[] }> {
  const spec = io.interp(step.paginate) as PaginateSpec;
  const tokenField = spec.token ?? "nextPageToken";
  const param = spec.param ?? "pageToken";
  const maxPages = spec.maxPages ?? 50;
  const until = spec.until;
  const exchanges: Exchange[] = [];
  const items: unknown[] = [];
  let token: string | undefined;
  for (;;) {
    const ex = await io.send(step, token === undefined ? undefined : { [param]: token });
    exchanges.push(ex);
    io.check(step, ex, expect);
    const pageItems = getPath(ex.json, spec.items);
    if (!Array.isArray(pageItems))
      io.fail(step, ex, [
        { kind: "expectation", message: `the page has no ${spec.items} array`, at: `body.${spec.items}` },
      ]);
    items.push(...pageItems);
    const next = getPath(ex.json, tokenField);
    const seenAll = until
      ? until.values.every((v) => items.some((item) => match(v, getPath(item, until.at)).length === 0))
      : false;
    if (seenAll || next === undefined || next === "" || next === null) break;
    if (typeof next !== "string")
      io.fail(step, ex, [
        { kind: "expectation", message: `${tokenField} must be a string`, at: `body.${tokenField}`, received: next },
      ]);
    if (exchanges.length >= maxPages)
      io.fail(step, ex, [
        {
          kind: "expectation",
          message: `still a ${tokenField} after ${maxPages} pages (paginate.maxPages): the token does not advance, or pageSize is ignored`,
        },
      ]);
    if (next === token)
      io.fail(step, ex, [
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
      io.fail(step, last, [
        {
          kind: "expectation",
          message: `paging ended (after ${exchanges.length} pages, ${items.length} items) without ${missing.length} of the items expected at ${until.at}`,
          expected: missing,
          received: items.map((item) => getPath(item, until.at)).slice(0, 20),
        },
      ]);
  }
  if (step.expectItems !== undefined) {
    const m = match(io.interp(step.expectItems), items, "items");
    if (m.length) io.fail(step, last, m.map(mismatchProblem));
  }
  return { exchanges, items };
}
