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
  /** The rule of the interface document (or of the decisions) it breaks. */
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

function requestBody(request: ProxyRequest, original: { body: Buffer; json: string | undefined }): Buffer {
  if (request.body !== original.body) return request.body;
  if (request.json !== undefined && JSON.stringify(request.json) !== original.json)
    return Buffer.from(JSON.stringify(request.json));
  return request.body;
}

function responseBody(response: ProxyResponse, original: { body: Buffer; json: string | undefined }): Buffer {
  if (response.body !== original.body) return response.body;
  if (response.events !== undefined) return Buffer.from(response.events.map(serialiseEvent).join(""));
  if (response.json !== undefined && JSON.stringify(response.json) !== original.json)
    return Buffer.from(JSON.stringify(response.json));
  return response.body;
}

export async function startFaultProxy(options: ProxyOptions): Promise<FaultProxy> {
  const upstream = new URL(options.upstream);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const fault = options.fault;
  const keys = options.keys ?? {};
  const accountByKey = new Map(Object.entries(keys).map(([account, key]) => [key, account]));
  const state = new Map<string, unknown>();
  let hits = 0;
  let requests = 0;

  /** Opens an upstream request; the caller reads or pipes the answer. */
  function open(
    method: string,
    pathAndQuery: string,
    headers: Record<string, string>,
    body: Buffer | NodeJS.ReadableStream | undefined,
    signal?: AbortSignal,
  ): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const outHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) outHeaders[name] = value;
      if (Buffer.isBuffer(body)) outHeaders["content-length"] = String(body.length);
      else if (body !== undefined && headers["content-length"] !== undefined)
        outHeaders["content-length"] = headers["content-length"];
      else if (body !== undefined && headers["transfer-encoding"] !== undefined)
        outHeaders["transfer-encoding"] = headers["transfer-encoding"];
      const req = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method,
          path: pathAndQuery,
          headers: outHeaders,
          agent,
          signal,
        },
        resolve,
      );
      req.on("error", reject);
      if (body === undefined) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      else {
        // The head goes upstream at once, as a proxy must: a server may answer before the
        // body (a key refused, a declared length over its limit), and a client may wait
        // for that answer before sending the body, or never send it.
        req.flushHeaders();
        body.pipe(req);
      }
    });
  }

  const ctx: FaultContext = {
    state,
    async upstream(partial) {
      const query = partial.query?.toString() ?? "";
      const json = partial.json;
      const body = partial.body ?? (json === undefined ? undefined : Buffer.from(JSON.stringify(json)));
      const headers = { ...(partial.headers ?? {}) };
      if (json !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json";
      const res = await open(partial.method, partial.path + (query ? `?${query}` : ""), headers, body);
      const data = await readAll(res);
      const outHeaders = headerRecord(res.headers);
      const response: ProxyResponse = { status: res.statusCode ?? 502, headers: outHeaders, body: data };
      if (isJson(outHeaders)) response.json = tryJson(data.toString("utf8"));
      if (isEventStream(outHeaders)) response.events = parseEvents(data.toString("utf8"));
      return response;
    },
    accountOfKey: (key) => (key === undefined ? undefined : accountByKey.get(key)),
    keyOfAccount: (account) => keys[account],
    keys: () => ({ ...keys }),
    hit: () => {
      hits++;
    },
    keyOf(request) {
      const auth = request.headers.authorization;
      const bearer = auth?.match(/^Bearer\s+(.+)$/i)?.[1];
      return bearer ?? request.headers["x-api-key"];
    },
  };

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

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    requests++;
    const url = new URL(req.url ?? "/", "http://proxy");
    const inHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined) inHeaders[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });

    const probe: ProxyRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: inHeaders,
      body: Buffer.alloc(0),
    };
    if (fault === undefined || (fault.match !== undefined && !fault.match(probe))) {
      // Not this fault's business: stream both ways untouched.
      const hasBody = req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined;
      const up = await open(
        probe.method,
        url.pathname + url.search,
        inHeaders,
        hasBody ? req : undefined,
        abort.signal,
      );
      sendHead(res, up.statusCode ?? 502, headerRecord(up.headers));
      up.pipe(res);
      return;
    }

    const body = await readAll(req);
    const originalReq = { body, json: undefined as string | undefined };
    let request: ProxyRequest = {
      ...probe,
      body,
      json: /\bjson\b/i.test(inHeaders["content-type"] ?? "") ? tryJson(body.toString("utf8")) : undefined,
    };
    originalReq.json = request.json === undefined ? undefined : JSON.stringify(request.json);
    const snapshot = JSON.stringify({
      m: request.method,
      p: request.path,
      q: request.query.toString(),
      h: request.headers,
      j: originalReq.json,
    });
    if (fault.onRequest) {
      request = (await fault.onRequest(request, ctx)) ?? request;
      const after = JSON.stringify({
        m: request.method,
        p: request.path,
        q: request.query.toString(),
        h: request.headers,
        j: request.json === undefined ? undefined : JSON.stringify(request.json),
      });
      if (after !== snapshot || request.body !== body) hits++;
    }

    const canned = fault.respond ? await fault.respond(request, ctx) : undefined;
    if (canned) {
      hits++;
      const out =
        canned.body.length > 0 || canned.json === undefined ? canned.body : Buffer.from(JSON.stringify(canned.json));
      const data = canned.events ? Buffer.from(canned.events.map(serialiseEvent).join("")) : out;
      sendHead(res, canned.status, canned.headers, data.length);
      res.end(data);
      return;
    }

    const outBody = requestBody(request, originalReq);
    const query = request.query.toString();
    const hasBody =
      outBody.length > 0 ||
      req.headers["content-length"] !== undefined ||
      req.headers["transfer-encoding"] !== undefined;
    const headers = { ...request.headers };
    if (fault.onResponse || fault.onEvent) headers["accept-encoding"] = "identity";
    const up = await open(
      request.method,
      request.path + (query ? `?${query}` : ""),
      headers,
      hasBody ? outBody : undefined,
      abort.signal,
    );
    const upHeaders = headerRecord(up.headers);
    const status = up.statusCode ?? 502;

    if (isEventStream(upHeaders) && fault.onEvent && !fault.onResponse) {
      // Event by event, as they arrive.
      sendHead(res, status, upHeaders);
      const parser = createParser({
        onEvent: ({ event, data, id }) => {
          const parsed: SseEvent = { event, data, id, json: tryJson(data) };
          const before = serialiseEvent(parsed);
          const result = fault.onEvent?.(parsed, request, ctx) ?? parsed;
          const list = Array.isArray(result) ? result : [result];
          const text = list.map(serialiseEvent).join("");
          if (text !== before) hits++;
          res.write(text);
        },
      });
      up.setEncoding("utf8");
      for await (const chunk of up) parser.feed(chunk as string);
      res.end();
      return;
    }

    if (!fault.onResponse) {
      sendHead(res, status, upHeaders);
      up.pipe(res);
      return;
    }

    const data = await readAll(up);
    const text = data.toString("utf8");
    let response: ProxyResponse = { status, headers: upHeaders, body: data };
    if (isJson(upHeaders)) response.json = tryJson(text);
    if (isEventStream(upHeaders)) response.events = parseEvents(text);
    const originalRes = { body: data, json: response.json === undefined ? undefined : JSON.stringify(response.json) };
    const before = JSON.stringify({
      s: status,
      h: upHeaders,
      j: originalRes.json,
      e: response.events?.map(serialiseEvent).join(""),
    });
    response = (await fault.onResponse(response, request, ctx)) ?? response;
    const after = JSON.stringify({
      s: response.status,
      h: response.headers,
      j: response.json === undefined ? undefined : JSON.stringify(response.json),
      e: response.events?.map(serialiseEvent).join(""),
    });
    const untouched = after === before && response.body === data;
    // An untouched answer goes out byte for byte as the upstream sent it.
    const outData = untouched ? data : responseBody(response, originalRes);
    if (!untouched) hits++;
    sendHead(res, response.status, response.headers, outData.length);
    res.end(outData);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`fault proxy: ${error instanceof Error ? error.message : String(error)}`);
      } else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://${options.host ?? "127.0.0.1"}:${port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    get hits() {
      return hits;
    },
    get requests() {
      return requests;
    },
    state,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
