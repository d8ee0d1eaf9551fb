/** `type`: which kinds of JSON value are accepted (an integer is also a number). */
import type { Effect } from "../../model.ts";
import { acceptsType, type JsonType } from "../../schema.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = defineDirectionalRules({
  keyword: "type",
  verbs: { narrowed: "narrowed", widened: "widened", changed: "changed" },
  what: {
    narrowed: "the type accepts fewer kinds of value (number → integer, any → string)",
    widened: "the type accepts more kinds of value (integer → number, string → any)",
    changed: "the type was replaced (string → integer)",
  },
});

type Types = Set<JsonType> | undefined;

function includes(outer: Types, inner: Types): boolean {
  if (outer === undefined) return true;
  if (inner === undefined) return false;
  return [...inner].every((t) => acceptsType(outer, t));
}

export function compareTypes(base: Types, head: Types): Effect | undefined {
  const headCoversBase = includes(head, base);
  const baseCoversHead = includes(base, head);
  if (headCoversBase && baseCoversHead) return undefined;
  if (headCoversBase) return "widened";
  if (baseCoversHead) return "narrowed";
  return "changed";
}

/** No value is accepted by both: comparing properties or items would only add noise. */
export function typesDisjoint(base: Types, head: Types): boolean {
  if (base === undefined || head === undefined) return false;
  const overlap = (t: JsonType, u: JsonType) =>
    t === u || (t === "integer" && u === "number") || (t === "number" && u === "integer");
  return ![...base].some((t) => [...head].some((u) => overlap(t, u)));
}

export function showTypes(types: Types): string {
  return types === undefined ? "any" : [...types].sort().join(" | ");
}

export const typeRule: SchemaRuleSet = {
  rules: allOf(rules),
  check(base, head, ctx) {
    // A union's variants are compared one by one instead (see variants.ts).
    if (base.variants !== undefined || head.variants !== undefined) return [];
    const effect = compareTypes(base.types, head.types);
    if (effect === undefined) return [];
    const before = showTypes(base.types);
    const after = showTypes(head.types);
    return [schemaChange(rules[ctx.direction][effect]!, `type ${before} → ${after}`, before, after)];
  },
};
