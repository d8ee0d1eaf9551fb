/** `format`: date-time, int32, … Within a family a larger format accepts the smaller one. */
import type { Effect } from "../../model.ts";
import { show } from "../../openapi.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = defineDirectionalRules({
  keyword: "format",
  verbs: { narrowed: "narrowed", widened: "widened", changed: "changed" },
  what: {
    narrowed: "a format was set or made smaller (int64 → int32)",
    widened: "a format was removed or made larger (int32 → int64)",
    changed: "the format was replaced (date-time → uri)",
  },
});

// Ordered from the narrowest: a later format accepts every value of an earlier one.
const FAMILIES = [
  ["int8", "int16", "int32", "int64"],
  ["uint8", "uint16", "uint32", "uint64"],
  ["float", "double"],
];

export function compareFormats(base: string | undefined, head: string | undefined): Effect | undefined {
  if (base === head) return undefined;
  if (base === undefined) return "narrowed";
  if (head === undefined) return "widened";
  for (const family of FAMILIES) {
    const b = family.indexOf(base);
    const h = family.indexOf(head);
    if (b >= 0 && h >= 0) return h > b ? "widened" : "narrowed";
  }
  return "changed";
}

export const formatRule: SchemaRuleSet = {
  rules: allOf(rules),
  check(base, head, ctx) {
    const effect = compareFormats(base.format, head.format);
    if (effect === undefined) return [];
    return [
      schemaChange(
        rules[ctx.direction][effect]!,
        `format ${show(base.format)} → ${show(head.format)}`,
        base.format ?? null,
        head.format ?? null,
      ),
    ];
  },
};
