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
 */
import type { SseEvent } from "./contract.ts";
import { deepEqual, isPlainObject } from "./matchers.ts";

export interface ProtocolProblem {
  /** The rule id (conformance/rules.yaml) the problem breaks. */
  rule: string;
  message: string;
  at?: string;
  expected?: unknown;
  received?: unknown;
}

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
    else if (!/^\d+$/.test(retryAfter.trim()))
      problems.push({
        rule: "headers.retry-after",
        message: `Retry-After must be an integer >= 0 (seconds), got ${JSON.stringify(retryAfter)}`,
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

function checkUsage(usage: unknown, at: string, rule: string): ProtocolProblem[] {
  if (!isPlainObject(usage)) return [{ rule, message: "usage is missing", at }];
  const { input_tokens: i, output_tokens: o, total_tokens: t } = usage as Record<string, unknown>;
  if (![i, o, t].every((n) => typeof n === "number" && Number.isInteger(n) && n >= 0))
    return [{ rule, message: "usage counts must be integers >= 0", at, received: usage }];
  if ((i as number) + (o as number) !== t)
    return [
      {
        rule,
        message: `total_tokens must equal input_tokens + output_tokens (${String(i)} + ${String(o)} = ${(i as number) + (o as number)})`,
        at: `${at}.total_tokens`,
        expected: (i as number) + (o as number),
        received: t,
      },
    ];
  return [];
}

function checkChatUsage(usage: unknown, at: string): ProtocolProblem[] {
  if (!isPlainObject(usage)) return [];
  const { prompt_tokens: p, completion_tokens: c, total_tokens: t } = usage;
  if (typeof p === "number" && typeof c === "number" && p + c !== t)
    return [
      {
        rule: "inference.usage",
        message: `total_tokens must equal prompt_tokens + completion_tokens (${p} + ${c} = ${p + c})`,
        at: `${at}.total_tokens`,
        expected: p + c,
        received: t,
      },
    ];
  return [];
}

/** A response object: usage adds up, store false, status and incomplete_details agree. */
function checkResponseObject(
  response: Record<string, unknown>,
  at: string,
  usageRule: string,
  streamedFinal: boolean,
): ProtocolProblem[] {
  const problems = checkUsage(response.usage, `${at}.usage`, usageRule);
  if (response.store !== false)
    problems.push({
      rule: "responses.rule-1",
      message: "store must be false in every response object",
      at: `${at}.store`,
      received: response.store,
    });
  const status = response.status;
  if (status !== "completed" && status !== "incomplete")
    problems.push({
      rule: "states.response",
      message: `status must be completed or incomplete${streamedFinal ? " in response.completed" : ""}`,
      at: `${at}.status`,
      received: status,
    });
  const details = response.incomplete_details;
  if (status === "incomplete") {
    if (!isPlainObject(details) || details.reason !== "max_output_tokens")
      problems.push({
        rule: "states.response",
        message: "an incomplete response must say incomplete_details.reason max_output_tokens",
        at: `${at}.incomplete_details`,
        received: details,
      });
  } else if (status === "completed" && details !== undefined && details !== null) {
    problems.push({
      rule: "states.response",
      message: "a completed response has incomplete_details null or absent",
      at: `${at}.incomplete_details`,
      received: details,
    });
  }
  return problems;
}

// ---------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------

export interface StreamOptions {
  /** chat/completions: the request asked for `stream_options.include_usage`. */
  includeUsage?: boolean;
}

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

interface OpenItem {
  index: number;
  id: unknown;
  type: unknown;
  added: Record<string, unknown>;
  /** content_index → text so far, and whether it is done. */
  parts: Map<number, { deltas: string; done?: string; partDone?: unknown; opened: boolean }>;
  args: string;
  argsDone?: string;
  phase: "open";
}

/** The `/responses` stream rules. */
export function checkResponsesStream(events: SseEvent[]): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const add = (rule: string, i: number | undefined, message: string, expected?: unknown, received?: unknown) => {
    const p: ProtocolProblem = { rule, message, ...(i === undefined ? {} : { at: `events[${i}]` }) };
    if (expected !== undefined) p.expected = expected;
    if (received !== undefined) p.received = received;
    problems.push(p);
  };

  if (events.length === 0) {
    add("events.order", undefined, "the stream has no events");
    return problems;
  }
  // [DONE], event names, sequence numbers.
  events.forEach((e, i) => {
    if (e.data.trim() === "[DONE]")
      add("events.no-done", i, "no [DONE] sentinel on /responses: response.completed ends the stream");
    if (!isPlainObject(e.json)) return;
    if (e.json.type !== e.event)
      add("events.type-equals-event", i, "the `event:` name must equal the data's type", e.event, e.json.type);
    if (e.json.sequence_number !== i)
      add(
        "events.sequence",
        i,
        `sequence_number must count 0, 1, 2, … (this is event ${i})`,
        i,
        e.json.sequence_number,
      );
  });

  let phase: "start" | "created" | "items" | "ended" = "start";
  let created: Record<string, unknown> | undefined;
  let sawInProgress = false;
  let nextIndex = 0;
  let open: OpenItem | undefined;
  const doneItems: Record<string, unknown>[] = [];
  let sawError = false;
  let sawCompleted = false;

  for (const [i, e] of events.entries()) {
    const d = isPlainObject(e.json) ? e.json : undefined;
    const name = e.event ?? (d?.type as string | undefined);
    if (!d || e.data.trim() === "[DONE]") continue;
    if (phase === "ended") {
      add(
        sawError ? "errors.rule-4" : "events.order",
        i,
        `no event may follow ${sawError ? "the error event" : "response.completed"}`,
        undefined,
        name,
      );
      continue;
    }
    if (name === "error") {
      sawError = true;
      if (typeof d.code !== "string" || typeof d.message !== "string")
        add("errors.rule-4", i, "the error event carries code and message", { code: "$string", message: "$string" }, d);
      phase = "ended";
      continue;
    }
    if (phase === "start") {
      if (name !== "response.created") {
        add("events.order", i, "the first event must be response.created", "response.created", name);
        phase = "items";
      } else {
        created = isPlainObject(d.response) ? d.response : undefined;
        checkCreated(created, i, add);
        phase = "created";
        continue;
      }
    }
    const indexOf = (v: unknown) => (typeof v === "number" ? v : undefined);
    switch (name) {
      case "response.created":
        add("events.order", i, "response.created comes once, first");
        break;
      case "response.in_progress": {
        if (phase !== "created" || sawInProgress)
          add("events.order", i, "response.in_progress comes once, right after response.created");
        sawInProgress = true;
        const r = isPlainObject(d.response) ? d.response : {};
        if (r.status !== "in_progress")
          add(
            "events.order",
            i,
            "response.in_progress carries the response with status in_progress",
            "in_progress",
            r.status,
          );
        if (created && r.id !== created.id)
          add("events.item-ids", i, "the response id must be the same in every event", created.id, r.id);
        break;
      }
      case "response.output_item.added": {
        if (phase === "created" && !sawInProgress)
          add(
            "events.order",
            i,
            "response.in_progress must follow response.created (decided extra event)",
            "response.in_progress",
            name,
          );
        phase = "items";
        if (open)
          add(
            "events.order",
            i,
            `output_item.added while item ${open.index} is still open (its output_item.done has not come)`,
          );
        const item = isPlainObject(d.item) ? d.item : {};
        const index = indexOf(d.output_index);
        if (index !== nextIndex)
          add("events.order", i, "output_index must count 0, 1, 2, … across items", nextIndex, d.output_index);
        if (item.status !== "in_progress")
          add("events.order", i, "an added item has status in_progress", "in_progress", item.status);
        if (item.role !== "assistant")
          add("events.order", i, "an output item's role is assistant", "assistant", item.role);
        open = {
          index: index ?? nextIndex,
          id: item.id,
          type: item.type,
          added: item,
          parts: new Map(),
          args: "",
          phase: "open",
        };
        nextIndex++;
        break;
      }
      case "response.content_part.added":
      case "response.output_text.delta":
      case "response.output_text.done":
      case "response.content_part.done": {
        if (!open) {
          add("events.order", i, `${name} outside an open output item`);
          break;
        }
        checkItemRef(open, d, i, add, name);
        if (open.type !== "message")
          add("events.order", i, `${name} belongs to a message item, not ${String(open.type)}`);
        const c = indexOf(d.content_index) ?? -1;
        let part = open.parts.get(c);
        if (name === "response.content_part.added") {
          if (part) add("events.order", i, `content part ${c} was already added`);
          if (c !== open.parts.size)
            add("events.order", i, "content_index must count 0, 1, 2, … within an item", open.parts.size, c);
          open.parts.set(c, { deltas: "", opened: true });
          break;
        }
        if (!part) {
          add(
            "events.order",
            i,
            `${name} before response.content_part.added for content_index ${c} (decided extra event)`,
          );
          part = { deltas: "", opened: false };
          open.parts.set(c, part);
        }
        if (name === "response.output_text.delta") {
          if (part.done !== undefined) add("events.order", i, "a delta after response.output_text.done");
          if (typeof d.delta === "string") part.deltas += d.delta;
        } else if (name === "response.output_text.done") {
          if (part.done !== undefined) add("events.order", i, "response.output_text.done twice for one part");
          part.done = typeof d.text === "string" ? d.text : "";
          if (part.done !== part.deltas)
            add("events.deltas", i, "the deltas must concatenate to the done text", part.deltas, part.done);
        } else {
          if (part.done === undefined)
            add("events.order", i, "response.content_part.done before response.output_text.done");
          part.partDone = d.part;
          const text = isPlainObject(d.part) ? d.part.text : undefined;
          if (part.done !== undefined && text !== part.done)
            add("events.deltas", i, "the done part's text must equal the done text", part.done, text);
        }
        break;
      }
      case "response.function_call_arguments.delta":
      case "response.function_call_arguments.done": {
        if (!open) {
          add("events.order", i, `${name} outside an open output item`);
          break;
        }
        checkItemRef(open, d, i, add, name);
        if (open.type !== "function_call")
          add("events.order", i, `${name} belongs to a function_call item, not ${String(open.type)}`);
        if (name.endsWith(".delta")) {
          if (open.argsDone !== undefined)
            add("events.order", i, "an arguments delta after function_call_arguments.done");
          if (typeof d.delta === "string") open.args += d.delta;
        } else {
          if (open.argsDone !== undefined) add("events.order", i, "function_call_arguments.done twice");
          open.argsDone = typeof d.arguments === "string" ? d.arguments : "";
          if (open.argsDone !== open.args)
            add(
              "events.deltas",
              i,
              "the argument deltas must concatenate to the done arguments",
              open.args,
              open.argsDone,
            );
        }
        break;
      }
      case "response.output_item.done": {
        if (!open) {
          add("events.order", i, "output_item.done without output_item.added");
          break;
        }
        const item = isPlainObject(d.item) ? d.item : {};
        if (d.output_index !== open.index)
          add("events.order", i, "output_item.done must carry the index of the open item", open.index, d.output_index);
        if (item.id !== open.id)
          add(
            "events.item-ids",
            i,
            "the item id must be the same in output_item.added and output_item.done",
            open.id,
            item.id,
          );
        if (item.type !== open.type)
          add("events.item-ids", i, "the item type must not change between added and done", open.type, item.type);
        if (item.status !== "completed")
          add("events.order", i, "a done item has status completed", "completed", item.status);
        if (open.type === "message") {
          const content = Array.isArray(item.content) ? item.content : [];
          if (content.length !== open.parts.size)
            add(
              "events.deltas",
              i,
              "the done message must hold one content part per part streamed",
              open.parts.size,
              content.length,
            );
          for (const [c, part] of open.parts) {
            if (part.done === undefined)
              add("events.order", i, `output_item.done before response.output_text.done of content_index ${c}`);
            if (part.opened && part.partDone === undefined)
              add(
                "events.order",
                i,
                `output_item.done before response.content_part.done of content_index ${c} (decided extra event)`,
              );
            const text = isPlainObject(content[c]) ? content[c].text : undefined;
            if (part.done !== undefined && text !== part.done)
              add(
                "events.deltas",
                i,
                `the done item's content[${c}].text must equal the streamed text`,
                part.done,
                text,
              );
          }
        } else if (open.type === "function_call") {
          if (open.argsDone === undefined)
            add(
              "events.order",
              i,
              "output_item.done of a function_call before function_call_arguments.done (decided extra event)",
            );
          else if (item.arguments !== open.argsDone)
            add(
              "events.deltas",
              i,
              "the done item's arguments must equal the streamed arguments",
              open.argsDone,
              item.arguments,
            );
          for (const k of ["call_id", "name"])
            if (open.added[k] !== undefined && item[k] !== open.added[k])
              add(
                "events.item-ids",
                i,
                `the function call's ${k} must not change between added and done`,
                open.added[k],
                item[k],
              );
        }
        doneItems.push(item);
        open = undefined;
        break;
      }
      case "response.completed": {
        sawCompleted = true;
        if (open) add("events.order", i, `response.completed while item ${open.index} is still open`);
        if (phase === "created" && !sawInProgress)
          add("events.order", i, "response.in_progress must follow response.created (decided extra event)");
        const r = isPlainObject(d.response) ? d.response : {};
        problems.push(...checkResponseObject(r, `events[${i}].data.response`, "events.completed-usage", true));
        if (created) {
          if (r.id !== created.id)
            add(
              "events.item-ids",
              i,
              "the response id must be the same in response.created and response.completed",
              created.id,
              r.id,
            );
          if (r.model !== created.model)
            add(
              "events.item-ids",
              i,
              "the model must be the same in response.created and response.completed",
              created.model,
              r.model,
            );
        }
        const output = Array.isArray(r.output) ? r.output : [];
        if (output.length !== doneItems.length)
          add(
            "events.item-ids",
            i,
            "response.completed must list every streamed item",
            doneItems.length,
            output.length,
          );
        doneItems.forEach((item, k) => {
          if (!deepEqual(output[k], item))
            add(
              "events.item-ids",
              i,
              `response.output[${k}] must equal the item of its output_item.done`,
              item,
              output[k],
            );
        });
        phase = "ended";
        break;
      }
      default:
        add("events.order", i, `unexpected event ${String(name)}`);
    }
  }
  if (!sawCompleted && !sawError)
    add(
      "events.order",
      undefined,
      "the stream must end with response.completed (or an error event)",
      "response.completed",
      events.at(-1)?.event,
    );
  return problems;
}

function checkCreated(
  response: Record<string, unknown> | undefined,
  i: number,
  add: (rule: string, i: number, message: string, expected?: unknown, received?: unknown) => void,
): void {
  if (!response) return add("events.created", i, "response.created carries the response");
  if (response.status !== "in_progress")
    add("events.created", i, "response.created shows status in_progress", "in_progress", response.status);
  if (!Array.isArray(response.output) || response.output.length !== 0)
    add("events.created", i, "response.created has an empty output", [], response.output);
  const usage = response.usage;
  if (!isPlainObject(usage) || usage.input_tokens !== 0 || usage.output_tokens !== 0 || usage.total_tokens !== 0)
    add(
      "events.created",
      i,
      "response.created has usage counts 0",
      { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
      usage,
    );
  if (response.store !== false) add("events.created", i, "response.created has store false", false, response.store);
}

function checkItemRef(
  open: OpenItem,
  d: Record<string, unknown>,
  i: number,
  add: (rule: string, i: number, message: string, expected?: unknown, received?: unknown) => void,
  name: string,
): void {
  if (d.output_index !== open.index)
    add("events.order", i, `${name} must carry the open item's output_index`, open.index, d.output_index);
  if (d.item_id !== undefined && d.item_id !== open.id)
    add("events.item-ids", i, `${name} names another item than the open one`, open.id, d.item_id);
}

/** Chat completions and completions streams (the OpenAI wire format). */
export function checkChatStream(events: SseEvent[], object: string, options: StreamOptions): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const add = (rule: string, i: number | undefined, message: string, expected?: unknown, received?: unknown) => {
    const p: ProtocolProblem = { rule, message, ...(i === undefined ? {} : { at: `events[${i}]` }) };
    if (expected !== undefined) p.expected = expected;
    if (received !== undefined) p.received = received;
    problems.push(p);
  };
  const doneAt = events.findIndex((e) => e.data.trim() === "[DONE]");
  const errorAt = events.findIndex((e) => e.event === "error");
  if (errorAt >= 0) {
    if (errorAt !== events.length - 1) add("inference.stream-done", errorAt, "the error event ends the stream");
    if (doneAt >= 0) add("inference.stream-done", doneAt, "no [DONE] after an error event");
  } else if (doneAt < 0) add("inference.stream-done", undefined, "the stream must end with data: [DONE]");
  else if (doneAt !== events.length - 1)
    add("inference.stream-done", doneAt, "[DONE] must be the last event", events.length - 1, doneAt);
  if (events.filter((e) => e.data.trim() === "[DONE]").length > 1)
    add("inference.stream-done", undefined, "[DONE] must come once");

  const chunks = events.map((e, i) => ({ e, i })).filter(({ e }) => e.event !== "error" && isPlainObject(e.json));
  const first = chunks[0]?.e.json as Record<string, unknown> | undefined;
  let finished = false;
  let usageChunks = 0;
  for (const { e, i } of chunks) {
    const c = e.json as Record<string, unknown>;
    if (c.object !== object) add("inference.stream-chunks", i, `every chunk has object ${object}`, object, c.object);
    if (first && c.id !== first.id)
      add("inference.stream-chunks", i, "every chunk of a stream has the same id", first.id, c.id);
    if (first && c.model !== first.model)
      add("inference.stream-chunks", i, "every chunk of a stream names the same model", first.model, c.model);
    const choices = Array.isArray(c.choices) ? c.choices : [];
    if (isPlainObject(c.usage)) {
      usageChunks++;
      problems.push(...checkChatUsage(c.usage, `events[${i}].data.usage`));
      if (choices.length !== 0) add("inference.stream-chunks", i, "the usage chunk has choices []", [], choices);
    }
    for (const choice of choices) {
      if (!isPlainObject(choice)) continue;
      const delta = isPlainObject(choice.delta) ? choice.delta : {};
      const hasText =
        (typeof delta.content === "string" && delta.content !== "") ||
        (typeof choice.text === "string" && choice.text !== "");
      if (finished && hasText) add("inference.stream-chunks", i, "no content after the chunk with finish_reason");
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        if (finished) add("inference.stream-chunks", i, "finish_reason is set once");
        finished = true;
      }
    }
  }
  if (errorAt < 0 && chunks.length > 0 && !finished)
    add("inference.stream-chunks", undefined, "one chunk must carry the finish_reason");
  if (options.includeUsage && errorAt < 0) {
    if (usageChunks !== 1)
      add(
        "inference.stream-chunks",
        undefined,
        "with stream_options.include_usage exactly one chunk carries usage",
        1,
        usageChunks,
      );
    const last = chunks.at(-1);
    if (last && !isPlainObject((last.e.json as Record<string, unknown>).usage))
      add("inference.stream-chunks", last.i, "the usage chunk is the last before [DONE]");
  }
  return problems;
}

const MESSAGE_DELTAS: Record<string, string[]> = {
  text: ["text_delta"],
  tool_use: ["input_json_delta"],
  thinking: ["thinking_delta", "signature_delta"],
};

/** The messages stream (the other vendor's wire format). */
export function checkMessagesStream(events: SseEvent[]): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const add = (i: number | undefined, message: string, expected?: unknown, received?: unknown) => {
    const p: ProtocolProblem = {
      rule: "inference.messages-stream",
      message,
      ...(i === undefined ? {} : { at: `events[${i}]` }),
    };
    if (expected !== undefined) p.expected = expected;
    if (received !== undefined) p.received = received;
    problems.push(p);
  };
  let phase: "start" | "blocks" | "delta" | "stopped" = "start";
  let openBlock: { index: number; type: unknown } | undefined;
  let nextBlock = 0;
  for (const [i, e] of events.entries()) {
    if (e.data.trim() === "[DONE]") {
      add(i, "no [DONE] in the messages stream");
      continue;
    }
    const d = isPlainObject(e.json) ? e.json : undefined;
    if (!d) continue;
    if (d.type !== e.event) add(i, "the `event:` name must equal the data's type", e.event, d.type);
    const name = e.event;
    if (phase === "stopped") {
      add(i, "no event after message_stop or error", undefined, name);
      continue;
    }
    if (name === "error") {
      phase = "stopped";
      continue;
    }
    if (name === "ping") {
      if (phase === "start") add(i, "ping before message_start");
      continue;
    }
    if (phase === "start") {
      if (name !== "message_start") add(i, "the first event must be message_start", "message_start", name);
      phase = "blocks";
      if (name === "message_start") continue;
    }
    switch (name) {
      case "message_start":
        add(i, "message_start comes once");
        break;
      case "content_block_start": {
        if (phase !== "blocks") add(i, "content blocks come before message_delta");
        if (openBlock) add(i, `content_block_start while block ${openBlock.index} is open`);
        if (d.index !== nextBlock) add(i, "content block indexes count 0, 1, 2, …", nextBlock, d.index);
        openBlock = {
          index: typeof d.index === "number" ? d.index : nextBlock,
          type: isPlainObject(d.content_block) ? d.content_block.type : undefined,
        };
        nextBlock++;
        break;
      }
      case "content_block_delta": {
        if (!openBlock || d.index !== openBlock.index)
          add(i, "content_block_delta must name the open block", openBlock?.index, d.index);
        const type = isPlainObject(d.delta) ? d.delta.type : undefined;
        const allowed = MESSAGE_DELTAS[String(openBlock?.type)] ?? [];
        if (openBlock && !allowed.includes(String(type)))
          add(i, `a ${String(openBlock.type)} block takes ${allowed.join(" or ")} deltas`, allowed, type);
        break;
      }
      case "content_block_stop":
        if (!openBlock || d.index !== openBlock.index)
          add(i, "content_block_stop must name the open block", openBlock?.index, d.index);
        openBlock = undefined;
        break;
      case "message_delta":
        if (openBlock) add(i, "message_delta while a content block is open");
        if (phase === "delta") add(i, "message_delta comes once");
        phase = "delta";
        if (!isPlainObject(d.usage) || typeof d.usage.output_tokens !== "number")
          add(i, "message_delta carries usage.output_tokens", { output_tokens: "$integer" }, d.usage);
        break;
      case "message_stop":
        if (phase !== "delta") add(i, "message_stop comes after message_delta");
        phase = "stopped";
        break;
      default:
        add(i, `unexpected event ${String(name)}`);
    }
  }
  if (phase !== "stopped")
    add(undefined, "the stream must end with message_stop (or an error event)", "message_stop", events.at(-1)?.event);
  return problems;
}
