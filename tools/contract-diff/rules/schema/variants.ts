/**
 * Union variants (`anyOf`/`oneOf` branches that are not plain values). Variants are
 * matched by meaning, never by position or name: first by a discriminating property
 * (one with fixed values, such as `type` or `role`, whose values overlap), then by
 * component name, by identical shape, and finally by type and shared property names.
 * Unmatched variants are added or removed.
 */
import type { Change } from "../../model.ts";
import { canonical, type Doc } from "../../openapi.ts";
import { normalize, resolveSchema, type NormalSchema } from "../../schema.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaCheckContext } from "./check.ts";

const rules = defineDirectionalRules({
  keyword: "variant",
  verbs: { narrowed: "removed", widened: "added" },
  what: { narrowed: "a union variant was removed", widened: "a union variant was added" },
});

export const variantRules = allOf(rules);

export interface Variant {
  raw: unknown;
  ref?: string;
  normal: NormalSchema;
  /** Properties with fixed values (discriminators), e.g. `type → {message}`. */
  tags: Map<string, Set<string>>;
  shape: string;
  /** How the variant is shown, e.g. `type=message`, `ChatUserMessage`, `string`. */
  label: string;
}

export function describeVariant(doc: Doc, raw: unknown): Variant {
  const resolved = resolveSchema(doc, raw);
  const normal = normalize(doc, resolved.schema);
  const tags = new Map<string, Set<string>>();
  for (const [name, property] of normal.properties) {
    const values = normalize(doc, resolveSchema(doc, property).schema).values;
    if (values !== undefined && values.length > 0) tags.set(name, new Set(values.map((v) => String(v))));
  }
  return {
    raw,
    ref: resolved.ref,
    normal,
    tags,
    shape: canonical(resolved.schema),
    label: labelOf(tags, resolved.ref, normal),
  };
}

const PREFERRED_TAGS = ["type", "event", "object", "role", "kind"];

function labelOf(tags: Map<string, Set<string>>, ref: string | undefined, normal: NormalSchema): string {
  const tag = PREFERRED_TAGS.find((t) => tags.has(t)) ?? [...tags.keys()][0];
  if (tag !== undefined) return `${tag}=${[...tags.get(tag)!].join("|")}`;
  if (ref !== undefined) return ref;
  return normal.types === undefined ? "any" : [...normal.types].join("|");
}

/** How alike two variants are; negative when they cannot be the same variant. */
export function matchScore(base: Variant, head: Variant): number {
  let discriminated = false;
  for (const [name, values] of base.tags) {
    const other = head.tags.get(name);
    if (other === undefined) continue;
    const overlap = [...values].filter((v) => other.has(v)).length;
    if (overlap === 0) return -1;
    discriminated = true;
  }
  if (discriminated) return 1000;
  if (base.ref !== undefined && base.ref === head.ref) return 500;
  if (base.shape === head.shape) return 400;
  const bt = base.normal.types;
  const ht = head.normal.types;
  const typesMeet =
    bt === undefined ||
    ht === undefined ||
    [...bt].some((t) => ht.has(t) || (t === "integer" && ht.has("number")) || (t === "number" && ht.has("integer")));
  if (!typesMeet) return -1;
  const names = new Set([...base.normal.properties.keys(), ...head.normal.properties.keys()]);
  const shared = [...base.normal.properties.keys()].filter((k) => head.normal.properties.has(k)).length;
  return 100 + (names.size === 0 ? 100 : (100 * shared) / names.size);
}

export interface VariantMatch {
  pairs: [Variant, Variant][];
  removed: Variant[];
  added: Variant[];
}

/** Greedy best-first matching (stable: ties keep document order). */
export function matchVariants(base: Variant[], head: Variant[]): VariantMatch {
  const candidates: { b: number; h: number; score: number }[] = [];
  base.forEach((bv, b) =>
    head.forEach((hv, h) => {
      const score = matchScore(bv, hv);
      if (score >= 0) candidates.push({ b, h, score });
    }),
  );
  candidates.sort((x, y) => y.score - x.score || x.b - y.b || x.h - y.h);
  const usedBase = new Set<number>();
  const usedHead = new Set<number>();
  const pairs: [Variant, Variant][] = [];
  for (const { b, h } of candidates) {
    if (usedBase.has(b) || usedHead.has(h)) continue;
    usedBase.add(b);
    usedHead.add(h);
    pairs.push([base[b]!, head[h]!]);
  }
  return {
    pairs,
    removed: base.filter((_, i) => !usedBase.has(i)),
    added: head.filter((_, i) => !usedHead.has(i)),
  };
}

export function variantChanges(match: VariantMatch, ctx: SchemaCheckContext): Change[] {
  return [
    ...match.removed.map((v) =>
      schemaChange(rules[ctx.direction].narrowed!, `variant \`${v.label}\` removed`, v.label, undefined),
    ),
    ...match.added.map((v) =>
      schemaChange(rules[ctx.direction].widened!, `variant \`${v.label}\` added`, undefined, v.label),
    ),
  ];
}
