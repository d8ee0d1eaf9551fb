/**
 * POST to a running server, and SSE bodies parsed with eventsource-parser, for tests that
 * check the wire itself rather than what an SDK makes of it (requests: test/support/http.ts).
 */
import { createParser } from "eventsource-parser";
import { type Reply, request } from "../support/http.ts";

export interface PostOptions {
  key?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export function post(baseUrl: string, path: string, body: unknown, options: PostOptions = {}): Promise<Reply> {
  const headers = { "content-type": "application/json", ...options.headers };
  return request(baseUrl + path, { method: "POST", key: options.key, headers, body, signal: options.signal });
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

/** A valid responses body with overrides. */
export function responsesBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "tiny-chat", input: "Hello!", store: false, max_output_tokens: 16, ...extra };
}
