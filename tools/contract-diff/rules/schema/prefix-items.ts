/**
 * `prefixItems` (a tuple: one schema per position) and the end of a tuple
 * (`items: false` or `unevaluatedItems: false`). A position added constrains one more
 * item (narrowed); one removed frees it (widened); common positions are compared.
 */
import type { Change } from "../../model.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";
import { under } from "./subschema.ts";

const rules = defineDirectionalRules({
  keyword: "prefix-items",
  verbs: { narrowed: "added", widened: "removed" },
  what: { narrowed: "a tuple position was constrained", widened: "a tuple position was freed" },
});
const closedRules = defineDirectionalRules({
  keyword: "items",
  verbs: { narrowed: "closed", widened: "opened" },
  what: {
    narrowed: "no item is allowed beyond the tuple (items or unevaluatedItems false)",
    widened: "items beyond the tuple are allowed again",
  },
});

export const prefixItemsRule: SchemaRuleSet = {
  rules: [...allOf(rules), ...allOf(closedRules)],
  check(base, head, ctx) {
    const changes: Change[] = [];
    const before = base.prefixItems ?? [];
    const after = head.prefixItems ?? [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      if (i >= before.length)
        changes.push(schemaChange(rules[ctx.direction].narrowed!, `tuple position ${i} constrained`));
      else if (i >= after.length)
        changes.push(schemaChange(rules[ctx.direction].widened!, `tuple position ${i} freed`));
      else changes.push(...under(`[${i}]`, ctx.compare?.(before[i], after[i]) ?? []));
    }
    if (base.itemsClosed !== head.itemsClosed) {
      const effect = head.itemsClosed ? "narrowed" : "widened";
      changes.push(
        schemaChange(
          closedRules[ctx.direction][effect]!,
          head.itemsClosed ? "items beyond the tuple now rejected" : "items beyond the tuple now allowed",
        ),
      );
    }
    return changes;
  },
};
