/**
 * The stateful fuzzer's HTTP calls: every answer is checked for what must hold whatever
 * the model says (no 5xx, an answer within the timeout, x-request-id on every answer, the
 * error envelope on every error, and, given the kit's contract, everything a conformance
 * run checks of an answer: declared status, body and SSE events against the schemas,
 * Retry-After, inference headers) and counted per operation for the summary.
 */
import { checkExchange } from "../../checks.ts";
import type { Contract } from "../../contract.ts";
import { parseSse } from "../../sse.ts";
import { describeTransportFailure } from "../../transport-error.ts";
import { parseJson, type Json } from "../json.ts";

/** Longest wait for any answer; longer is a hang. */
export const REQUEST_TIMEOUT_MS = 30_000;

export interface Answer {
  status: number;
  requestId: string;
  body: Json;
  text: string;
  /** Error code of an error answer. */
  code?: string;
}

/** Something that must never happen whatever the model: a 5xx, a hang, a bare error. */
export class ServerFault extends Error {
  override name = "ServerFault";
  /** No answer came (a refused or reset connection, or a hang), as opposed to a wrong one. */
  readonly noAnswer: boolean;
  /** The rule it breaks (rules.yaml, or `contract:<operation>`). */
  readonly rule: string;
  constructor(message: string, noAnswer = false, rule = "errors.codes-by-status", options?: { cause: unknown }) {
    super(message, options);
    this.noAnswer = noAnswer;
    this.rule = rule;
  }
}

export class Tally {
  /** "METHOD label" → status → count. */
  readonly calls = new Map<string, Map<number, number>>();
  count(label: string, status: number): void {
    const byStatus = this.calls.get(label) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.calls.set(label, byStatus);
  }
  get total(): number {
    let n = 0;
    for (const byStatus of this.calls.values()) for (const c of byStatus.values()) n += c;
    return n;
  }
}

export interface RequestSpec {
  method: string;
  url: string;
  key: string;
  /** A label for the summary: the route with its ids blanked. */
  label: string;
  json?: unknown;
  /** A raw body with its content type (uploads). */
  raw?: { contentType: string; data: string };
  headers?: Record<string, string>;
}

/** `check`: the kit's contract, and the request's path relative to `{base_url}`. */
export async function send(
  tally: Tally,
  spec: RequestSpec,
  check?: { contract: Contract; apiPath: string },
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${spec.key}`, ...spec.headers };
  let body: string | undefined;
  if (spec.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(spec.json);
  } else if (spec.raw) {
    headers["content-type"] = spec.raw.contentType;
    body = spec.raw.data;
  }
  const started = performance.now();
  let response: Response;
  let text: string;
  try {
    for (let attempt = 0; ; attempt++) {
      response = await fetch(spec.url, {
        method: spec.method,
        headers,
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      text = await response.text();
      // The service's own rate limit is not a verdict on the sequence: wait as it asks, a few times.
      const wait = rateLimitWaitMs(response, text);
      if (wait === undefined || attempt >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  } catch (error) {
    const reason =
      (error as Error).name === "TimeoutError"
        ? `no answer within ${REQUEST_TIMEOUT_MS} ms (a hang)`
        : `the connection failed: ${describeTransportFailure(error)}`;
    throw new ServerFault(
      `${spec.method} ${spec.url}: ${reason} after ${Math.round(performance.now() - started)} ms`,
      true,
      "errors.malformed-request",
      { cause: error },
    );
  }
  tally.count(`${spec.method} ${spec.label}`, response.status);
  const requestId = response.headers.get("x-request-id") ?? "";
  const parsed = text === "" ? undefined : parseJson(text);
  const where = `${spec.method} ${spec.url} → ${response.status} (x-request-id ${requestId || "missing"}): ${text.slice(0, 500)}`;
  // The one 5xx the contract lets a healthy service send: a fine-tuned model's deployment still loading, to retry (Retry-After).
  const loading =
    response.status === 503 && parsed?.error?.code === "DEPLOYMENT_SCALING_UP" && response.headers.has("retry-after");
  if (response.status >= 500 && !loading) throw new ServerFault(`a ${response.status}: ${where}`);
  if (requestId === "") throw new ServerFault(`no x-request-id: ${where}`, false, "headers.x-request-id");
  const code = parsed?.error?.code as string | undefined;
  if (
    response.status >= 400 &&
    (typeof code !== "string" || typeof parsed?.error?.message !== "string" || typeof parsed?.error?.type !== "string")
  ) {
    throw new ServerFault(`an error without the envelope: ${where}`, false, "errors.envelope");
  }
  if (check) contractCheck(check.contract, check.apiPath, spec, response, text, parsed, where);
  return { status: response.status, requestId, body: parsed, text, ...(response.status >= 400 ? { code } : {}) };
}

/** What a conformance run checks of every answer (checks.ts); the first problem is a fault. */
function contractCheck(
  contract: Contract,
  pathAndQuery: string,
  spec: RequestSpec,
  response: Response,
  text: string,
  json: Json,
  where: string,
) {
  const apiPath = pathAndQuery.split("?")[0] as string;
  const isStream = (response.headers.get("content-type") ?? "").startsWith("text/event-stream");
  const exchange = {
    request: { method: spec.method, url: spec.url, relativePath: apiPath, apiPath, headers: {} },
    status: response.status,
    headers: response.headers,
    text,
    json,
    isJson: json !== undefined,
    ...(isStream ? { events: parseSse(text) } : {}),
    durationMs: 0,
  };
  const problem = checkExchange(contract, exchange).problems[0];
  if (!problem) return;
  const op = contract.findOperation(spec.method, apiPath);
  throw new ServerFault(
    `${problem.message}${problem.at ? ` at ${problem.at}` : ""}${problem.received !== undefined ? ` (received ${JSON.stringify(problem.received)?.slice(0, 200)})` : ""}: ${where}`,
    false,
    problem.rule ?? `contract:${op?.id ?? "?"}`,
  );
}

/** How long a 429 TENANT_RATE_LIMITED asks to wait (at most a minute); undefined for any other answer. */
function rateLimitWaitMs(response: Response, text: string): number | undefined {
  if (response.status !== 429 || !text.includes('"TENANT_RATE_LIMITED"')) return undefined;
  const seconds = Number(response.headers.get("retry-after") ?? "1");
  return Math.min(60, Number.isFinite(seconds) && seconds >= 1 ? seconds : 1) * 1000;
}
