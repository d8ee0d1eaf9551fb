/** `pattern`: whether one regular expression accepts a subset of another is undecidable here, so any edit is `changed`. */
import type { Effect } from "../../model.ts";
import { show } from "../../openapi.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = defineDirectionalRules({
  keyword: "pattern",
  verbs: { narrowed: "added", widened: "removed", changed: "changed" },
  what: { narrowed: "a pattern was set", widened: "the pattern was removed", changed: "the pattern was changed" },
});

export function comparePatterns(base: string | undefined, head: string | undefined): Effect | undefined {
  if (base === head) return undefined;
  if (base === undefined) return "narrowed";
  if (head === undefined) return "widened";
  return "changed";
}

export const patternRule: SchemaRuleSet = {
  rules: allOf(rules),
  check(base, head, ctx) {
    const effect = comparePatterns(base.pattern, head.pattern);
    if (effect === undefined) return [];
    return [
      schemaChange(
        rules[ctx.direction][effect]!,
        `pattern ${show(base.pattern)} → ${show(head.pattern)}`,
        base.pattern ?? null,
        head.pattern ?? null,
      ),
    ];
  },
};
