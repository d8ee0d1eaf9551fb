/**
 * `not`: values matching a schema are refused. Adding one narrows, removing one widens.
 * A changed `not` schema works backwards (a narrower `not` accepts more), so any change of
 * it is reported as changed rather than walked.
 */
import { canonical } from "../../openapi.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = defineDirectionalRules({
  keyword: "not",
  verbs: { narrowed: "added", widened: "removed", changed: "changed" },
  what: {
    narrowed: "values matching a `not` schema are now refused",
    widened: "the `not` schema was removed",
    changed: "the `not` schema changed",
  },
});

export const notRule: SchemaRuleSet = {
  rules: allOf(rules),
  check(base, head, ctx) {
    if (base.not === undefined && head.not === undefined) return [];
    if (base.not === undefined) return [schemaChange(rules[ctx.direction].narrowed!, "`not` added")];
    if (head.not === undefined) return [schemaChange(rules[ctx.direction].widened!, "`not` removed")];
    if (canonical(base.not) === canonical(head.not)) return [];
    return [schemaChange(rules[ctx.direction].changed!, "`not` schema changed")];
  },
};
