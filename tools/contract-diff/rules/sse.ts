/**
 * Server-sent events, from the OpenAPI 3.2 `itemSchema` of a `text/event-stream` body:
 * each `oneOf` branch is one event, named by `event.const` (no name: the default
 * `message`), whose JSON payload is `data.contentSchema`. Events are matched by name
 * (and by a fixed `data`, such as the `[DONE]` sentinel); payloads are compared as
 * response schemas, so a removed event field is reported like a removed response field.
 */
import { defineRule, type Change } from "../model.ts";
import { isObject, type Doc, type Node } from "../openapi.ts";
import { normalize, resolveSchema } from "../schema.ts";
import { diffSchemas } from "../schema-diff.ts";
import { inPart, type DiffContext } from "./context.ts";

export const eventRemoved = defineRule({
  id: "sse-event-removed",
  level: "ERR",
  breaks: "both",
  description:
    "A server-sent event was removed; clients waiting for it never get it, and implementations built on the base still send it.",
});
export const eventAdded = defineRule({
  id: "sse-event-added",
  level: "WARN",
  breaks: "clients",
  description:
    "A new server-sent event; clients that validate each event, or treat unknown events as errors, reject it.",
});

export const eventTypeChanged = defineRule({
  id: "sse-event-type-changed",
  level: "ERR",
  breaks: "both",
  description:
    "The `type` constant of a server-sent event's payload changed under the same event name; clients switch on it and no longer recognise the event, and implementations built on the base still send the old value.",
});

export const sseRules = [eventRemoved, eventAdded, eventTypeChanged];

/** The payload's enum changes the type rule reports instead (one rename, not a removal plus an addition). */
const TYPE_VALUE_RULES = new Set([
  "response-enum-value-removed",
  "response-enum-value-added",
  "response-const-changed",
]);

interface StreamEvent {
  key: string;
  data: Node;
  /** The payload's component name, for the contract link. */
  ref?: string;
}

/** The events of an item schema, keyed by name (plus a fixed data value when names repeat). */
export function eventsOf(doc: Doc, itemSchema: unknown): Map<string, StreamEvent> {
  const item = resolveSchema(doc, itemSchema).schema;
  const branches: unknown[] = Array.isArray(item.oneOf) ? item.oneOf : Array.isArray(item.anyOf) ? item.anyOf : [item];
  const result = new Map<string, StreamEvent>();
  for (const raw of branches) {
    const branch = resolveSchema(doc, raw).schema;
    const properties = isObject(branch.properties) ? branch.properties : {};
    const eventValues = normalize(doc, resolveSchema(doc, properties.event).schema).values;
    const name = typeof eventValues?.[0] === "string" ? eventValues[0] : "message";
    const data = resolveSchema(doc, properties.data).schema;
    let key = "const" in data ? `${name} ${String(data.const)}` : name;
    for (let n = 2; result.has(key); n++) key = `${name} #${n}`;
    const ref = data.contentSchema !== undefined ? resolveSchema(doc, data.contentSchema).ref : undefined;
    result.set(key, { key, data, ...(ref ? { ref } : {}) });
  }
  return result;
}

/** The fixed `type` of an event's JSON payload (`response.completed`), when it has exactly one. */
function payloadType(doc: Doc, data: Node): string | undefined {
  if (data.contentSchema === undefined) return undefined;
  const payload = resolveSchema(doc, data.contentSchema).schema;
  const type = isObject(payload.properties) ? payload.properties.type : undefined;
  if (type === undefined) return undefined;
  const values = normalize(doc, resolveSchema(doc, type).schema).values;
  return values?.length === 1 && typeof values[0] === "string" ? values[0] : undefined;
}

export function checkEventStream(base: Node, head: Node, mediaPart: string, ctx: DiffContext): Change[] {
  const before = eventsOf(ctx.base, base.itemSchema);
  const after = eventsOf(ctx.head, head.itemSchema);
  const changes: Change[] = [];
  for (const [key, event] of before) {
    const part = `${mediaPart} event ${key}`;
    const other = after.get(key);
    if (other === undefined) {
      changes.push({
        rule: eventRemoved,
        message: `event \`${key}\` removed`,
        part,
        path: [],
        ...(event.ref ? { declared: { base: [event.ref] } } : {}),
      });
      continue;
    }
    if (event.data.contentSchema === undefined && other.data.contentSchema === undefined) continue;
    let payload = diffSchemas(event.data.contentSchema, other.data.contentSchema, ctx.response);
    const [from, to] = [payloadType(ctx.base, event.data), payloadType(ctx.head, other.data)];
    if (from !== undefined && to !== undefined && from !== to) {
      payload = payload.filter(
        (c) => !(TYPE_VALUE_RULES.has(c.rule.id) && c.path.length === 1 && c.path[0] === "type"),
      );
      const declared = {
        ...(event.ref ? { base: [event.ref, "type"] } : {}),
        ...(other.ref ? { head: [other.ref, "type"] } : {}),
      };
      changes.push({
        rule: eventTypeChanged,
        message: `payload type \`${from}\` → \`${to}\``,
        before: from,
        after: to,
        part,
        path: ["type"],
        declared,
      });
    }
    changes.push(...inPart(part, payload));
  }
  for (const [key, event] of after) {
    if (!before.has(key))
      changes.push({
        rule: eventAdded,
        message: `event \`${key}\` added`,
        part: `${mediaPart} event ${key}`,
        path: [],
        ...(event.ref ? { declared: { head: [event.ref] } } : {}),
      });
  }
  return changes;
}
