/**
 * `patternProperties`: properties whose name matches a pattern must match a schema. In an
 * open object a new pattern constrains values that were free (narrowed); in a closed one
 * (`additionalProperties: false`) it admits names that were rejected (widened).
 */
import type { Change, Effect } from "../../model.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";
import { under } from "./subschema.ts";

const rules = defineDirectionalRules({
  keyword: "pattern-property",
  verbs: { narrowed: "narrowed", widened: "widened" },
  what: {
    narrowed: "a pattern property was added to an open object (or removed from a closed one)",
    widened: "a pattern property was removed from an open object (or added to a closed one)",
  },
});

export const patternPropertiesRule: SchemaRuleSet = {
  rules: allOf(rules),
  check(base, head, ctx) {
    const before = base.patternProperties ?? {};
    const after = head.patternProperties ?? {};
    const changes: Change[] = [];
    const closed = head.openness === "closed" && base.openness === "closed";
    for (const pattern of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (pattern in before && pattern in after) {
        changes.push(...under(`[/${pattern}/]`, ctx.compare?.(before[pattern], after[pattern]) ?? []));
        continue;
      }
      const added = pattern in after;
      const effect: Effect = added !== closed ? "narrowed" : "widened";
      changes.push(
        schemaChange(rules[ctx.direction][effect]!, `pattern property /${pattern}/ ${added ? "added" : "removed"}`),
      );
    }
    return changes;
  },
};
