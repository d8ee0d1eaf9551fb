/**
 * `prefixItems` (a tuple: one schema per position) and the end of a tuple
 * (`items: false` or `unevaluatedItems: false`). A position added constrains one more
 * item (narrowed); one removed frees it (widened); common positions are compared.
 */
import { defineRule, type Change } from "../../model.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { NormalSchema } from "../../schema.ts";
import type { SchemaRuleSet } from "./check.ts";
import { under } from "./subschema.ts";

const rules = defineDirectionalRules({
  keyword: "prefix-items",
  verbs: { narrowed: "added", widened: "removed" },
  what: { narrowed: "a tuple position was constrained", widened: "a tuple position was freed" },
});
/**
 * Closing a tuple is judged like closing an object (openness.ts): items beyond the
 * declared positions are undeclared, and whether anyone sends them is undecidable: WARN.
 */
const closedRules = {
  request: {
    narrowed: defineRule({
      id: "request-items-closed",
      level: "WARN",
      breaks: "clients",
      description:
        "Request: no item is allowed beyond the tuple any more (items or unevaluatedItems false); clients sending extra items are rejected.",
    }),
    widened: defineRule({
      id: "request-items-opened",
      level: "WARN",
      breaks: "implementations",
      description:
        "Request: items beyond the tuple are allowed again; an implementation built on the base rejects them.",
    }),
  },
  response: {
    widened: defineRule({
      id: "response-items-opened",
      level: "WARN",
      breaks: "clients",
      description: "Response: items beyond the tuple may now appear; clients validating against the base reject them.",
    }),
    narrowed: defineRule({
      id: "response-items-closed",
      level: "WARN",
      breaks: "implementations",
      description: "Response: no item may follow the tuple any more; implementations built on the base may send some.",
    }),
  },
};

const FREE = Symbol("any item");
const CLOSED = Symbol("no item");

/**
 * What item `i` must match: its `prefixItems` schema, else the rest's `items` schema (so
 * `items: {type: number}` → `prefixItems: [{type: number}]` constrains nothing new), else
 * nothing (closed) or anything.
 */
function positionOf(schema: NormalSchema, i: number): unknown {
  const prefix = schema.prefixItems ?? [];
  if (i < prefix.length) return prefix[i];
  if (schema.itemsClosed) return CLOSED;
  return schema.items ?? FREE;
}

export const prefixItemsRule: SchemaRuleSet = {
  rules: [...allOf(rules), ...Object.values(closedRules.request), ...Object.values(closedRules.response)],
  check(base, head, ctx) {
    const changes: Change[] = [];
    const before = base.prefixItems ?? [];
    const after = head.prefixItems ?? [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      const [b, h] = [positionOf(base, i), positionOf(head, i)];
      if (b === h) continue;
      if (b === FREE || h === CLOSED)
        changes.push(schemaChange(rules[ctx.direction].narrowed!, `tuple position ${i} constrained`));
      else if (h === FREE || b === CLOSED)
        changes.push(schemaChange(rules[ctx.direction].widened!, `tuple position ${i} freed`));
      else changes.push(...under(`[${i}]`, ctx.compare?.(b, h) ?? []));
    }
    if (base.itemsClosed !== head.itemsClosed) {
      const effect = head.itemsClosed ? "narrowed" : "widened";
      changes.push(
        schemaChange(
          closedRules[ctx.direction][effect],
          head.itemsClosed ? "items beyond the tuple now rejected" : "items beyond the tuple now allowed",
        ),
      );
    }
    return changes;
  },
};
