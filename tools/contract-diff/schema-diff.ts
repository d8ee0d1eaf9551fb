/**
 * Compares two schemas structurally: follows `$ref`s on both sides (so a renamed model
 * with the same shape compares equal), runs every schema rule at each place, and descends
 * into properties, array items, map values and matched union variants.
 *
 * Results are relative to the schema compared (paths start there) and are memoized per
 * pair of component schemas, so a model used by twenty operations is compared once.
 */
import type { Change, Declared, Direction } from "./model.ts";
import type { Doc, Node } from "./openapi.ts";
import { normalize, resolveSchema, type NormalSchema, type ResolvedSchema } from "./schema.ts";
import type { SchemaCheckContext, SchemaRuleSet } from "./rules/schema/check.ts";
import {
  maximumRule,
  maxItemsRule,
  maxLengthRule,
  maxPropertiesRule,
  minimumRule,
  minItemsRule,
  minLengthRule,
  minPropertiesRule,
} from "./rules/schema/bounds.ts";
import { accessRule, inDirection } from "./rules/schema/access.ts";
import { conditionalRule } from "./rules/schema/conditional.ts";
import { constRule } from "./rules/schema/const.ts";
import { containsRule } from "./rules/schema/contains.ts";
import { defaultRule } from "./rules/schema/default.ts";
import { dependentRule } from "./rules/schema/dependent.ts";
import { notRule } from "./rules/schema/not.ts";
import { patternPropertiesRule } from "./rules/schema/pattern-properties.ts";
import { prefixItemsRule } from "./rules/schema/prefix-items.ts";
import { propertyNamesRule } from "./rules/schema/property-names.ts";
import { enumRuleSet } from "./rules/schema/enum.ts";
import { formatRule } from "./rules/schema/format.ts";
import { multipleOfRule } from "./rules/schema/multiple-of.ts";
import { checkNullable } from "./rules/schema/nullable.ts";
import { oneOfOverlapChanges } from "./rules/schema/one-of-overlap.ts";
import { opennessRule } from "./rules/schema/openness.ts";
import { patternRule } from "./rules/schema/pattern.ts";
import { propertiesRule } from "./rules/schema/properties.ts";
import { typeRule, typesDisjoint } from "./rules/schema/type.ts";
import { uniqueItemsRule } from "./rules/schema/unique-items.ts";
import { compareWireText } from "./rules/schema/wire-text.ts";
import { describeVariant, matchVariants, variantChanges } from "./rules/schema/variants.ts";

/** The rules run at every pair of schemas (nullability and variants are handled by the walk itself). */
export const SCHEMA_RULE_SETS: readonly SchemaRuleSet[] = [
  typeRule,
  formatRule,
  enumRuleSet,
  maxLengthRule,
  minLengthRule,
  maximumRule,
  minimumRule,
  maxItemsRule,
  minItemsRule,
  maxPropertiesRule,
  minPropertiesRule,
  multipleOfRule,
  uniqueItemsRule,
  patternRule,
  defaultRule,
  propertiesRule,
  opennessRule,
  accessRule,
  constRule,
  containsRule,
  prefixItemsRule,
  dependentRule,
  conditionalRule,
  propertyNamesRule,
  patternPropertiesRule,
  notRule,
];

export interface SchemaDiffContext extends SchemaCheckContext {
  base: Doc;
  head: Doc;
  memo: WeakMap<Node, WeakMap<Node, Change[]>>;
  stack: [Node, Node][];
}

export function schemaDiffContext(
  base: Doc,
  head: Doc,
  direction: Direction,
  errorCodes: ReadonlySet<string>,
  flags: { wireText?: boolean } = {},
): SchemaDiffContext {
  const ctx: SchemaDiffContext = { base, head, direction, errorCodes, memo: new WeakMap(), stack: [], ...flags };
  ctx.compare = (b, h) => diffSchemas(b, h, ctx);
  return ctx;
}

// Deeper than any real contract; a safety net against pathological recursion.
const MAX_DEPTH = 64;

export function diffSchemas(rawBase: unknown, rawHead: unknown, ctx: SchemaDiffContext): Change[] {
  const base = resolveSchema(ctx.base, rawBase);
  const head = resolveSchema(ctx.head, rawHead);
  return [...checkNullable(base.nullable, head.nullable, ctx), ...diffResolved(base, head, ctx)];
}

function diffResolved(base: ResolvedSchema, head: ResolvedSchema, ctx: SchemaDiffContext): Change[] {
  // A recursive schema met again while comparing itself: its changes are already being reported.
  if (ctx.stack.some(([b, h]) => b === base.identity && h === head.identity) || ctx.stack.length > MAX_DEPTH) return [];
  const memoable = base.exact && head.exact;
  const cached = memoable ? ctx.memo.get(base.identity)?.get(head.identity) : undefined;
  if (cached !== undefined) return cached;
  ctx.stack.push([base.identity, head.identity]);
  try {
    const changes = declareIn(compareResolved(base, head, ctx), base.ref, head.ref);
    if (memoable) {
      let inner = ctx.memo.get(base.identity);
      if (inner === undefined) ctx.memo.set(base.identity, (inner = new WeakMap()));
      inner.set(head.identity, changes);
    }
    return changes;
  } finally {
    ctx.stack.pop();
  }
}

function compareResolved(base: ResolvedSchema, head: ResolvedSchema, ctx: SchemaDiffContext): Change[] {
  const b = inDirection(ctx.base, normalize(ctx.base, base.schema), ctx.direction);
  const h = inDirection(ctx.head, normalize(ctx.head, head.schema), ctx.direction);
  if (b.variants !== undefined || h.variants !== undefined) return compareUnions(base, b, head, h, ctx);
  if (ctx.wireText) {
    const text = compareWireText(b, h);
    if (text !== undefined) return text;
  }
  // string → integer is one change; its lost maxLength or new minimum would only be noise.
  if (typesDisjoint(b.types, h.types)) return typeRule.check(b, h, ctx);
  const changes = SCHEMA_RULE_SETS.flatMap((set) => set.check(b, h, ctx));
  for (const [name, property] of b.properties) {
    if (h.properties.has(name)) changes.push(...under(name, diffSchemas(property, h.properties.get(name), ctx)));
  }
  if (b.items !== undefined && h.items !== undefined) changes.push(...under("[]", diffSchemas(b.items, h.items, ctx)));
  if (b.openness === "map" && h.openness === "map")
    changes.push(...under("*", diffSchemas(b.additional, h.additional, ctx)));
  return changes;
}

/** A union on either side: a plain schema on the other side counts as a one-variant union. */
function compareUnions(
  base: ResolvedSchema,
  b: NormalSchema,
  head: ResolvedSchema,
  h: NormalSchema,
  ctx: SchemaDiffContext,
): Change[] {
  const baseVariants = (b.variants ?? [base.schema]).map((raw) => describeVariant(ctx.base, raw));
  const headVariants = (h.variants ?? [head.schema]).map((raw) => describeVariant(ctx.head, raw));
  const match = matchVariants(baseVariants, headVariants);
  const changes = variantChanges(match, ctx);
  if (ctx.direction === "request")
    changes.push(
      ...oneOfOverlapChanges(
        { variants: baseVariants, exclusive: b.exclusive },
        { variants: headVariants, exclusive: h.exclusive },
      ),
    );
  for (const [bv, hv] of match.pairs) {
    const label = hv.label === bv.label ? hv.label : `${bv.label}→${hv.label}`;
    const nested = diffSchemas(bv.raw, hv.raw, ctx);
    changes.push(...(b.variants && h.variants ? under(`<${label}>`, nested) : nested));
  }
  return changes;
}

/** Prefixes the paths of changes found one level down. */
function under(segment: string, changes: Change[]): Change[] {
  return changes.map((c) => ({ ...c, path: [segment, ...c.path] }));
}

/** The innermost named schema a change sits in is where it is declared. */
function declareIn(changes: Change[], baseRef: string | undefined, headRef: string | undefined): Change[] {
  if (baseRef === undefined && headRef === undefined) return changes;
  return changes.map((c) => {
    if (c.declared !== undefined) return c;
    const declared: Declared = {};
    if (baseRef !== undefined) declared.base = [baseRef, ...c.path];
    if (headRef !== undefined) declared.head = [headRef, ...c.path];
    return { ...c, declared };
  });
}
