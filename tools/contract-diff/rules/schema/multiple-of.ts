/** `multipleOf`: a multiple of the old step accepts fewer values. */
import type { Effect } from "../../model.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = defineDirectionalRules({
  keyword: "multiple-of",
  verbs: { narrowed: "narrowed", widened: "widened", changed: "changed" },
  what: {
    narrowed: "multipleOf set, or changed to a multiple of the old step",
    widened: "multipleOf removed, or changed to a divisor of the old step",
    changed: "multipleOf changed to an unrelated step",
  },
});

function divides(divisor: number, value: number): boolean {
  const quotient = value / divisor;
  return Math.abs(quotient - Math.round(quotient)) < 1e-9;
}

export function compareMultipleOf(base: number | undefined, head: number | undefined): Effect | undefined {
  if (base === head) return undefined;
  if (base === undefined) return "narrowed";
  if (head === undefined) return "widened";
  if (divides(base, head)) return "narrowed";
  if (divides(head, base)) return "widened";
  return "changed";
}

export const multipleOfRule: SchemaRuleSet = {
  rules: allOf(rules),
  check(base, head, ctx) {
    const effect = compareMultipleOf(base.multipleOf, head.multipleOf);
    if (effect === undefined) return [];
    return [
      schemaChange(
        rules[ctx.direction][effect]!,
        `multipleOf ${base.multipleOf ?? "none"} → ${head.multipleOf ?? "none"}`,
        base.multipleOf ?? null,
        head.multipleOf ?? null,
      ),
    ];
  },
};
