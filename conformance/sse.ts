/**
 * Server-sent events as the kit compares them: each event's name and its data (parsed as
 * JSON when it is JSON), never the raw bytes. Parsing is eventsource-parser's, so
 * comments, `retry:` lines, CRLF and multi-line data follow the SSE specification.
 */
import { createParser } from "eventsource-parser";
import type { SseEvent } from "./contract.ts";

export type { SseEvent };

export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = createParser({
    onEvent: ({ event, data, id }) => {
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        json = undefined;
      }
      events.push({ event, data, json, id });
    },
  });
  // An event not ended by a blank line before the stream closes is dropped, as the SSE
  // specification tells every client to do.
  parser.feed(text);
  return events;
}

/** Writes events back as SSE text (one `event:` line when named, one `data:` line each). */
export function formatSse(events: { event?: string | undefined; data: string }[]): string {
  return events
    .map(
      (e) =>
        `${e.event !== undefined ? `event: ${e.event}\n` : ""}${e.data
          .split("\n")
          .map((line) => `data: ${line}`)
          .join("\n")}\n\n`,
    )
    .join("");
}
