/** `uniqueItems`: requiring distinct items accepts fewer arrays. */
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = defineDirectionalRules({
  keyword: "unique-items",
  verbs: { narrowed: "added", widened: "removed" },
  what: { narrowed: "items must now be unique", widened: "items no longer need to be unique" },
});

export const uniqueItemsRule: SchemaRuleSet = {
  rules: allOf(rules),
  check(base, head, ctx) {
    if (base.uniqueItems === head.uniqueItems) return [];
    const effect = head.uniqueItems ? "narrowed" : "widened";
    return [
      schemaChange(
        rules[ctx.direction][effect]!,
        `uniqueItems ${base.uniqueItems} → ${head.uniqueItems}`,
        base.uniqueItems,
        head.uniqueItems,
      ),
    ];
  },
};
