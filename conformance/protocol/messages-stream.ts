/**
 * The messages stream (the other vendor's wire format): `message_start`, then each content
 * block as `content_block_start`, its deltas and `content_block_stop` (pings anywhere after
 * the start), then `message_delta` with the output token count, and `message_stop` last; an
 * `error` event ends it early; no `[DONE]`.
 *
 * Each event type has its own check (MESSAGE_EVENT_CHECKS), typed by the contract's event of
 * that type, over one walk state that the stream's events advance in order.
 */
import type { SseEvent } from "../contract.ts";
import { isPlainObject } from "../matchers.ts";
import { problemRecorder, type ProtocolProblem, received, type ReceivedEvent, type Schemas } from "./problems.ts";

type MessageEvent = Schemas["MessageStreamEvent"];
type MessageEventType = MessageEvent["type"];
type BlockDelta = Extract<MessageEvent, { type: "content_block_delta" }>["delta"];
type MessageUsage = Extract<MessageEvent, { type: "message_delta" }>["usage"];

/** The delta types each content block type takes. */
const MESSAGE_DELTAS: Record<string, string[]> = {
  text: ["text_delta"],
  tool_use: ["input_json_delta"],
  thinking: ["thinking_delta", "signature_delta"],
};

/** Adds a problem of this stream's one rule at event `i`. */
type AddMessageProblem = (i: number | undefined, message: string, expected?: unknown, received?: unknown) => void;

/** Where the walk over a stream is. */
interface MessagesWalk {
  add: AddMessageProblem;
  phase: "start" | "blocks" | "delta" | "stopped";
  openBlock?: { index: number; type: unknown };
  nextBlock: number;
}

type EventCheck<K extends MessageEventType> = (
  walk: MessagesWalk,
  d: ReceivedEvent<MessageEvent, K>,
  i: number,
) => void;

/** The messages stream (the other vendor's wire format). */
export function checkMessagesStream(events: SseEvent[]): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const record = problemRecorder(problems);
  const add: AddMessageProblem = (i, message, expected, received) =>
    record("inference.messages-stream", i, message, expected, received);
  const walk: MessagesWalk = { add, phase: "start", nextBlock: 0 };
  for (const [i, e] of events.entries()) {
    if (e.data.trim() === "[DONE]") {
      add(i, "no [DONE] in the messages stream");
      continue;
    }
    const d = isPlainObject(e.json) ? e.json : undefined;
    if (!d) continue;
    if (d.type !== e.event) add(i, "the `event:` name must equal the data's type", e.event, d.type);
    checkEvent(walk, e.event, d, i);
  }
  if (walk.phase !== "stopped")
    add(undefined, "the stream must end with message_stop (or an error event)", "message_stop", events.at(-1)?.event);
  return problems;
}

/** One event: nothing after the end; error ends the stream; ping anywhere after the start; message_start first. */
function checkEvent(walk: MessagesWalk, name: string | undefined, d: Record<string, unknown>, i: number): void {
  const { add } = walk;
  if (walk.phase === "stopped") return add(i, "no event after message_stop or error", undefined, name);
  if (name === "error") {
    walk.phase = "stopped";
    return;
  }
  if (name === "ping") {
    if (walk.phase === "start") add(i, "ping before message_start");
    return;
  }
  if (walk.phase === "start") {
    if (name !== "message_start") add(i, "the first event must be message_start", "message_start", name);
    walk.phase = "blocks";
    if (name === "message_start") return;
  }
  const check = name !== undefined && Object.hasOwn(MESSAGE_EVENT_CHECKS, name) ? eventCheck(name) : undefined;
  if (check === undefined) add(i, `unexpected event ${String(name)}`);
  else check(walk, d, i);
}

/** The check of a known event type, taking the event as received (its fields are all optional). */
function eventCheck(name: string): EventCheck<MessageEventType> {
  return MESSAGE_EVENT_CHECKS[name as keyof typeof MESSAGE_EVENT_CHECKS] as EventCheck<MessageEventType>;
}

const MESSAGE_EVENT_CHECKS: { [K in Exclude<MessageEventType, "error" | "ping">]: EventCheck<K> } = {
  message_start: (walk, _d, i) => walk.add(i, "message_start comes once"),

  content_block_start: (walk, d, i) => {
    const { add, openBlock, nextBlock } = walk;
    if (walk.phase !== "blocks") add(i, "content blocks come before message_delta");
    if (openBlock) add(i, `content_block_start while block ${openBlock.index} is open`);
    if (d.index !== nextBlock) add(i, "content block indexes count 0, 1, 2, …", nextBlock, d.index);
    walk.openBlock = {
      index: typeof d.index === "number" ? d.index : nextBlock,
      type: received<Schemas["MessageContentBlock"]>(d.content_block)?.type,
    };
    walk.nextBlock++;
  },

  content_block_delta: (walk, d, i) => {
    const { add, openBlock } = walk;
    if (!openBlock || d.index !== openBlock.index)
      add(i, "content_block_delta must name the open block", openBlock?.index, d.index);
    const type = received<BlockDelta>(d.delta)?.type;
    const allowed = MESSAGE_DELTAS[String(openBlock?.type)] ?? [];
    if (openBlock && !allowed.includes(String(type)))
      add(i, `a ${String(openBlock.type)} block takes ${allowed.join(" or ")} deltas`, allowed, type);
  },

  content_block_stop: (walk, d, i) => {
    const { add, openBlock } = walk;
    if (!openBlock || d.index !== openBlock.index)
      add(i, "content_block_stop must name the open block", openBlock?.index, d.index);
    walk.openBlock = undefined;
  },

  message_delta: (walk, d, i) => {
    const { add } = walk;
    if (walk.openBlock) add(i, "message_delta while a content block is open");
    if (walk.phase === "delta") add(i, "message_delta comes once");
    walk.phase = "delta";
    const usage = received<MessageUsage>(d.usage);
    if (!usage || typeof usage.output_tokens !== "number")
      add(i, "message_delta carries usage.output_tokens", { output_tokens: "$integer" }, d.usage);
  },

  message_stop: (walk, _d, i) => {
    if (walk.phase !== "delta") walk.add(i, "message_stop comes after message_delta");
    walk.phase = "stopped";
  },
};
