/**
 * `oneOf` means exactly one branch matches. A request that becomes a `oneOf` whose
 * branches overlap (a value can match two: no required discriminating property with
 * distinct values, no property one branch forbids) refuses every such value, although
 * each branch alone accepts it: wrapping `Pet` in `oneOf: [Pet, Dog]` where a dog is a pet
 * with more optional fields refuses every old body. Reported when the overlap is new.
 */
import { defineRule, type Change } from "../../model.ts";
import { canonical } from "../../openapi.ts";
import { typesDisjoint } from "./type.ts";
import type { Variant } from "./variants.ts";

export const oneOfOverlapRule = defineRule({
  id: "request-one-of-overlapping",
  level: "ERR",
  breaks: "clients",
  description:
    "Request: the schema is now a oneOf whose branches overlap; a value matching two branches is refused, though it was valid.",
});

function valuesDisjoint(a: unknown[] | undefined, b: unknown[] | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  const keys = new Set(a.map(canonical));
  return !b.some((v) => keys.has(canonical(v)));
}

/** Whether some value can match both branches (conservative: true unless they plainly exclude each other). */
export function variantsOverlap(a: Variant, b: Variant): boolean {
  if (typesDisjoint(a.normal.types, b.normal.types)) return false;
  if (valuesDisjoint(a.normal.values, b.normal.values)) return false;
  for (const [name, values] of a.tags) {
    const other = b.tags.get(name);
    const requiredInBoth = a.normal.required.has(name) && b.normal.required.has(name);
    if (other !== undefined && requiredInBoth && ![...values].some((v) => other.has(v))) return false;
  }
  const forbids = (x: Variant, y: Variant) =>
    x.normal.openness === "closed" && [...y.normal.required].some((name) => !x.normal.properties.has(name));
  return !(forbids(a, b) || forbids(b, a));
}

function overlappingPair(variants: Variant[]): [Variant, Variant] | undefined {
  for (let i = 0; i < variants.length; i++)
    for (let j = i + 1; j < variants.length; j++)
      if (variantsOverlap(variants[i]!, variants[j]!)) return [variants[i]!, variants[j]!];
  return undefined;
}

/** `exclusive`: the side is a oneOf. Only requests: a response value matching two branches is the implementation's to avoid. */
export function oneOfOverlapChanges(
  base: { variants: Variant[]; exclusive: boolean },
  head: { variants: Variant[]; exclusive: boolean },
): Change[] {
  if (!head.exclusive || head.variants.length < 2) return [];
  const pair = overlappingPair(head.variants);
  if (pair === undefined) return [];
  if (base.exclusive && overlappingPair(base.variants) !== undefined) return [];
  return [
    {
      rule: oneOfOverlapRule,
      message: `oneOf branches \`${pair[0].label}\` and \`${pair[1].label}\` overlap; a value matching both is refused`,
      path: [],
    },
  ];
}
