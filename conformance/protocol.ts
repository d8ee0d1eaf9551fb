/**
 * Protocol checks: what a schema cannot say about one event or one body on its own. They
 * run on every response the kit receives, whatever the transcript expects:
 *
 * - every response carries `x-request-id`; 429 and 503 carry an integer `Retry-After`;
 * - a `/responses` stream follows the events table in order (with the decided extras),
 *   `event:` equals the data's `type`, `sequence_number` counts 0, 1, 2, …, item ids are
 *   the same in every event of an item, deltas concatenate to the done text, the final
 *   response repeats the items, `response.completed` carries usage with
 *   total = input + output and ends the stream, and there is no `[DONE]`;
 * - chat completions and completions streams end with `data: [DONE]`, keep one id, and
 *   their usage adds up; the messages stream follows that vendor's event order;
 * - JSON answers of the inference endpoints add up their usage.
 *
 * The stream checks live in protocol/, one file per wire format, each typed by the
 * contract's events; this module is the kit's entry to all of them.
 */
import type { SseEvent } from "./contract.ts";
import { isPlainObject } from "./matchers.ts";
import { checkChatUsage, checkResponseObject } from "./protocol/bodies.ts";
import { checkChatStream, type StreamOptions } from "./protocol/chat-stream.ts";
import { checkMessagesStream } from "./protocol/messages-stream.ts";
import type { ProtocolProblem } from "./protocol/problems.ts";
import { checkResponsesStream } from "./protocol/responses-stream.ts";

export type { ProtocolProblem } from "./protocol/problems.ts";
export type { StreamOptions } from "./protocol/chat-stream.ts";
export { checkChatStream, checkMessagesStream, checkResponsesStream };

export type StreamKind = "responses" | "chat" | "completions" | "messages";

/** The stream protocol of an operation path, if it streams. */
export function streamKindOf(template: string): StreamKind | undefined {
  if (template === "/responses") return "responses";
  if (template === "/chat/completions") return "chat";
  if (template === "/completions") return "completions";
  if (template === "/messages") return "messages";
  return undefined;
}

// ---------------------------------------------------------------------------
// Headers
// ---------------------------------------------------------------------------

export function checkHeaders(status: number, headers: Headers): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const requestId = headers.get("x-request-id");
  if (requestId === null || requestId.trim() === "")
    problems.push({
      rule: "headers.x-request-id",
      message: "x-request-id is missing (it must be on every response, success or error)",
      at: "headers.x-request-id",
      received: requestId,
    });
  if (status === 429 || status === 503) {
    const retryAfter = headers.get("retry-after");
    if (retryAfter === null)
      problems.push({
        rule: "headers.retry-after",
        message: `Retry-After is missing on a ${status}`,
        at: "headers.retry-after",
      });
    // At least 1: `Retry-After: 0` on a 429 or 503 tells a client to hammer the service at once (docs/decisions.md).
    else if (!/^[1-9]\d*$/.test(retryAfter.trim()))
      problems.push({
        rule: "headers.retry-after",
        message: `Retry-After must be a positive integer (seconds), got ${JSON.stringify(retryAfter)}`,
        at: "headers.retry-after",
        received: retryAfter,
      });
  }
  return problems;
}

/** x-provider-class and x-config-version on successful inference answers. */
export function checkInferenceHeaders(headers: Headers): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const cls = headers.get("x-provider-class");
  if (cls !== "primary" && cls !== "fallback")
    problems.push({
      rule: "headers.x-provider-class",
      message: `x-provider-class must be primary or fallback, got ${JSON.stringify(cls)}`,
      at: "headers.x-provider-class",
      received: cls,
    });
  const version = headers.get("x-config-version");
  if (version === null || version === "")
    problems.push({
      rule: "headers.x-config-version",
      message: "x-config-version is missing on a successful inference response",
      at: "headers.x-config-version",
      received: version,
    });
  return problems;
}

// ---------------------------------------------------------------------------
// JSON bodies
// ---------------------------------------------------------------------------

export function checkJsonBody(kind: StreamKind, body: unknown): ProtocolProblem[] {
  if (!isPlainObject(body)) return [];
  if (kind === "responses") return checkResponseObject(body, "body", "responses.usage", false);
  if (kind === "chat" || kind === "completions") return checkChatUsage(body.usage, "body.usage");
  return [];
}

// ---------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------

export function checkStream(kind: StreamKind, events: SseEvent[], options: StreamOptions = {}): ProtocolProblem[] {
  switch (kind) {
    case "responses":
      return checkResponsesStream(events);
    case "chat":
      return checkChatStream(events, "chat.completion.chunk", options);
    case "completions":
      return checkChatStream(events, "text_completion", options);
    case "messages":
      return checkMessagesStream(events);
  }
}
