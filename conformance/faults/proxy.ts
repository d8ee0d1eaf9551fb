/**
 * The fault-injection proxy: an HTTP proxy between the conformance kit and a correct
 * server that breaks exactly one rule of the interface document (one `Fault`).
 *
 * A fault can rewrite the request (method, path, query, headers, body) before it goes
 * upstream, and the response (status, headers, JSON body) or an SSE stream event by event
 * (parsed with eventsource-parser, transformed as a list, re-serialised) before it reaches
 * the kit. It keeps small state between calls (`ctx.state`) and can make extra upstream
 * calls (`ctx.upstream`), e.g. to fetch another account's job with that account's key.
 *
 * Requests a fault does not `match` are piped through untouched (streams stay streams).
 * Matching SSE responses are buffered until the upstream ends them, then transformed and
 * sent (the kit's streams are short); a fault with `onEvent` instead is applied to each
 * event as it arrives and streams without buffering.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createParser } from "eventsource-parser";

/** A request on its way upstream. `path` is the pathname (with /v1); `query` is mutable. */
export interface ProxyRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Buffer;
  /** The body parsed as JSON, when it is JSON. Set it (or `body`) to change the body. */
  json?: unknown;
}

/** One server-sent event. `json` is `data` parsed, when it is JSON; changing `json` re-serialises `data`. */
export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
  json?: unknown;
}

/** A response on its way to the kit. */
export interface ProxyResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  json?: unknown;
  /** The events, when the response is an event stream that was buffered. */
  events?: SseEvent[];
}

export interface FaultContext {
  /** Small state kept for the proxy's lifetime (job names seen, first responses, …). */
  state: Map<string, unknown>;
  /** Another call to the upstream server, outside the fault (its answer is not transformed). */
  upstream(request: Partial<ProxyRequest> & { method: string; path: string }): Promise<ProxyResponse>;
  /** The account a key belongs to, and the key of an account (from the proxy's options). */
  accountOfKey(key: string | undefined): string | undefined;
  keyOfAccount(account: string): string | undefined;
  /** The key of a request: Bearer token, or x-api-key. */
  keyOf(request: ProxyRequest): string | undefined;
  /** Every key the proxy knows, by account id, in the order given. */
  keys(): Record<string, string>;
  /** Counts a hit the proxy cannot see in the messages (a side effect, such as an extra call). */
  hit(): void;
}

/**
 * One fault. Hooks return a changed object (or mutate and return it) when they apply,
 * `undefined` when they leave the message alone; the proxy counts how often the fault
 * actually changed something (`hits`), so a fault that was never triggered can be told
 * apart from one the kit missed.
 */
export interface Fault {
  id: string;
  /** The kit's areas whose transcripts should catch it. */
  areas: string[];
  /**
   * The kit's transcripts that catch it (found by the full matrix, run-all.ts); the fast
   * fault test runs only these (with the setups they use).
   */
  transcripts?: string[];
  /**
   * Which correct server the fault sits in front of: the reference server (default), or
   * the one routed to a misbehaving upstream (for faults in failures only it can produce).
   */
  target?: "main" | "upstream";
  /** The id in conformance/rules.yaml of the rule it breaks (of the interface document or of the decisions). */
  rule: string;
  description: string;
  /**
   * Which requests the fault looks at; the others are piped through. Default: all. It is
   * asked before the body is read: it sees method, path, query and headers (body empty).
   */
  match?(request: ProxyRequest): boolean;
  onRequest?(request: ProxyRequest, ctx: FaultContext): ProxyRequest | void | Promise<ProxyRequest | void>;
  /** Replaces the upstream call altogether (return undefined to make it normally). */
  respond?(request: ProxyRequest, ctx: FaultContext): ProxyResponse | void | Promise<ProxyResponse | void>;
  /** The whole response: `json` for JSON bodies, `events` for event streams (buffered). */
  onResponse?(
    response: ProxyResponse,
    request: ProxyRequest,
    ctx: FaultContext,
  ): ProxyResponse | void | Promise<ProxyResponse | void>;
  /** One event of a stream as it arrives; return an array to replace it (empty: drop it). */
  onEvent?(event: SseEvent, request: ProxyRequest, ctx: FaultContext): SseEvent | SseEvent[] | void;
}

export interface ProxyOptions {
  /** The upstream origin, e.g. http://127.0.0.1:1234 (no /v1). */
  upstream: string;
  /** The fault to apply; none: a pass-through proxy. */
  fault?: Fault;
  /** Keys by account id, for faults that act as another account. */
  keys?: Record<string, string>;
  port?: number;
  host?: string;
}

export interface FaultProxy {
  origin: string;
  /** `origin/v1`. */
  baseUrl: string;
  /** How many messages the fault changed. */
  readonly hits: number;
  /** How many requests went through. */
  readonly requests: number;
  state: Map<string, unknown>;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
]);

function isJson(headers: Record<string, string | string[]>): boolean {
  const type = String(headers["content-type"] ?? "");
  return /\bjson\b/i.test(type);
}

export function isEventStream(headers: Record<string, string | string[]>): boolean {
  return /^text\/event-stream/i.test(String(headers["content-type"] ?? ""));
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function parseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = createParser({
    onEvent: ({ event, data, id }) => events.push({ event, data, id, json: tryJson(data) }),
  });
  parser.feed(text);
  return events;
}

/** `data` from `json` when the fault changed `json`; raw `data` otherwise. */
function eventData(event: SseEvent): string {
  if (event.json !== undefined) {
    const original = tryJson(event.data);
    if (JSON.stringify(original) !== JSON.stringify(event.json)) return JSON.stringify(event.json);
  }
  return event.data;
}

export function serialiseEvent(event: SseEvent): string {
  let out = "";
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  for (const line of eventData(event).split("\n")) out += `data: ${line}\n`;
  return out + "\n";
}

function headerRecord(raw: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(raw)) if (value !== undefined) out[name.toLowerCase()] = value;
  return out;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

function requestBody(request: ProxyRequest, original: Original): Buffer {
  if (request.body !== original.body) return request.body;
  if (request.json !== undefined && JSON.stringify(request.json) !== original.json)
    return Buffer.from(JSON.stringify(request.json));
  return request.body;
}

function responseBody(response: ProxyResponse, original: Original): Buffer {
  if (response.body !== original.body) return response.body;
  if (response.events !== undefined) return Buffer.from(response.events.map(serialiseEvent).join(""));
  if (response.json !== undefined && JSON.stringify(response.json) !== original.json)
    return Buffer.from(JSON.stringify(response.json));
  return response.body;
}

/** Opens an upstream request; the caller reads or pipes the answer. */
type OpenUpstream = (
  method: string,
  pathAndQuery: string,
  headers: Record<string, string>,
  body: Buffer | NodeJS.ReadableStream | undefined,
  signal?: AbortSignal,
) => Promise<http.IncomingMessage>;

/** What one proxy's handlers share: its fault, the context faults see, and its counts. */
interface ProxySession {
  fault: Fault | undefined;
  ctx: FaultContext;
  open: OpenUpstream;
  counts: { hits: number; requests: number };
}

/** A request's original body and its JSON as text, to tell whether a fault changed it. */
interface Original {
  body: Buffer;
  json: string | undefined;
}

export async function startFaultProxy(options: ProxyOptions): Promise<FaultProxy> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const open = upstreamOpener(new URL(options.upstream), agent);
  const counts = { hits: 0, requests: 0 };
  const state = new Map<string, unknown>();
  const ctx = faultContext(state, options.keys ?? {}, open, counts);
  const session: ProxySession = { fault: options.fault, ctx, open, counts };
  const server = http.createServer((req, res) => {
    handle(session, req, res).catch((error: unknown) => answerProxyError(res, error));
  });
  server.keepAliveTimeout = 5_000;
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const origin = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    get hits() {
      return counts.hits;
    },
    get requests() {
      return counts.requests;
    },
    state,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

function upstreamOpener(upstream: URL, agent: http.Agent): OpenUpstream {
  return (method, pathAndQuery, headers, body, signal) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method,
          path: pathAndQuery,
          headers: forwardedHeaders(headers, body),
          agent,
          signal,
        },
        resolve,
      );
      req.on("error", reject);
      writeBody(req, body);
    });
}

/** The end-to-end headers, with the length (or chunking) of the body that goes upstream. */
function forwardedHeaders(
  headers: Record<string, string>,
  body: Buffer | NodeJS.ReadableStream | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) out[name] = value;
  if (Buffer.isBuffer(body)) out["content-length"] = String(body.length);
  else if (body !== undefined && headers["content-length"] !== undefined)
    out["content-length"] = headers["content-length"];
  else if (body !== undefined && headers["transfer-encoding"] !== undefined)
    out["transfer-encoding"] = headers["transfer-encoding"];
  return out;
}

function writeBody(req: http.ClientRequest, body: Buffer | NodeJS.ReadableStream | undefined): void {
  if (body === undefined) req.end();
  else if (Buffer.isBuffer(body)) req.end(body);
  else {
    // The head goes upstream at once, as a proxy must: a server may answer before the
    // body (a key refused, a declared length over its limit), and a client may wait
    // for that answer before sending the body, or never send it.
    req.flushHeaders();
    body.pipe(req);
  }
}

function faultContext(
  state: Map<string, unknown>,
  keys: Record<string, string>,
  open: OpenUpstream,
  counts: { hits: number },
): FaultContext {
  const accountByKey = new Map(Object.entries(keys).map(([account, key]) => [key, account]));
  return {
    state,
    upstream: (partial) => callUpstream(open, partial),
    accountOfKey: (key) => (key === undefined ? undefined : accountByKey.get(key)),
    keyOfAccount: (account) => keys[account],
    keys: () => ({ ...keys }),
    hit: () => {
      counts.hits++;
    },
    keyOf(request) {
      const auth = request.headers.authorization;
      const bearer = auth?.match(/^Bearer\s+(.+)$/i)?.[1];
      return bearer ?? request.headers["x-api-key"];
    },
  };
}

/** A fault's own upstream call, read whole (its answer is not transformed). */
async function callUpstream(
  open: OpenUpstream,
  partial: Partial<ProxyRequest> & { method: string; path: string },
): Promise<ProxyResponse> {
  const query = partial.query?.toString() ?? "";
  const json = partial.json;
  const body = partial.body ?? (json === undefined ? undefined : Buffer.from(JSON.stringify(json)));
  const headers = { ...(partial.headers ?? {}) };
  if (json !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json";
  const res = await open(partial.method, partial.path + (query ? `?${query}` : ""), headers, body);
  return proxyResponse(res.statusCode ?? 502, headerRecord(res.headers), await readAll(res));
}

/** An answer as a fault sees it: `json` for a JSON body, `events` for an event stream. */
function proxyResponse(status: number, headers: Record<string, string | string[]>, body: Buffer): ProxyResponse {
  const response: ProxyResponse = { status, headers, body };
  if (isJson(headers)) response.json = tryJson(body.toString("utf8"));
  if (isEventStream(headers)) response.events = parseEvents(body.toString("utf8"));
  return response;
}

function sendHead(
  res: http.ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
  length?: number,
): void {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) out[name] = value;
  if (length !== undefined) out["content-length"] = String(length);
  res.writeHead(status, out);
}

function answerProxyError(res: http.ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(502, { "content-type": "text/plain" });
  res.end(`fault proxy: ${error instanceof Error ? error.message : String(error)}`);
}

async function handle(session: ProxySession, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  session.counts.requests++;
  const url = new URL(req.url ?? "/", "http://proxy");
  const signal = abortOnClose(res);
  const probe = probeOf(req, url);
  const fault = session.fault;
  if (fault === undefined || (fault.match !== undefined && !fault.match(probe))) {
    await pipeUntouched(session, req, res, probe, url.search, signal);
    return;
  }
  const { request, original } = await rewrittenRequest(session, fault, req, probe);
  const canned = fault.respond ? await fault.respond(request, session.ctx) : undefined;
  if (canned) {
    session.counts.hits++;
    sendCanned(res, canned);
    return;
  }
  const up = await forward(session, fault, req, request, original, signal);
  const upHeaders = headerRecord(up.headers);
  const status = up.statusCode ?? 502;
  if (isEventStream(upHeaders) && fault.onEvent && !fault.onResponse) {
    await streamEventByEvent(session, fault, request, up, res, status, upHeaders);
  } else if (fault.onResponse) {
    await sendTransformed(session, fault, request, up, res, status, upHeaders);
  } else {
    sendHead(res, status, upHeaders);
    up.pipe(res);
  }
}

/** Aborts the upstream call when the client goes away before its answer is finished. */
function abortOnClose(res: http.ServerResponse): AbortSignal {
  const abort = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

/** The request as `match` sees it: method, path, query and headers, the body not read yet. */
function probeOf(req: http.IncomingMessage, url: URL): ProxyRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  return { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers, body: Buffer.alloc(0) };
}

function hasDeclaredBody(req: http.IncomingMessage): boolean {
  return req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined;
}

/** Not this fault's business: stream both ways untouched. */
async function pipeUntouched(
  session: ProxySession,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  probe: ProxyRequest,
  search: string,
  signal: AbortSignal,
): Promise<void> {
  const body = hasDeclaredBody(req) ? req : undefined;
  const up = await session.open(probe.method, probe.path + search, probe.headers, body, signal);
  sendHead(res, up.statusCode ?? 502, headerRecord(up.headers));
  up.pipe(res);
}

/** The request read whole and given to the fault's `onRequest`; a change counts as a hit. */
async function rewrittenRequest(
  session: ProxySession,
  fault: Fault,
  req: http.IncomingMessage,
  probe: ProxyRequest,
): Promise<{ request: ProxyRequest; original: Original }> {
  const body = await readAll(req);
  const json = /\bjson\b/i.test(probe.headers["content-type"] ?? "") ? tryJson(body.toString("utf8")) : undefined;
  let request: ProxyRequest = { ...probe, body, json };
  const original: Original = { body, json: json === undefined ? undefined : JSON.stringify(json) };
  if (fault.onRequest) {
    const before = requestSnapshot(request);
    request = (await fault.onRequest(request, session.ctx)) ?? request;
    if (requestSnapshot(request) !== before || request.body !== body) session.counts.hits++;
  }
  return { request, original };
}

function requestSnapshot(request: ProxyRequest): string {
  return JSON.stringify({
    m: request.method,
    p: request.path,
    q: request.query.toString(),
    h: request.headers,
    j: request.json === undefined ? undefined : JSON.stringify(request.json),
  });
}

/** A fault's own answer, sent instead of the upstream's. */
function sendCanned(res: http.ServerResponse, canned: ProxyResponse): void {
  const out =
    canned.body.length > 0 || canned.json === undefined ? canned.body : Buffer.from(JSON.stringify(canned.json));
  const data = canned.events ? Buffer.from(canned.events.map(serialiseEvent).join("")) : out;
  sendHead(res, canned.status, canned.headers, data.length);
  res.end(data);
}

/** The (possibly rewritten) request sent upstream. */
function forward(
  session: ProxySession,
  fault: Fault,
  req: http.IncomingMessage,
  request: ProxyRequest,
  original: Original,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const body = requestBody(request, original);
  const query = request.query.toString();
  const headers = { ...request.headers };
  // A fault that reads the answer needs it uncompressed.
  if (fault.onResponse || fault.onEvent) headers["accept-encoding"] = "identity";
  const hasBody = body.length > 0 || hasDeclaredBody(req);
  return session.open(
    request.method,
    request.path + (query ? `?${query}` : ""),
    headers,
    hasBody ? body : undefined,
    signal,
  );
}

/** An event stream given to the fault's `onEvent` event by event, as the events arrive. */
async function streamEventByEvent(
  session: ProxySession,
  fault: Fault,
  request: ProxyRequest,
  up: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
): Promise<void> {
  sendHead(res, status, headers);
  const parser = createParser({
    onEvent: ({ event, data, id }) => {
      const parsed: SseEvent = { event, data, id, json: tryJson(data) };
      const before = serialiseEvent(parsed);
      const result = fault.onEvent?.(parsed, request, session.ctx) ?? parsed;
      const text = (Array.isArray(result) ? result : [result]).map(serialiseEvent).join("");
      if (text !== before) session.counts.hits++;
      res.write(text);
    },
  });
  up.setEncoding("utf8");
  for await (const chunk of up) parser.feed(chunk as string);
  res.end();
}

/** The whole answer given to the fault's `onResponse`; an untouched one goes out byte for byte. */
async function sendTransformed(
  session: ProxySession,
  fault: Fault,
  request: ProxyRequest,
  up: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
): Promise<void> {
  const data = await readAll(up);
  let response = proxyResponse(status, headers, data);
  const original: Original = {
    body: data,
    json: response.json === undefined ? undefined : JSON.stringify(response.json),
  };
  const before = responseSnapshot(response);
  response = (await fault.onResponse?.(response, request, session.ctx)) ?? response;
  const untouched = responseSnapshot(response) === before && response.body === data;
  const out = untouched ? data : responseBody(response, original);
  if (!untouched) session.counts.hits++;
  sendHead(res, response.status, response.headers, out.length);
  res.end(out);
}

function responseSnapshot(response: ProxyResponse): string {
  return JSON.stringify({
    s: response.status,
    h: response.headers,
    j: response.json === undefined ? undefined : JSON.stringify(response.json),
    e: response.events?.map(serialiseEvent).join(""),
  });
}
