/**
 * Everything checked about one exchange (a request and its answer): the contract (status,
 * media type, headers, body or every event against generated/openapi.3.2.yaml), the
 * protocol checks, and the transcript's expectation with its matchers.
 */
import { ERROR_TYPE } from "../generated/contract-values.ts";
import type { Contract, ContractProblem, Operation } from "./contract.ts";
import type { Exchange } from "./http.ts";
import { getPath, isPlainObject, match, type Mismatch } from "./matchers.ts";
import {
  checkHeaders,
  checkInferenceHeaders,
  checkJsonBody,
  checkStream,
  streamKindOf,
  type ProtocolProblem,
} from "./protocol.ts";
import type { EventPattern, Expectation, StreamExpectation } from "./transcript.ts";

/** error.type of each error status, as the contract's error objects fix it (docs/decisions.md, Errors). */
export const DECIDED_ERROR_TYPES: Readonly<Record<number, string>> = ERROR_TYPE;

export interface Problem {
  kind: "contract" | "protocol" | "expectation";
  rule?: string;
  message: string;
  at?: string;
  expected?: unknown;
  received?: unknown;
}

/** The operation of an exchange: paths under `{origin}` are taken relative to `{origin}/v1`. */
export function operationOf(contract: Contract, ex: Exchange): Operation | undefined {
  return contract.findOperation(ex.request.method, apiPath(ex));
}

/** The request's path relative to `{base_url}`, without its query. */
export function apiPath(ex: Exchange): string {
  return ex.request.apiPath.split("?")[0] as string;
}

/** Contract and protocol checks, which apply to every answer whatever the transcript expects. */
export function checkExchange(
  contract: Contract,
  ex: Exchange,
  options: { includeUsage?: boolean } = {},
): { problems: Problem[]; operation?: Operation; rulesChecked: string[] } {
  const problems: Problem[] = [];
  const rulesChecked = new Set<string>(["headers.x-request-id"]);
  for (const p of checkHeaders(ex.status, ex.headers)) problems.push(protocol(p));
  if (ex.status === 429 || ex.status === 503) rulesChecked.add("headers.retry-after");

  const op = operationOf(contract, ex);
  if (op) {
    for (const c of contract.validateResponse(op, ex.status, ex.headers, ex)) problems.push(contractProblem(op, c));
    if (ex.events)
      ex.events.forEach((e, i) => {
        for (const c of contract.validateEvent(op, e, i)) problems.push(contractProblem(op, c));
      });
    if (/estimate/i.test(op.id) && ex.status === 200 && ex.isJson) {
      for (const p of checkEstimateArithmetic(ex.json)) problems.push(protocol(p));
      rulesChecked.add("finetune.estimate");
    }
    const kind = streamKindOf(op.template);
    // Model listing is one of the document's inference endpoints: its answers carry the headers too.
    if ((kind || MODEL_LISTING.has(op.id)) && ex.status === 200) {
      for (const p of checkInferenceHeaders(ex.headers)) problems.push(protocol(p));
      rulesChecked.add("headers.x-provider-class").add("headers.x-config-version");
    }
    if (kind && ex.status === 200) {
      if (ex.events) {
        for (const p of checkStream(kind, ex.events, options)) problems.push(protocol(p));
        if (kind === "responses")
          for (const r of [
            "events.order",
            "events.type-equals-event",
            "events.sequence",
            "events.item-ids",
            "events.deltas",
            "events.completed-usage",
            "events.created",
            "events.no-done",
          ])
            rulesChecked.add(r);
        else rulesChecked.add("inference.stream-done");
      } else if (ex.isJson) {
        for (const p of checkJsonBody(kind, ex.json)) problems.push(protocol(p));
        if (kind === "responses") rulesChecked.add("responses.usage");
      }
    }
  } else if (ex.status < 400) {
    problems.push({
      kind: "contract",
      rule: "contract",
      message: `${ex.request.method} ${apiPath(ex)} matches no operation of the contract, yet answered ${ex.status}`,
    });
  }
  if (ex.status >= 400) problems.push(...checkErrorEnvelope(contract, ex));
  return { problems, ...(op ? { operation: op } : {}), rulesChecked: [...rulesChecked] };
}

/** Every error answer: the envelope with a known code and the type decided for its status. */
function checkErrorEnvelope(contract: Contract, ex: Exchange): Problem[] {
  const problems: Problem[] = [];
  const add = (message: string, at: string, expected?: unknown, received?: unknown) =>
    problems.push({
      kind: "contract",
      rule: "errors.envelope",
      message,
      at,
      ...(expected !== undefined ? { expected } : {}),
      ...(received !== undefined ? { received } : {}),
    });
  const body = ex.json;
  if (!ex.isJson || !isPlainObject(body) || !isPlainObject(body.error)) {
    add(
      "an error answer carries the envelope {error: {message, type, code, param}}",
      "body",
      { error: { message: "$string", type: "$string", code: "$string" } },
      ex.text.slice(0, 200),
    );
    return problems;
  }
  const e = body.error;
  if (typeof e.message !== "string") add("error.message is a string", "body.error.message", "$string", e.message);
  if (typeof e.code !== "string" || !contract.errorCodes.includes(e.code))
    add("error.code is one of the contract's codes", "body.error.code", contract.errorCodes, e.code);
  const decided = DECIDED_ERROR_TYPES[ex.status];
  if (decided && e.type !== decided)
    problems.push({
      kind: "contract",
      rule: "errors.type",
      message: `error.type of a ${ex.status} is ${decided}`,
      at: "body.error.type",
      expected: decided,
      received: e.type,
    });
  else if (!contract.errorTypes.includes(e.type as string))
    add("error.type is one of the contract's types", "body.error.type", contract.errorTypes, e.type);
  if (e.param !== undefined && e.param !== null && typeof e.param !== "string")
    add("error.param is a string or null", "body.error.param", "$string", e.param);
  return problems;
}

/** The operations of model listing, an inference endpoint of the interface document. */
const MODEL_LISTING = new Set(["listModels", "getModel"]);

/**
 * The estimate shows its working, so the working must add up: the cost is tokensProcessed
 * × ratePerMillion / 1 000 000 (to within the last decimal the amount is written with,
 * rounded either way); tokensPerEpoch × epochs is tokensProcessed exactly (the decisions);
 * and avgTokensPerExample is tokensPerEpoch over the examples trained, to within the last
 * decimal it is written with.
 */
export function checkEstimateArithmetic(body: unknown): ProtocolProblem[] {
  const e = isPlainObject(body) ? body.estimate : undefined;
  if (!isPlainObject(e)) return [];
  const problems: ProtocolProblem[] = [];
  const tokens = Number(e.tokensProcessed);
  const rate = Number(isPlainObject(e.ratePerMillion) ? e.ratePerMillion.amount : undefined);
  const amountText = String((isPlainObject(e.estimatedCost) ? e.estimatedCost.amount : undefined) ?? "");
  const exact = (tokens * rate) / 1_000_000;
  if (!withinLastDecimal(amountText, exact)) {
    problems.push({
      rule: "finetune.estimate",
      message: `estimatedCost ${amountText} is not tokensProcessed × ratePerMillion / 1e6 = ${tokens} × ${rate} / 1e6 = ${exact}`,
      at: "body.estimate.estimatedCost.amount",
      expected: exact,
      received: amountText,
    });
  }
  const epochs = Number(e.epochs);
  const perEpoch = String(e.tokensPerEpoch ?? "");
  const processed = String(e.tokensProcessed ?? "");
  const multipliesOut =
    /^\d+$/.test(perEpoch) &&
    /^\d+$/.test(processed) &&
    Number.isInteger(epochs) &&
    BigInt(perEpoch) * BigInt(epochs) === BigInt(processed);
  if (!multipliesOut) {
    problems.push({
      rule: "finetune.estimate",
      message: `tokensPerEpoch × epochs = ${perEpoch} × ${epochs} is not tokensProcessed ${processed}: the working must multiply out`,
      at: "body.estimate.tokensPerEpoch",
      expected: processed,
      received: perEpoch,
    });
    return problems;
  }
  const trained = Number(e.exampleCount) - Number(e.examplesSkipped);
  const average = trained > 0 ? Number(perEpoch) / trained : 0;
  const averageText = String(e.avgTokensPerExample ?? "");
  if (trained >= 0 && !withinLastDecimal(averageText, average)) {
    problems.push({
      rule: "finetune.estimate",
      message: `avgTokensPerExample ${averageText} is not tokensPerEpoch / examples trained = ${perEpoch} / ${trained} = ${average}`,
      at: "body.estimate.avgTokensPerExample",
      expected: average,
      received: averageText,
    });
  }
  return problems;
}

/** A decimal text that is `value` rounded either way to the last decimal it is written with. */
function withinLastDecimal(text: string, value: number): boolean {
  const decimals = text.split(".")[1]?.length ?? 0;
  return Math.abs(Number(text) - value) <= 10 ** -decimals + 1e-12;
}

function protocol(p: ProtocolProblem): Problem {
  return { kind: "protocol", ...p };
}

function contractProblem(op: Operation, c: ContractProblem): Problem {
  return {
    kind: "contract",
    rule: `contract:${op.id}`,
    message: c.message,
    ...(c.at ? { at: c.at } : {}),
    ...(c.received !== undefined ? { received: c.received } : {}),
  };
}

// ---------------------------------------------------------------------------
// Expectations
// ---------------------------------------------------------------------------

/** The view of an exchange that expectations, captures and `same` paths read. */
export function exchangeView(ex: Exchange): Record<string, unknown> {
  const headers: Record<string, string> = {};
  ex.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  return {
    status: ex.status,
    headers,
    body: ex.json,
    text: ex.text,
    events: ex.events?.map((e) => ({ event: e.event, data: e.json ?? e.data })),
  };
}

/** Mismatches of an exchange against an (already interpolated) expectation. */
export function matchExpectation(expect: Expectation, ex: Exchange): Mismatch[] {
  if (expect.anyOf) {
    const results = expect.anyOf.map((alt) => matchExpectation(alt, ex));
    if (results.some((r) => r.length === 0)) {
      const { anyOf: _, ...rest } = expect;
      return matchExpectation(rest, ex);
    }
    const best = results.reduce((a, b) => (b.length < a.length ? b : a));
    const received = ex.events
      ? {
          status: ex.status,
          events: collapse(ex.events.map((e) => e.event ?? "message")),
          last: ex.events.at(-1)?.json ?? ex.events.at(-1)?.data,
        }
      : { status: ex.status, body: ex.json ?? ex.text.slice(0, 200) };
    return [
      {
        path: "",
        message: `matches none of ${results.length} alternatives; closest: ${best.map((m) => `${m.path} ${m.message}${m.received !== undefined ? ` (got ${JSON.stringify(m.received)})` : ""}`).join("; ")}`,
        expected: expect.anyOf.map(summary),
        received,
      },
    ];
  }
  const out: Mismatch[] = [];
  if (expect.status !== undefined) out.push(...match(expect.status, ex.status, "status"));
  if (expect.headers) {
    const view = exchangeView(ex).headers as Record<string, string>;
    for (const [name, m] of Object.entries(expect.headers))
      out.push(...match(m, view[name.toLowerCase()], `headers.${name.toLowerCase()}`));
  }
  if (expect.error) {
    const e = expect.error;
    const status = typeof expect.status === "number" ? expect.status : ex.status;
    const envelope: Record<string, unknown> = { message: e.message ?? "$string" };
    if (e.code !== undefined) envelope.code = e.code;
    envelope.type = e.type ?? DECIDED_ERROR_TYPES[status] ?? "$string";
    if (e.param !== undefined) envelope.param = e.param;
    out.push(...match({ error: envelope }, ex.isJson ? ex.json : undefined, "body"));
  }
  if (expect.body !== undefined) {
    if (!ex.isJson && !(typeof expect.body === "string" && expect.body.startsWith("$")))
      out.push({
        path: "body",
        message: "the body is not JSON",
        expected: expect.body,
        received: ex.text.slice(0, 200),
      });
    else out.push(...match(expect.body, ex.json, "body"));
  }
  if (expect.stream) {
    if (!ex.events)
      out.push({
        path: "events",
        message: "expected an event stream (text/event-stream)",
        received: ex.headers.get("content-type"),
      });
    else out.push(...matchStream(expect.stream, ex));
  }
  return out;
}

function summary(e: Expectation): unknown {
  return { ...(e.status !== undefined ? { status: e.status } : {}), ...(e.error ? { error: e.error } : {}) };
}

function eventValue(e: { event: string | undefined; data: string; json: unknown }): {
  event: string | undefined;
  data: unknown;
} {
  return { event: e.event, data: e.json ?? e.data };
}

function patternMatches(p: EventPattern, e: { event: string | undefined; data: string; json: unknown }): boolean {
  const v = eventValue(e);
  if (p.event !== undefined && match(p.event, v.event ?? "message").length) return false;
  if (p.data !== undefined && match(p.data, v.data).length) return false;
  return true;
}

function matchStream(spec: StreamExpectation, ex: Exchange): Mismatch[] {
  const events = ex.events ?? [];
  const out: Mismatch[] = [];
  const names = events.map((e) => e.event ?? (e.data.trim() === "[DONE]" ? "[DONE]" : "message"));
  if (spec.count !== undefined) out.push(...match(spec.count, events.length, "events.length"));
  if (spec.events) {
    const failure = sequenceMismatch(spec.events, events);
    if (failure)
      out.push({
        path: failure.at,
        message: failure.message,
        expected: spec.events.map(describePattern),
        received: collapse(names),
      });
  }
  for (const [i, p] of (spec.includes ?? []).entries())
    if (!events.some((e) => patternMatches(p, e)))
      out.push({ path: `events`, message: `no event matches includes[${i}]`, expected: p, received: collapse(names) });
  for (const [i, p] of (spec.excludes ?? []).entries()) {
    const hit = events.findIndex((e) => patternMatches(p, e));
    if (hit >= 0)
      out.push({
        path: `events[${hit}]`,
        message: `event matches excludes[${i}], which must not occur`,
        expected: { $not: p },
        received: eventValue(events[hit] as never),
      });
  }
  if (spec.last) {
    const last = events.at(-1);
    if (!last) out.push({ path: "events", message: "the stream has no events", expected: spec.last });
    else {
      const v = eventValue(last);
      if (spec.last.event !== undefined)
        out.push(...match(spec.last.event, v.event ?? "message", `events[${events.length - 1}].event`));
      if (spec.last.data !== undefined) out.push(...match(spec.last.data, v.data, `events[${events.length - 1}].data`));
    }
  }
  if (spec.text !== undefined) out.push(...match(spec.text, streamText(events), "events.text"));
  return out;
}

/** The text a stream produced: output text deltas (responses), content deltas (chat), text (completions, messages). */
export function streamText(events: { event: string | undefined; json: unknown }[]): string {
  let text = "";
  for (const e of events) {
    const d = e.json;
    if (!isPlainObject(d)) continue;
    if (e.event === "response.output_text.delta" && typeof d.delta === "string") text += d.delta;
    else if (e.event === "content_block_delta" && isPlainObject(d.delta) && d.delta.type === "text_delta")
      text += String(d.delta.text ?? "");
    else if (Array.isArray(d.choices))
      for (const c of d.choices) {
        if (!isPlainObject(c)) continue;
        if (isPlainObject(c.delta) && typeof c.delta.content === "string") text += c.delta.content;
        else if (typeof c.text === "string") text += c.text;
      }
  }
  return text;
}

function describePattern(p: EventPattern): string {
  const name =
    typeof p.event === "string"
      ? p.event
      : p.event === undefined
        ? p.data === "[DONE]"
          ? "[DONE]"
          : "*"
        : JSON.stringify(p.event);
  return p.repeat === undefined ? name : `${name}${typeof p.repeat === "number" ? `{${p.repeat}}` : p.repeat}`;
}

/** Collapses runs of one name (`delta ×12`) so a report stays readable. */
function collapse(names: string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < names.length) {
    let j = i;
    while (j < names.length && names[j] === names[i]) j++;
    out.push(j - i > 1 ? `${names[i]} ×${j - i}` : (names[i] as string));
    i = j;
  }
  return out;
}

/** Matches events against a pattern list with runs (`+`, `*`, `?`, n), backtracking. */
function sequenceMismatch(
  patterns: EventPattern[],
  events: { event: string | undefined; data: string; json: unknown }[],
): { at: string; message: string } | undefined {
  let deepest = { event: -1, pattern: -1 };
  const memo = new Set<string>();
  const go = (p: number, e: number): boolean => {
    const key = `${p},${e}`;
    if (memo.has(key)) return false;
    if (e > deepest.event || (e === deepest.event && p > deepest.pattern)) deepest = { event: e, pattern: p };
    if (p === patterns.length) {
      if (e === events.length) return true;
      memo.add(key);
      return false;
    }
    const pat = patterns[p] as EventPattern;
    const r = pat.repeat ?? 1;
    const [min, max] = r === "+" ? [1, Infinity] : r === "*" ? [0, Infinity] : r === "?" ? [0, 1] : [r, r];
    let n = 0;
    while (n < max && e + n < events.length && patternMatches(pat, events[e + n] as never)) n++;
    for (let k = n; k >= min; k--) if (go(p + 1, e + k)) return true;
    memo.add(key);
    return false;
  };
  if (go(0, 0)) return undefined;
  const e = deepest.event;
  const p = deepest.pattern;
  if (p >= patterns.length)
    return { at: `events[${e}]`, message: `unexpected event after the expected sequence ended` };
  if (e >= events.length)
    return {
      at: "events",
      message: `the stream ended before ${describePattern(patterns[p] as EventPattern)} (expected entry ${p + 1})`,
    };
  const ev = events[e] as { event: string | undefined; data: string; json: unknown };
  const pat = patterns[p] as EventPattern;
  const dataProblems = pat.data !== undefined ? match(pat.data, ev.json ?? ev.data, `events[${e}].data`) : [];
  const detail = dataProblems.length ? `: ${dataProblems.map((m) => `${m.path} ${m.message}`).join("; ")}` : "";
  return {
    at: `events[${e}]`,
    message: `event ${e} (${ev.event ?? "message"}) does not match expected entry ${p + 1} (${describePattern(pat)})${detail}`,
  };
}

/** Values at the given paths of each exchange must be equal (`same`) or all different (`distinct`). */
export function checkSameAndDistinct(exchanges: Exchange[], same: string[] = [], distinct: string[] = []): Mismatch[] {
  const out: Mismatch[] = [];
  const views = exchanges.map(exchangeView);
  for (const p of same) {
    const values = views.map((v) => JSON.stringify(getPath(v, p)));
    if (new Set(values).size > 1)
      out.push({
        path: p,
        message: `must be the same in all ${views.length} responses`,
        expected: values[0],
        received: values,
      });
  }
  for (const p of distinct) {
    const values = views.map((v) => JSON.stringify(getPath(v, p)));
    if (new Set(values).size !== values.length)
      out.push({ path: p, message: `must differ in each of the ${views.length} responses`, received: values });
  }
  return out;
}
