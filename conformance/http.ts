/**
 * Sending one transcript request and reading the whole answer: status, headers, the body
 * as text, parsed as JSON when it is JSON, and as SSE events when it is an event stream.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import type { SseEvent } from "./contract.ts";
import { parseSse } from "./sse.ts";
import { describeTransportFailure, TransportError } from "./transport-error.ts";

/** The text parsed as JSON, or undefined when it is not JSON. */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export interface PreparedRequest {
  method: string;
  /** Full URL. */
  url: string;
  /** Path relative to the base the request used (`/responses`, `/accounts/acme/datasets?pageSize=2`). */
  relativePath: string;
  /** Path relative to `{base_url}` (a request made under `{origin}` loses its `/v1`), for finding the operation. */
  apiPath: string;
  headers: Record<string, string>;
  body?: string | Buffer | FormData;
  /** The JSON body, for reports and goldens. */
  json?: unknown;
  /** What the body was, for goldens: json, text, file name, form, or only declared. */
  bodyKind?: "json" | "text" | "file" | "form" | "declared";
  bodyLabel?: string;
  /** `Content-Length` to declare while sending no body (fetch cannot): see `RequestSpec.declaredLength`. */
  declaredLength?: number;
}

export interface Exchange {
  request: PreparedRequest;
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
  isJson: boolean;
  /** Parsed events when the content type is text/event-stream. */
  events?: SseEvent[];
  durationMs: number;
}

export { TransportError };

/**
 * Sends one request; `signal` (a run interrupted) aborts it like the timeout does. The
 * timeout covers the whole answer, body included.
 *
 * The request gets an AbortController of its own, held here until the body is read, with
 * a timer and a listener on `signal`. Not `AbortSignal.any([AbortSignal.timeout(…),
 * signal])`: on Node 20 a signal made by `any` and handed only to fetch is garbage
 * collected while the request waits, and its timeout then never reaches the request, so a
 * server that never answers held the run forever (the packed kit hung on Node 20).
 */
export async function send(request: PreparedRequest, timeoutMs: number, signal?: AbortSignal): Promise<Exchange> {
  const started = performance.now();
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("no complete answer within the request timeout", "TimeoutError")),
    timeoutMs,
  );
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) onAbort();
  try {
    let response: Response;
    try {
      if (request.declaredLength !== undefined) {
        response = await withheldBody(request, request.declaredLength, timeoutMs);
      } else {
        const init: RequestInit & { duplex?: "half" } = {
          method: request.method,
          headers: request.headers,
          signal: controller.signal,
          redirect: "manual",
        };
        if (request.body !== undefined) init.body = request.body as BodyInit;
        response = await fetch(request.url, init);
      }
    } catch (error) {
      throw new TransportError(`${request.method} ${request.url}: ${describeTransportFailure(error)}`, {
        cause: error,
      });
    }
    return await exchangeOf(request, response, started);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

async function exchangeOf(request: PreparedRequest, response: Response, started: number): Promise<Exchange> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new TransportError(
      `${request.method} ${request.url}: the body could not be read: ${describeTransportFailure(error)}`,
      { cause: error },
    );
  }
  const type = (response.headers.get("content-type") ?? "").toLowerCase();
  let json: unknown;
  let isJson = false;
  if (!type.startsWith("text/event-stream")) {
    try {
      json = JSON.parse(text);
      isJson = true;
    } catch {
      json = undefined;
    }
  }
  const exchange: Exchange = {
    request,
    status: response.status,
    headers: response.headers,
    text,
    json,
    isJson,
    durationMs: performance.now() - started,
  };
  if (type.startsWith("text/event-stream")) exchange.events = parseSse(text);
  return exchange;
}

/**
 * Sends the request head with `Content-Length: declared` and none of the body, and waits
 * for the whole answer (which must not need the body); then drops the connection, whose
 * request can never be completed. fetch cannot do this: it sends the body it declares.
 */
function withheldBody(request: PreparedRequest, declared: number, timeoutMs: number): Promise<Response> {
  const url = new URL(request.url);
  const transport = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, {
      method: request.method,
      headers: { ...request.headers, "content-length": String(declared) },
      agent: false,
    });
    const timer = setTimeout(
      () =>
        req.destroy(
          Object.assign(
            new Error("no complete answer within the request timeout while the declared body was withheld"),
            { name: "WithheldBodyTimeout" },
          ),
        ),
      timeoutMs,
    );
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        clearTimeout(timer);
        req.destroy();
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          for (const v of Array.isArray(value) ? value : [value ?? ""]) headers.append(name, v);
        resolve(
          new Response(res.statusCode === 204 || res.statusCode === 304 ? null : Buffer.concat(chunks), {
            status: res.statusCode ?? 0,
            headers,
          }),
        );
      });
    });
    req.flushHeaders();
  });
}

/** Builds the body of a request spec. */
export function buildBody(
  spec: { json?: unknown; text?: string; file?: string; form?: Record<string, unknown>; contentType?: string },
  fixturesDir: string,
): { body?: string | Buffer | FormData; contentType?: string; kind?: PreparedRequest["bodyKind"]; label?: string } {
  if (spec.json !== undefined)
    return { body: JSON.stringify(spec.json), contentType: spec.contentType ?? "application/json", kind: "json" };
  if (spec.text !== undefined)
    return {
      body: spec.text,
      ...(spec.contentType ? { contentType: spec.contentType } : {}),
      kind: "text",
      label: spec.text.length > 200 ? `${spec.text.slice(0, 200)}…` : spec.text,
    };
  if (spec.file !== undefined)
    return {
      body: readFixture(fixturesDir, spec.file),
      ...(spec.contentType ? { contentType: spec.contentType } : {}),
      kind: "file",
      label: spec.file,
    };
  if (spec.form !== undefined) {
    const form = new FormData();
    for (const [name, value] of Object.entries(spec.form)) {
      if (value !== null && typeof value === "object" && "file" in value) {
        const part = value as { file: string; filename?: string; contentType?: string };
        form.append(
          name,
          new Blob([new Uint8Array(readFixture(fixturesDir, part.file))], {
            type: part.contentType ?? "application/octet-stream",
          }),
          part.filename ?? path.basename(part.file),
        );
      } else form.append(name, String(value));
    }
    return { body: form, kind: "form", label: Object.keys(spec.form).join(", ") };
  }
  return spec.contentType ? { contentType: spec.contentType } : {};
}

export function readFixture(fixturesDir: string, name: string): Buffer {
  const file = path.resolve(fixturesDir, name);
  if (!file.startsWith(path.resolve(fixturesDir) + path.sep))
    throw new Error(`fixture ${name} is outside the fixtures folder`);
  return readFileSync(file);
}
