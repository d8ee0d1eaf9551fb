/**
 * Limits: maxLength/minLength, maxItems/minItems, maxProperties/minProperties,
 * maximum/minimum (with their exclusive forms). A limit set where there was none counts
 * as lowered (or raised); one removed counts as raised (or lowered). Both values are
 * always reported.
 */
import type { Change, Effect } from "../../model.ts";
import type { Bound, CountKeyword, NormalSchema } from "../../schema.ts";
import { allOf, defineDirectionalRules, schemaChange, type DirectionalRules } from "../directional.ts";
import type { SchemaCheckContext, SchemaRuleSet } from "./check.ts";

type Side = "upper" | "lower";

function limitRules(keyword: string, name: string, side: Side): DirectionalRules {
  const [narrowVerb, widenVerb] = side === "upper" ? ["decreased", "increased"] : ["increased", "decreased"];
  return defineDirectionalRules({
    keyword,
    verbs: { narrowed: narrowVerb, widened: widenVerb },
    what: {
      narrowed: `${name} ${narrowVerb} or newly set`,
      widened: `${name} ${widenVerb} or removed`,
    },
  });
}

/** Compares two limits of one side; `undefined` is no limit. */
export function compareLimit(base: number | undefined, head: number | undefined, side: Side): Effect | undefined {
  if (base === head) return undefined;
  if (base === undefined) return "narrowed";
  if (head === undefined) return "widened";
  const lowered = head < base;
  return lowered === (side === "upper") ? "narrowed" : "widened";
}

function countRule(keyword: string, name: CountKeyword, side: Side): SchemaRuleSet {
  const rules = limitRules(keyword, name, side);
  return {
    rules: allOf(rules),
    check(base, head, ctx) {
      const before = base.counts[name];
      const after = head.counts[name];
      const effect = compareLimit(before, after, side);
      if (effect === undefined) return [];
      return [
        schemaChange(
          rules[ctx.direction][effect]!,
          `${name} ${before ?? "none"} → ${after ?? "none"}`,
          before ?? null,
          after ?? null,
        ),
      ];
    },
  };
}

export const maxLengthRule = countRule("max-length", "maxLength", "upper");
export const minLengthRule = countRule("min-length", "minLength", "lower");
export const maxItemsRule = countRule("max-items", "maxItems", "upper");
export const minItemsRule = countRule("min-items", "minItems", "lower");
export const maxPropertiesRule = countRule("max-properties", "maxProperties", "upper");
export const minPropertiesRule = countRule("min-properties", "minProperties", "lower");

/** An exclusive bound is tighter than an inclusive one of the same value. */
export function compareBound(base: Bound | undefined, head: Bound | undefined, side: Side): Effect | undefined {
  if (base === undefined && head === undefined) return undefined;
  if (base === undefined) return "narrowed";
  if (head === undefined) return "widened";
  if (base.value === head.value && base.exclusive === head.exclusive) return undefined;
  if (base.value === head.value) return head.exclusive ? "narrowed" : "widened";
  return compareLimit(base.value, head.value, side);
}

export function showBound(bound: Bound | undefined, side: Side): string {
  if (bound === undefined) return "none";
  const op = side === "upper" ? (bound.exclusive ? "<" : "≤") : bound.exclusive ? ">" : "≥";
  return `${op} ${bound.value}`;
}

function boundRule(keyword: "maximum" | "minimum", side: Side): SchemaRuleSet {
  const rules = limitRules(keyword, keyword, side);
  return {
    rules: allOf(rules),
    check(base: NormalSchema, head: NormalSchema, ctx: SchemaCheckContext): Change[] {
      const effect = compareBound(base[keyword], head[keyword], side);
      if (effect === undefined) return [];
      const before = showBound(base[keyword], side);
      const after = showBound(head[keyword], side);
      return [schemaChange(rules[ctx.direction][effect]!, `${keyword} ${before} → ${after}`, before, after)];
    },
  };
}

export const maximumRule = boundRule("maximum", "upper");
export const minimumRule = boundRule("minimum", "lower");
