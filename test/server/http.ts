/**
 * Plain HTTP calls to a running server, and SSE bodies parsed with eventsource-parser,
 * for tests that check the wire itself rather than what an SDK makes of it.
 */
import assert from "node:assert/strict";
import { createParser } from "eventsource-parser";

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, when it is JSON. */
  body: any;
}

export interface PostOptions {
  key?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export async function post(baseUrl: string, path: string, body: unknown, options: PostOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  const response = await fetch(baseUrl + path, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: options.signal,
  });
  return reply(response);
}

export async function reply(response: Response): Promise<Reply> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

export interface SseEvent {
  event: string | undefined;
  data: string;
  /** The data parsed as JSON, when it is JSON. */
  json: any;
}

export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = createParser({
    onEvent: ({ event, data }) => {
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        json = undefined;
      }
      events.push({ event, data, json });
    },
  });
  parser.feed(text);
  return events;
}

export const REQUEST_ID = /^req_[0-9a-f]{24}$/;

/** Asserts the error envelope, its status and type, and the x-request-id. */
export function assertError(result: Reply, status: number, code: string, type: string): void {
  assert.equal(result.status, status, result.text);
  assert.equal(result.body?.error?.code, code, result.text);
  assert.equal(result.body.error.type, type, result.text);
  assert.equal(typeof result.body.error.message, "string");
  assert.match(result.headers.get("x-request-id") ?? "", REQUEST_ID);
}

/** A valid responses body with overrides. */
export function responsesBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "tiny-chat", input: "Hello!", store: false, max_output_tokens: 16, ...extra };
}
