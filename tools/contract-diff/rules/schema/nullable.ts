/** `null` accepted or not (`anyOf [X, {type: null}]`, `type: [X, "null"]`). */
import type { Change } from "../../model.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaCheckContext } from "./check.ts";

const rules = defineDirectionalRules({
  keyword: "nullable",
  verbs: { narrowed: "removed", widened: "added" },
  what: { narrowed: "`null` is no longer accepted", widened: "`null` is now accepted" },
});

export const nullableRules = allOf(rules);

/**
 * Nullability belongs to the place that refers to a schema, not to the schema, so the
 * walker calls this outside the per-schema comparison.
 */
export function checkNullable(base: boolean, head: boolean, ctx: SchemaCheckContext): Change[] {
  if (base === head) return [];
  const rule = rules[ctx.direction][head ? "widened" : "narrowed"]!;
  return [schemaChange(rule, head ? "now nullable" : "no longer nullable", base, head)];
}
