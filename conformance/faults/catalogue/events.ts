/**
 * Faults that break the `events.*` rules of conformance/rules.yaml. The events of a streamed
 * /responses call: order, names, sequence numbers, item ids, deltas, the completed event.
 */
import { randomBytes } from "node:crypto";
import { objectAt, objectsOf, valueAt } from "../json.ts";
import type { Fault, SseEvent } from "../proxy.ts";
import { postResponses, renumber, clone, indexOfEvent, completed } from "./support.ts";

export const eventFaults: Fault[] = [
  {
    id: "sse.delta-without-logprobs",
    areas: ["events"],
    transcripts: ["events/stream-text"],
    rule: "events.deltas",
    description:
      "Every response.output_text.delta event lacks logprobs (as before the Open Responses compatibility fields).",
    match: postResponses,
    onResponse(response) {
      const deltas = objectsOf(
        (response.events ?? []).filter((e) => e.event === "response.output_text.delta").map((e) => e.json),
      );
      if (deltas.length === 0) return;
      for (const delta of deltas) delete delta.logprobs;
      return response;
    },
  },
  {
    id: "sse.output-index-shifted",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.item-ids",
    description: "Every event counts output_index from 1 instead of 0 (consistently).",
    match: postResponses,
    onResponse(response) {
      const indexed = objectsOf((response.events ?? []).map((e) => e.json)).filter(
        (data) => typeof data.output_index === "number",
      );
      if (indexed.length === 0) return;
      for (const data of indexed) data.output_index = Number(data.output_index) + 1;
      return response;
    },
  },
  {
    id: "sse.done-appended",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.no-done",
    description: "A `data: [DONE]` line is appended after response.completed on /responses.",
    match: postResponses,
    onResponse(response) {
      if (!response.events) return;
      response.events.push({ data: "[DONE]" });
      return response;
    },
  },
  {
    id: "sse.completed-missing",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.completed-usage",
    description: "The stream ends after response.output_item.done, with no response.completed.",
    match: postResponses,
    onResponse(response) {
      if (!response.events || !completed(response.events)) return;
      response.events = response.events.filter((e) => e.event !== "response.completed");
      return response;
    },
  },
  {
    id: "sse.event-name-mismatch",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.type-equals-event",
    description:
      "The output_text.done event is sent under the name response.output_text.completed (data.type unchanged).",
    match: postResponses,
    onResponse(response) {
      const event = response.events?.find((e) => e.event === "response.output_text.done");
      if (!event) return;
      event.event = "response.output_text.completed";
      return response;
    },
  },
  {
    id: "sse.sequence-number-repeated",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.sequence",
    description: "The second delta repeats the sequence_number of the event before it.",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const deltas = events.map((e, i) => (e.event === "response.output_text.delta" ? i : -1)).filter((i) => i > 0);
      const at = deltas[1] ?? deltas[0];
      if (at === undefined) return;
      const target = objectAt(events[at]?.json);
      if (!target) return;
      target.sequence_number = valueAt(events[at - 1]?.json, "sequence_number");
      return response;
    },
  },
  {
    id: "sse.item-added-late",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.order",
    description: "response.output_item.added is sent after the first text delta (sequence numbers renumbered).",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const added = indexOfEvent(events, "response.output_item.added");
      const firstDelta = indexOfEvent(events, "response.output_text.delta");
      if (added < 0 || firstDelta < added) return;
      const [item] = events.splice(added, 1);
      events.splice(firstDelta, 0, item as SseEvent);
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.done-events-swapped",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.order",
    description: "response.output_item.done is sent before response.output_text.done (renumbered).",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const text = indexOfEvent(events, "response.output_text.done");
      const item = indexOfEvent(events, "response.output_item.done");
      if (text < 0 || item < text) return;
      const [moved] = events.splice(item, 1);
      events.splice(text, 0, moved as SseEvent);
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.delta-dropped",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.deltas",
    description: "One text delta (not the first) is dropped; sequence numbers renumbered.",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const deltas = events
        .map((e, i) => (e.event === "response.output_text.delta" && valueAt(e.json, "delta") ? i : -1))
        .filter((i) => i >= 0);
      const at = deltas[1] ?? deltas[0];
      if (at === undefined) return;
      events.splice(at, 1);
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.delta-duplicated",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.deltas",
    description: "One text delta is sent twice (a retried write); sequence numbers renumbered.",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const at = events.findIndex((e) => e.event === "response.output_text.delta" && valueAt(e.json, "delta"));
      if (at < 0) return;
      events.splice(at + 1, 0, clone(events[at] as SseEvent));
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.delta-mangled",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.deltas",
    description: "One delta's text is altered (a multi-byte split gone wrong: a replacement character appended).",
    match: postResponses,
    onResponse(response) {
      const event = response.events?.find((e) => e.event === "response.output_text.delta" && valueAt(e.json, "delta"));
      const data = objectAt(event?.json);
      if (!data) return;
      data.delta = `${String(data.delta)}\uFFFD`;
      return response;
    },
  },
  {
    id: "sse.usage-arithmetic",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.completed-usage",
    description: "response.completed's usage has total_tokens = output_tokens (input forgotten).",
    match: postResponses,
    onResponse(response) {
      const usage = response.events ? objectAt(completed(response.events)?.json, "response", "usage") : undefined;
      if (!usage || usage.input_tokens === 0) return;
      usage.total_tokens = usage.output_tokens;
      return response;
    },
  },
  {
    id: "sse.created-not-in-progress",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.created",
    description: "response.created reports status completed.",
    match: postResponses,
    onResponse(response) {
      const created = objectAt(response.events?.find((e) => e.event === "response.created")?.json, "response");
      if (!created) return;
      created.status = "completed";
      return response;
    },
  },
  {
    id: "sse.item-id-changes",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.item-ids",
    description: "response.output_item.done carries a different item id from response.output_item.added.",
    match: postResponses,
    onResponse(response) {
      const item = objectAt(response.events?.find((e) => e.event === "response.output_item.done")?.json, "item");
      if (!item?.id) return;
      item.id = `msg_${randomBytes(12).toString("hex")}`;
      return response;
    },
  },
  {
    id: "sse.event-after-completed",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.order",
    description: "A stray output_text.done is sent after response.completed (numbered on).",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      const done = events?.find((e) => e.event === "response.output_text.done");
      if (!events || !done || !completed(events)) return;
      events.push(clone(done));
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.usage-differs-from-plain",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "events.completed-usage",
    description: "response.completed counts one output token more than the call produced (the sum still adds up).",
    match: postResponses,
    onResponse(response) {
      const usage = response.events ? objectAt(completed(response.events)?.json, "response", "usage") : undefined;
      if (!usage) return;
      usage.output_tokens = Number(usage.output_tokens) + 1;
      usage.total_tokens = Number(usage.total_tokens) + 1;
      return response;
    },
  },
];
