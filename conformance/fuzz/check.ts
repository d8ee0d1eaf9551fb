/**
 * The properties every answer to a hostile request must have:
 *
 * - an answer at all, within the time limit (no hang), unless the client itself reset the
 *   connection; a client that stopped sending mid-body (FIN) gets an answer or a close;
 *   and a request sent at full speed is answered within a few seconds (one request that
 *   holds the event loop holds every client);
 * - never a 5xx but a 503 or 504 the operation declares (an upstream, the store: with its
 *   envelope and Retry-After), and 504 REQUEST_DEADLINE_EXCEEDED only when the request itself
 *   set `x-request-timeout-ms`: a 500 is a bug;
 * - every error (4xx) is the envelope `{error: {message, type, code, param}}` (with the
 *   messages format's top-level `type: "error"` there), valid against the schema the
 *   operation declares for that status, or the common envelope for statuses no operation
 *   declares (405, and 404/400 on paths outside the contract), with its Retry-After (429)
 *   and Allow (405);
 * - every answer carries `x-request-id` (`req_` + 24 hex);
 * - a successful stream ends, and carries no `error` event of the server's own making;
 * - a success of an operation is what the kit checks of every answer (checks.ts
 *   `checkExchange`): a declared status, a body and every SSE event valid against the
 *   contract, the inference headers, the stream protocol.
 *
 * Each problem names the rule of conformance/rules.yaml it breaks (`contract:<operation>`
 * for a schema), as the kit's reports do.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import { checkExchange } from "../checks.ts";
import type { Contract as KitContract } from "../contract.ts";
import { parseSse } from "../sse.ts";
import { responseSchemaPointer, type FuzzContract as Contract, type FuzzOperation, type Schema } from "./operations.ts";
import { parseJson, type Json } from "./json.ts";
import { UNROUTED, type FuzzCase } from "./requests.ts";
import type { WireResult } from "./wire.ts";

/** What is wrong with an answer: the rule it breaks (rules.yaml, or `contract:<operation>`) and how. */
export interface Problem {
  rule: string;
  message: string;
}

/** The rules the checks below cite. */
export const RULE = {
  /** Every request gets an answer, in time, whole: a malformed one a 400, never a hang, a reset or a cut body. */
  answer: "errors.malformed-request",
  /** No 5xx for what a client sent; only the documented 503/504 of their causes. */
  status: "errors.codes-by-status",
  envelope: "errors.envelope",
  type: "errors.type",
  requestId: "headers.x-request-id",
  retryAfter: "headers.retry-after",
  providerClass: "headers.x-provider-class",
  allow: "errors.unknown-path",
  streamError: "errors.rule-4",
} as const;

const problem = (rule: string, message: string): Problem => ({ rule, message });

export const REQUEST_ID = /^req_[0-9a-f]{24}$/;

/** What a caller's own x-request-id must look like to be kept (server/http/request-id.ts). */
const CALLER_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id the answer must carry: the caller's, when it sent one well-formed id, or the
 * server's own (always, for a request Node could not parse, whose headers are not trusted).
 */
function expectedRequestId(c: FuzzCase): RegExp {
  const sent = c.headers.filter(([name]) => name.toLowerCase() === "x-request-id").map(([, value]) => value);
  const caller = sent.length === 1 ? sent[0] : undefined;
  if (caller === undefined || !CALLER_REQUEST_ID.test(caller)) return REQUEST_ID;
  return new RegExp(`^(${caller.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}|req_[0-9a-f]{24})$`);
}

const CONTRACT_ID = "https://fuzz.invalid/contract";

export interface CheckerOptions {
  /** The path of `{base_url}` (`/v1`): requests outside it reach no operation. */
  basePath: string;
  /** The kit's contract, for the checks every answer gets in a conformance run (successes here). */
  kit?: KitContract;
}

export class ResponseChecker {
  readonly #contract: Contract;
  readonly #ajv: Ajv2020;
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #codes: Set<string>;
  readonly #typeByStatus = new Map<number, string>();
  readonly #routes: { op: FuzzOperation; pattern: RegExp; literal: number }[];
  readonly #basePath: string;
  readonly #kit: KitContract | undefined;

  constructor(contract: Contract, options: CheckerOptions = { basePath: "/v1" }) {
    this.#contract = contract;
    this.#basePath = options.basePath;
    this.#kit = options.kit;
    this.#ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    this.#ajv.addSchema(contract.doc as object, CONTRACT_ID);
    const schemas = (contract.doc.components as Schema).schemas as Record<string, Schema>;
    this.#codes = new Set(enumStrings(schemas.ErrorCode));
    // status → error.type, as the operations declare it (each status pairs with one type).
    for (const op of contract.operations) {
      for (const status of op.statuses.filter((s) => s >= 400)) {
        const pointer = responseSchemaPointer(contract, op, status);
        if (!pointer) continue;
        const schema = this.#at(pointer);
        const detail = contract.resolve(((schema.properties as Record<string, Schema>).error ?? {}) as Schema);
        const type = enumStrings(((detail.properties as Record<string, Schema>)?.type ?? {}) as Schema)[0];
        if (type) this.#typeByStatus.set(status, type);
      }
    }
    const methodNotAllowed = contract.resolve(schemas.MethodNotAllowedErrorDetail as Schema);
    this.#typeByStatus.set(
      405,
      enumStrings(((methodNotAllowed.properties as Record<string, Schema>).type ?? {}) as Schema)[0] ??
        "invalid_request_error",
    );
    this.#routes = contract.operations.map((op) => ({
      op,
      pattern: new RegExp(
        `^${op.template
          .split(/\{[^}]+\}/)
          .map(escapeRegExp)
          .join("[^/]+")}$`,
      ),
      literal: op.template.replace(/\{[^}]+\}/g, "").length,
    }));
  }

  /**
   * A description of what is wrong with the answer to `c`, or undefined when nothing is.
   * `slowMs`: the longest an answer may take once the request is sent at full speed (an
   * event loop held by one request holds every other client too).
   */
  check(c: FuzzCase, result: WireResult, slowMs = Infinity): Problem | undefined {
    const aborting = c.delivery.kind === "abort" || c.delivery.kind === "abortAfter";
    if (result.outcome === "aborted") return undefined;
    if (result.outcome === "timeout") {
      if (
        result.response &&
        result.response.status >= 200 &&
        result.response.headers["content-type"]?.startsWith("text/event-stream")
      ) {
        return problem(
          RULE.answer,
          `a stream did not end within ${Math.round(result.elapsedMs)} ms (status ${result.response.status}, ${result.response.body.length} bytes so far)`,
        );
      }
      return problem(
        RULE.answer,
        `no answer within ${Math.round(result.elapsedMs)} ms${result.response ? ` (headers of a ${result.response.status} arrived, the body did not end)` : ""}`,
      );
    }
    if (result.outcome === "closed") {
      // A client that stopped sending mid-body may just be hung up on; any other request deserves an answer.
      if (c.delivery.kind === "halfClose" || aborting) return undefined;
      return problem(
        RULE.answer,
        `the server closed the connection without an answer${result.socketError ? ` (${result.socketError})` : ""}`,
      );
    }
    const response = result.response;
    if (!response) return problem(RULE.answer, "no response parsed");
    if (response.status === 0)
      return problem(
        RULE.answer,
        `unparsable status line ${JSON.stringify(response.headers["x-unparsable-status-line"])}`,
      );
    const requestId = response.headers["x-request-id"];
    const body = response.body.toString("utf8");
    const json = parseJson(body);
    const code = json?.error?.code as string | undefined;
    if (response.status >= 500) {
      // The caller's own deadline, or a 503/504 the operation declares for a cause outside the request (an
      // upstream, the store), whose envelope and Retry-After are checked below; never a 500, never for the
      // deadline when the request set none.
      const deadline = code === "REQUEST_DEADLINE_EXCEEDED";
      const declared =
        (response.status === 503 || response.status === 504) &&
        this.#operationFor(c)?.statuses.includes(response.status) === true;
      if (deadline ? !c.deadline || response.status !== 504 : !declared)
        return problem(RULE.status, `status ${response.status}: ${body.slice(0, 500)}`);
    }
    if (!requestId || !expectedRequestId(c).test(requestId))
      return problem(
        RULE.requestId,
        `status ${response.status} without a valid x-request-id (${JSON.stringify(requestId)}): ${body.slice(0, 300)}`,
      );
    if (!response.complete && !aborting)
      return problem(RULE.answer, `the body of a ${response.status} was cut off after ${response.body.length} bytes`);
    const fullSpeed = c.delivery.kind === "whole" || c.delivery.kind === "abortAfter";
    if (fullSpeed && result.elapsedMs > slowMs)
      return problem(
        RULE.answer,
        `a ${response.status} took ${Math.round(result.elapsedMs)} ms (more than ${slowMs} ms)`,
      );
    if (response.status >= 400) return this.#checkError(c, response.status, response.headers, body, json);
    // A success or redirect the operation does not declare (an empty 304 to `If-None-Match: *`, say).
    const op = this.#operationFor(c);
    if (op && !op.statuses.includes(response.status))
      return problem(
        `contract:${op.operationId}`,
        `status ${response.status}, which ${op.operationId} does not declare: ${body.slice(0, 300)}`,
      );
    const inferenceHeaders = op && INFERENCE.has(op.operationId) ? inferenceHeaderProblem(response.headers) : undefined;
    if (inferenceHeaders)
      return problem(RULE.providerClass, `status ${response.status} of ${op!.operationId}: ${inferenceHeaders}`);
    if (
      response.status >= 200 &&
      response.status < 300 &&
      response.headers["content-type"]?.startsWith("text/event-stream")
    ) {
      const stream = checkStream(c, body);
      if (stream) return problem(RULE.streamError, stream);
    }
    return op && !aborting && c.method !== "HEAD" && httpProblems(c).length === 0
      ? this.#checkSuccess(c, response.status, response.headers, body)
      : undefined;
  }

  /** A success as a conformance run checks it: status, body or events against the contract, headers, stream protocol. */
  #checkSuccess(c: FuzzCase, status: number, headers: Record<string, string>, text: string): Problem | undefined {
    if (!this.#kit) return undefined;
    // The path relative to `{base_url}`, without its query or fragment (the kit's own lookup strips only the query).
    const apiPath = c.target.slice(this.#basePath.length).split(/[?#]/)[0] as string;
    const type = headers["content-type"] ?? "";
    const isStream = type.startsWith("text/event-stream");
    const json = isStream ? undefined : parseJson(text);
    const exchange = {
      request: { method: c.method, url: c.target, relativePath: apiPath, apiPath, headers: {} },
      status,
      headers: new Headers(Object.entries(headers).filter(([, v]) => !/[\r\n\0]/.test(v))),
      text,
      json,
      isJson: json !== undefined,
      ...(isStream ? { events: parseSse(text) } : {}),
      durationMs: 0,
    };
    const found = checkExchange(this.#kit, exchange).problems[0];
    if (!found) return undefined;
    const op = this.#operationFor(c);
    return problem(
      found.rule ?? `contract:${op?.operationId ?? "?"}`,
      `status ${status}: ${found.message}${found.at ? ` at ${found.at}` : ""}${found.received !== undefined ? ` (received ${JSON.stringify(found.received)?.slice(0, 200)})` : ""}`,
    );
  }

  #checkError(
    c: FuzzCase,
    status: number,
    headers: Record<string, string>,
    body: string,
    json: Json,
  ): Problem | undefined {
    if (c.method === "HEAD") return undefined;
    if (!headers["content-type"]?.startsWith("application/json"))
      return problem(
        RULE.envelope,
        `status ${status} with content-type ${JSON.stringify(headers["content-type"])}: ${body.slice(0, 300)}`,
      );
    if (json === undefined)
      return problem(RULE.envelope, `status ${status} with a body that is not JSON: ${body.slice(0, 300)}`);
    if ((status === 429 || status === 503) && !/^[1-9]\d*$/.test(headers["retry-after"] ?? ""))
      return problem(
        RULE.retryAfter,
        `${status} without a Retry-After of whole seconds, at least 1 (${JSON.stringify(headers["retry-after"])})`,
      );
    if (status === 405 && headers.allow === undefined) return problem(RULE.allow, `405 without Allow`);
    const op = this.#operationFor(c);
    const pointer = op ? responseSchemaPointer(this.#contract, op, status) : undefined;
    if (pointer) {
      const validate = this.#validator(pointer);
      if (validate(json)) return undefined;
      const declared = problem(
        `contract:${op?.operationId}`,
        `status ${status} body does not match ${op?.operationId}'s declared ${status} response: ${this.#ajv.errorsText(validate.errors)}; body ${body.slice(0, 300)}`,
      );
      // A request that is not valid HTTP reaches no operation: the common envelope then (the messages format's cannot be known).
      if (httpProblems(c).length === 0) return declared;
      return this.#commonEnvelope(status, body, json) === undefined ? undefined : declared;
    }
    // A status the matched operation does not declare (405, or a path outside the contract): the common envelope.
    return this.#commonEnvelope(status, body, json);
  }

  #commonEnvelope(status: number, body: string, json: Json): Problem | undefined {
    const keys = Object.keys(json);
    const topOk = keys.every((k) => k === "error" || (k === "type" && json.type === "error"));
    const e = json.error;
    const problems: string[] = [];
    if (!topOk) problems.push(`top-level keys ${keys.join(",")}`);
    if (typeof e !== "object" || e === null) problems.push("no error object");
    else {
      const extra = Object.keys(e).filter((k) => !["message", "type", "code", "param"].includes(k));
      if (extra.length) problems.push(`extra keys ${extra.join(",")}`);
      if (typeof e.message !== "string") problems.push("message is not a string");
      if (!this.#codes.has(e.code)) problems.push(`code ${JSON.stringify(e.code)} is not an ErrorCode`);
      const type = this.#typeByStatus.get(status);
      if (type === undefined) problems.push(`status ${status} is not one the contract uses`);
      else if (e.type !== type) problems.push(`type ${JSON.stringify(e.type)} where ${status} pairs with ${type}`);
      if (!(e.param === null || typeof e.param === "string")) problems.push("param is neither a string nor null");
    }
    if (problems.length === 0) return undefined;
    const rule = problems.every((p) => p.startsWith("type ")) ? RULE.type : RULE.envelope;
    return problem(rule, `status ${status}: ${problems.join("; ")}; body ${body.slice(0, 300)}`);
  }

  /** The operation the request actually reached: its method on the path it matches (not necessarily the one the case was made for). */
  #operationFor(c: FuzzCase): FuzzOperation | undefined {
    if (c.operationId === UNROUTED && !c.target.startsWith(`${this.#basePath}/`)) return undefined;
    if (!c.target.startsWith(`${this.#basePath}/`)) return undefined;
    const path = c.target.slice(this.#basePath.length).split(/[?#]/)[0] as string;
    const candidates = this.#routes
      .filter((r) => r.op.method === c.method && r.pattern.test(path))
      .sort((a, b) => b.literal - a.literal);
    return candidates[0]?.op;
  }

  #validator(pointer: string): ValidateFunction {
    const cached = this.#validators.get(pointer);
    if (cached) return cached;
    const validate = this.#ajv.compile({ $ref: `${CONTRACT_ID}${pointer}` });
    this.#validators.set(pointer, validate);
    return validate;
  }

  #at(pointer: string): Schema {
    const node = pointer
      .replace(/^#\//, "")
      .split("/")
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce<Json>((n, key) => n?.[key], this.#contract.doc);
    return this.#contract.resolve(node as Schema);
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * How the request breaks HTTP/1.1 message syntax (RFC 9112) or Node's limits on its head,
 * or is cut off (the client stopped sending) or followed by stray bytes: such a request may
 * be refused before any operation sees it. Empty for a well-formed request.
 */
export function httpProblems(c: FuzzCase): string[] {
  const problems: string[] = [];
  if (!TOKEN.test(c.method)) problems.push("method is not a token");
  if (!/^[\x21-\x7e]+$/.test(c.target)) problems.push("request target has bytes outside visible ASCII");
  const names = c.headers.map(([n]) => n.toLowerCase());
  for (const [name, value] of c.headers) {
    if (!TOKEN.test(name)) problems.push(`header name ${JSON.stringify(name)} is not a token`);
    if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) problems.push(`header ${name} has a control byte`);
  }
  if (!c.headers.some(([n, v]) => n.toLowerCase() === "host" && v !== "")) problems.push("no Host");
  if (names.includes("content-length") && names.includes("transfer-encoding"))
    problems.push("Content-Length and Transfer-Encoding");
  const length = c.headers.find(([n]) => n.toLowerCase() === "content-length")?.[1];
  const framed = names.includes("transfer-encoding") ? c.body.length : length !== undefined ? Number(length) : 0;
  // Bytes past the message are read as a next request on the connection; its 400 may come first.
  if (c.body.length > framed) problems.push("bytes after the message");
  if (c.delivery.kind === "halfClose" && c.delivery.at < 1) problems.push("the client stopped sending mid-body");
  if (length !== undefined && !names.includes("transfer-encoding") && Number(length) > c.body.length)
    problems.push("less body than Content-Length");
  const size = c.method.length + c.target.length + c.headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  if (size > 16 * 1024 - 64) problems.push("head over 16 KB");
  return problems;
}

/** A stream that reached its end: no `error` event the server made of its own failure. */
function checkStream(c: FuzzCase, body: string): string | undefined {
  for (const block of body.split(/\r?\n\r?\n/)) {
    const lines = block.split(/\r?\n/);
    const event = lines
      .find((l) => l.startsWith("event:"))
      ?.slice(6)
      .trim();
    const data = lines
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trim())
      .join("\n");
    const json = parseJson(data);
    const error =
      event === "error" || json?.type === "error" || json?.type === "response.failed"
        ? (json?.error ?? json?.response?.error)
        : undefined;
    if (!error) continue;
    const deadline = c.deadline && error.code === "REQUEST_DEADLINE_EXCEEDED";
    // An upstream's failure part-way (UPSTREAM_*, PARTIAL_RESPONSE_TIMEOUT) is reported this way by rule; INTERNAL is a bug.
    if (!deadline && (error.code === "INTERNAL" || error.code === "REQUEST_DEADLINE_EXCEEDED"))
      return `the stream ended with a server error event: ${data.slice(0, 300)}`;
  }
  return undefined;
}

/** The inference operations, whose successes carry x-provider-class and x-config-version (the document's headers table). */
const INFERENCE = new Set(["createResponse", "createChatCompletion", "createCompletion", "createMessage"]);

function inferenceHeaderProblem(headers: Record<string, string>): string | undefined {
  const providerClass = headers["x-provider-class"];
  if (providerClass !== "primary" && providerClass !== "fallback")
    return `x-provider-class is ${JSON.stringify(providerClass)}, not primary or fallback`;
  if (!headers["x-config-version"]) return "no x-config-version";
  return undefined;
}

function enumStrings(schema: Schema | undefined): string[] {
  if (!schema) return [];
  const out: string[] = [];
  const walk = (s: unknown) => {
    if (!s || typeof s !== "object") return;
    const o = s as Schema;
    if (Array.isArray(o.enum)) out.push(...(o.enum as unknown[]).filter((v): v is string => typeof v === "string"));
    for (const branch of [...((o.anyOf as Schema[]) ?? []), ...((o.oneOf as Schema[]) ?? [])]) walk(branch);
  };
  walk(schema);
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
