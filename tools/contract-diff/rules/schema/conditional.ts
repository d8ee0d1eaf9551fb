/**
 * `if` / `then` / `else`: a conditional constraint. Adding one narrows, removing one
 * widens; a changed condition moves values between branches (changed); `then` and `else`
 * on both sides are compared.
 */
import type { Change } from "../../model.ts";
import { canonical } from "../../openapi.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";
import { subschemaChanges } from "./subschema.ts";

const rules = defineDirectionalRules({
  keyword: "conditional",
  verbs: { narrowed: "added", widened: "removed", changed: "changed" },
  what: {
    narrowed: "an if/then/else constraint (or a branch of it) was added",
    widened: "an if/then/else constraint (or a branch of it) was removed",
    changed: "the `if` condition changed, so values move between branches",
  },
});

export const conditionalRule: SchemaRuleSet = {
  rules: allOf(rules),
  check(base, head, ctx) {
    const b = base.conditional;
    const h = head.conditional;
    if (b === undefined && h === undefined) return [];
    if (b === undefined) return [schemaChange(rules[ctx.direction].narrowed!, "if/then/else added")];
    if (h === undefined) return [schemaChange(rules[ctx.direction].widened!, "if/then/else removed")];
    if (canonical(b.if) !== canonical(h.if))
      return [schemaChange(rules[ctx.direction].changed!, "the `if` condition changed", b.if, h.if)];
    const changes: Change[] = [];
    changes.push(...subschemaChanges(rules, "then", b.then, h.then, ctx));
    changes.push(...subschemaChanges(rules, "else", b.else, h.else, ctx));
    return changes;
  },
};
