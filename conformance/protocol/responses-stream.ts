/**
 * The `/responses` stream rules: the events table in order (with the decided extras),
 * `event:` equal to the data's `type`, `sequence_number` counting 0, 1, 2, …, item ids the
 * same in every event of an item, deltas that concatenate to the done text, a final response
 * that repeats the items, `response.completed` with usage total = input + output ending the
 * stream, and no `[DONE]`.
 *
 * Each event type has its own check (RESPONSE_EVENT_CHECKS), typed by the contract's event of
 * that type, over one walk state that the stream's events advance in order.
 */
import type { SseEvent } from "../contract.ts";
import { deepEqual, isPlainObject } from "../matchers.ts";
import { checkResponseObject } from "./bodies.ts";
import {
  type AddProblem,
  problemRecorder,
  type ProtocolProblem,
  type Received,
  received,
  type ReceivedEvent,
  type Schemas,
} from "./problems.ts";

type ResponseEvent = Schemas["ResponseStreamEvent"];
type ResponseEventType = ResponseEvent["type"];
type Item = Received<Schemas["OutputItem"]>;

/** A content part of the open message: the text its deltas make, and what its done events said. */
interface OpenPart {
  deltas: string;
  done?: string;
  partDone?: unknown;
  /** Whether response.content_part.added opened it (a decided extra event). */
  opened: boolean;
}

/** The output item between its output_item.added and its output_item.done. */
interface OpenItem {
  index: number;
  id: unknown;
  type: unknown;
  added: Item;
  /** content_index → the part. */
  parts: Map<number, OpenPart>;
  args: string;
  argsDone?: string;
}

/** Where the walk over a stream is, and what earlier events said. */
interface ResponsesWalk {
  problems: ProtocolProblem[];
  add: AddProblem;
  phase: "start" | "created" | "items" | "ended";
  created?: Received<Schemas["ResponseObject"]>;
  sawInProgress: boolean;
  nextIndex: number;
  open?: OpenItem;
  doneItems: Item[];
  sawError: boolean;
  sawCompleted: boolean;
}

type EventCheck<K extends ResponseEventType> = (
  walk: ResponsesWalk,
  d: ReceivedEvent<ResponseEvent, K>,
  i: number,
) => void;

/** The `/responses` stream rules. */
export function checkResponsesStream(events: SseEvent[]): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const add = problemRecorder(problems);
  if (events.length === 0) {
    add("events.order", undefined, "the stream has no events");
    return problems;
  }
  checkNamesAndNumbers(events, add);
  const walk: ResponsesWalk = {
    problems,
    add,
    phase: "start",
    sawInProgress: false,
    nextIndex: 0,
    doneItems: [],
    sawError: false,
    sawCompleted: false,
  };
  for (const [i, e] of events.entries()) {
    const d = isPlainObject(e.json) ? e.json : undefined;
    if (!d || e.data.trim() === "[DONE]") continue;
    checkEvent(walk, e.event ?? (d.type as string | undefined), d, i);
  }
  if (!walk.sawCompleted && !walk.sawError)
    add(
      "events.order",
      undefined,
      "the stream must end with response.completed (or an error event)",
      "response.completed",
      events.at(-1)?.event,
    );
  return problems;
}

/** No [DONE]; each `event:` name equals its data's type; sequence numbers count 0, 1, 2, …. */
function checkNamesAndNumbers(events: SseEvent[], add: AddProblem): void {
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
}

/** One event: after the end nothing may come; an error ends the stream; the first must be response.created. */
function checkEvent(walk: ResponsesWalk, name: string | undefined, d: Record<string, unknown>, i: number): void {
  const { add } = walk;
  if (walk.phase === "ended") {
    add(
      walk.sawError ? "errors.rule-4" : "events.order",
      i,
      `no event may follow ${walk.sawError ? "the error event" : "response.completed"}`,
      undefined,
      name,
    );
    return;
  }
  if (name === "error") return checkErrorEvent(walk, d, i);
  if (walk.phase === "start") {
    if (name === "response.created") return checkCreated(walk, d, i);
    add("events.order", i, "the first event must be response.created", "response.created", name);
    walk.phase = "items";
  }
  const check = name !== undefined && Object.hasOwn(RESPONSE_EVENT_CHECKS, name) ? eventCheck(name) : undefined;
  if (check === undefined) add("events.order", i, `unexpected event ${String(name)}`);
  else check(walk, d, i);
}

/** The check of a known event type, taking the event as received (its fields are all optional). */
function eventCheck(name: string): EventCheck<ResponseEventType> {
  return RESPONSE_EVENT_CHECKS[name as keyof typeof RESPONSE_EVENT_CHECKS] as EventCheck<ResponseEventType>;
}

const checkErrorEvent: EventCheck<"error"> = (walk, d, i) => {
  walk.sawError = true;
  if (typeof d.code !== "string" || typeof d.message !== "string")
    walk.add(
      "errors.rule-4",
      i,
      "the error event carries code and message",
      { code: "$string", message: "$string" },
      d,
    );
  walk.phase = "ended";
};

/** The first event: the response in progress, with empty output, zero usage and store false. */
const checkCreated: EventCheck<"response.created"> = (walk, d, i) => {
  const { add } = walk;
  const response = received<Schemas["ResponseObject"]>(d.response);
  walk.created = response;
  walk.phase = "created";
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
};

const indexOf = (v: unknown) => (typeof v === "number" ? v : undefined);

const RESPONSE_EVENT_CHECKS: { [K in Exclude<ResponseEventType, "error">]: EventCheck<K> } = {
  "response.created": (walk, _d, i) => walk.add("events.order", i, "response.created comes once, first"),

  "response.in_progress": (walk, d, i) => {
    const { add, created } = walk;
    if (walk.phase !== "created" || walk.sawInProgress)
      add("events.order", i, "response.in_progress comes once, right after response.created");
    walk.sawInProgress = true;
    const r = received<Schemas["ResponseObject"]>(d.response) ?? {};
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
  },

  "response.output_item.added": (walk, d, i) => {
    const { add } = walk;
    if (walk.phase === "created" && !walk.sawInProgress)
      add(
        "events.order",
        i,
        "response.in_progress must follow response.created (decided extra event)",
        "response.in_progress",
        "response.output_item.added",
      );
    walk.phase = "items";
    if (walk.open)
      add(
        "events.order",
        i,
        `output_item.added while item ${walk.open.index} is still open (its output_item.done has not come)`,
      );
    const item: Item = received<Schemas["OutputItem"]>(d.item) ?? {};
    const index = indexOf(d.output_index);
    if (index !== walk.nextIndex)
      add("events.order", i, "output_index must count 0, 1, 2, … across items", walk.nextIndex, d.output_index);
    if (item.status !== "in_progress")
      add("events.order", i, "an added item has status in_progress", "in_progress", item.status);
    if (item.role !== "assistant") add("events.order", i, "an output item's role is assistant", "assistant", item.role);
    walk.open = {
      index: index ?? walk.nextIndex,
      id: item.id,
      type: item.type,
      added: item,
      parts: new Map(),
      args: "",
    };
    walk.nextIndex++;
  },

  "response.content_part.added": (walk, d, i) => {
    const name = "response.content_part.added";
    const at = messagePart(walk, d, i, name);
    if (!at) return;
    const { open, c } = at;
    if (open.parts.get(c)) walk.add("events.order", i, `content part ${c} was already added`);
    if (c !== open.parts.size)
      walk.add("events.order", i, "content_index must count 0, 1, 2, … within an item", open.parts.size, c);
    open.parts.set(c, { deltas: "", opened: true });
  },

  "response.output_text.delta": (walk, d, i) => {
    const part = addedPart(walk, d, i, "response.output_text.delta");
    if (!part) return;
    if (part.done !== undefined) walk.add("events.order", i, "a delta after response.output_text.done");
    if (typeof d.delta === "string") part.deltas += d.delta;
  },

  "response.output_text.done": (walk, d, i) => {
    const { add } = walk;
    const part = addedPart(walk, d, i, "response.output_text.done");
    if (!part) return;
    if (part.done !== undefined) add("events.order", i, "response.output_text.done twice for one part");
    part.done = typeof d.text === "string" ? d.text : "";
    if (part.done !== part.deltas)
      add("events.deltas", i, "the deltas must concatenate to the done text", part.deltas, part.done);
  },

  "response.content_part.done": (walk, d, i) => {
    const { add } = walk;
    const part = addedPart(walk, d, i, "response.content_part.done");
    if (!part) return;
    if (part.done === undefined) add("events.order", i, "response.content_part.done before response.output_text.done");
    part.partDone = d.part;
    const text = received<Schemas["OutputTextPart"]>(d.part)?.text;
    if (part.done !== undefined && text !== part.done)
      add("events.deltas", i, "the done part's text must equal the done text", part.done, text);
  },

  "response.function_call_arguments.delta": (walk, d, i) => {
    const open = functionCall(walk, d, i, "response.function_call_arguments.delta");
    if (!open) return;
    if (open.argsDone !== undefined)
      walk.add("events.order", i, "an arguments delta after function_call_arguments.done");
    if (typeof d.delta === "string") open.args += d.delta;
  },

  "response.function_call_arguments.done": (walk, d, i) => {
    const open = functionCall(walk, d, i, "response.function_call_arguments.done");
    if (!open) return;
    if (open.argsDone !== undefined) walk.add("events.order", i, "function_call_arguments.done twice");
    open.argsDone = typeof d.arguments === "string" ? d.arguments : "";
    if (open.argsDone !== open.args)
      walk.add(
        "events.deltas",
        i,
        "the argument deltas must concatenate to the done arguments",
        open.args,
        open.argsDone,
      );
  },

  "response.output_item.done": (walk, d, i) => {
    const { add, open } = walk;
    if (!open) return add("events.order", i, "output_item.done without output_item.added");
    const item: Item = received<Schemas["OutputItem"]>(d.item) ?? {};
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
    // `incomplete` marks the item the output ceiling cut; the final response shows whether the
    // answer was cut (checkOutputItemStatuses), since this event comes before it.
    if (item.status !== "completed" && item.status !== "incomplete")
      add(
        "events.order",
        i,
        "a done item has status completed (or incomplete, when the ceiling cut it)",
        "completed",
        item.status,
      );
    if (open.type === "message") checkDoneMessage(add, open, item, i);
    else if (open.type === "function_call") checkDoneFunctionCall(add, open, item, i);
    walk.doneItems.push(item);
    walk.open = undefined;
  },

  "response.completed": (walk, d, i) => {
    const { add, created, open } = walk;
    walk.sawCompleted = true;
    if (open) add("events.order", i, `response.completed while item ${open.index} is still open`);
    if (walk.phase === "created" && !walk.sawInProgress)
      add("events.order", i, "response.in_progress must follow response.created (decided extra event)");
    const r = received<Schemas["ResponseObject"]>(d.response) ?? {};
    walk.problems.push(...checkResponseObject(r, `events[${i}].data.response`, "events.completed-usage", true));
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
    checkCompletedOutput(add, walk.doneItems, Array.isArray(r.output) ? r.output : [], i);
    walk.phase = "ended";
  },
};

/** The open message item and the content index an event of its text names; undefined when no item is open. */
function messagePart(
  walk: ResponsesWalk,
  d: ReceivedEvent<ResponseEvent, "response.content_part.added" | "response.content_part.done">,
  i: number,
  name: string,
): { open: OpenItem; c: number } | undefined {
  const { add, open } = walk;
  if (!open) {
    add("events.order", i, `${name} outside an open output item`);
    return undefined;
  }
  checkItemRef(add, open, d, i, name);
  if (open.type !== "message") add("events.order", i, `${name} belongs to a message item, not ${String(open.type)}`);
  return { open, c: indexOf(d.content_index) ?? -1 };
}

/** The part a text event is about; one it names before content_part.added is opened here, with a problem. */
function addedPart(
  walk: ResponsesWalk,
  d: ReceivedEvent<
    ResponseEvent,
    "response.output_text.delta" | "response.output_text.done" | "response.content_part.done"
  >,
  i: number,
  name: string,
): OpenPart | undefined {
  const at = messagePart(walk, d, i, name);
  if (!at) return undefined;
  const { open, c } = at;
  let part = open.parts.get(c);
  if (!part) {
    walk.add(
      "events.order",
      i,
      `${name} before response.content_part.added for content_index ${c} (decided extra event)`,
    );
    part = { deltas: "", opened: false };
    open.parts.set(c, part);
  }
  return part;
}

/** The open item a function-call arguments event is about; undefined when no item is open. */
function functionCall(
  walk: ResponsesWalk,
  d: ReceivedEvent<ResponseEvent, "response.function_call_arguments.delta" | "response.function_call_arguments.done">,
  i: number,
  name: string,
): OpenItem | undefined {
  const { add, open } = walk;
  if (!open) {
    add("events.order", i, `${name} outside an open output item`);
    return undefined;
  }
  checkItemRef(add, open, d, i, name);
  if (open.type !== "function_call")
    add("events.order", i, `${name} belongs to a function_call item, not ${String(open.type)}`);
  return open;
}

/** An event inside an item names that item: its output_index, and its id when it carries one. */
function checkItemRef(
  add: AddProblem,
  open: OpenItem,
  d: { readonly output_index?: unknown; readonly item_id?: unknown },
  i: number,
  name: string,
): void {
  if (d.output_index !== open.index)
    add("events.order", i, `${name} must carry the open item's output_index`, open.index, d.output_index);
  if (d.item_id !== undefined && d.item_id !== open.id)
    add("events.item-ids", i, `${name} names another item than the open one`, open.id, d.item_id);
}

/** A done message holds each streamed part, done, with the streamed text. */
function checkDoneMessage(add: AddProblem, open: OpenItem, item: Item, i: number): void {
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
      add("events.deltas", i, `the done item's content[${c}].text must equal the streamed text`, part.done, text);
  }
}

/** A done function call has the streamed arguments, and the call id and name it was added with. */
function checkDoneFunctionCall(add: AddProblem, open: OpenItem, item: Item, i: number): void {
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
  for (const k of ["call_id", "name"] as const)
    if (open.added[k] !== undefined && item[k] !== open.added[k])
      add(
        "events.item-ids",
        i,
        `the function call's ${k} must not change between added and done`,
        open.added[k],
        item[k],
      );
}

/** response.completed lists every streamed item, each equal to its output_item.done. */
function checkCompletedOutput(add: AddProblem, doneItems: Item[], output: unknown[], i: number): void {
  if (output.length !== doneItems.length)
    add("events.item-ids", i, "response.completed must list every streamed item", doneItems.length, output.length);
  doneItems.forEach((item, k) => {
    if (!deepEqual(output[k], item))
      add("events.item-ids", i, `response.output[${k}] must equal the item of its output_item.done`, item, output[k]);
  });
}
