/**
 * `pattern`: whether one regular expression accepts a subset of another is undecidable in
 * general, so an edit is `changed`, except where the answer is plain:
 * - a pattern that accepts every string (`.*`, `^.*$`, `[\s\S]*`) is no pattern: setting
 *   one is removing the constraint (generalized), not changing it;
 * - the same pattern with anchors dropped (`^[a-z]+$` → `[a-z]+`), or the old pattern as
 *   one alternative of the new (`^a$` → `^a$|^b$`), accepts every string it did (generalized).
 */
import type { Effect, Rule } from "../../model.ts";
import { show } from "../../openapi.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = defineDirectionalRules({
  keyword: "pattern",
  verbs: { narrowed: "added", widened: "removed", changed: "changed" },
  what: { narrowed: "a pattern was set", widened: "the pattern was removed", changed: "the pattern was changed" },
});
const generalizedRules = defineDirectionalRules({
  keyword: "pattern",
  verbs: { widened: "generalized", narrowed: "specialized" },
  what: {
    widened: "the pattern now accepts every string it did and more (`.*`, anchors dropped, an alternative added)",
    narrowed: "the pattern now accepts only some of the strings it did (the reverse of a generalization)",
  },
});

const UNIVERSAL = new Set([".*", "^.*$", "^.*", ".*$", "[\\s\\S]*", "^[\\s\\S]*$", "(.*)", "^(.*)$", ""]);

/** A pattern that accepts every string counts as none. */
export function effectivePattern(pattern: string | undefined): string | undefined {
  return pattern === undefined || UNIVERSAL.has(pattern) ? undefined : pattern;
}

/** Whether `wider` plainly accepts every string `narrower` does. */
function plainlyIncludes(wider: string, narrower: string): boolean {
  const unanchored = narrower.replace(/^\^/, "").replace(/(?<!\\)\$$/, "");
  if (wider === unanchored || wider === narrower.replace(/^\^/, "") || wider === narrower.replace(/(?<!\\)\$$/, ""))
    return true;
  const alternatives = wider.split("|");
  return alternatives.length > 1 && alternatives.some((a) => a === narrower || a === `(${narrower})`);
}

export function comparePatterns(
  base: string | undefined,
  head: string | undefined,
): { effect: Effect; generalized: boolean } | undefined {
  const b = effectivePattern(base);
  const h = effectivePattern(head);
  if (b === h) return undefined;
  if (b === undefined) return { effect: "narrowed", generalized: false };
  if (h === undefined) return { effect: "widened", generalized: head !== undefined };
  if (plainlyIncludes(h, b)) return { effect: "widened", generalized: true };
  if (plainlyIncludes(b, h)) return { effect: "narrowed", generalized: true };
  return { effect: "changed", generalized: false };
}

export const patternRule: SchemaRuleSet = {
  rules: [...allOf(rules), ...allOf(generalizedRules)],
  check(base, head, ctx) {
    if (base.pattern === head.pattern) return [];
    const compared = comparePatterns(base.pattern, head.pattern);
    if (compared === undefined) return [];
    const set = compared.generalized ? generalizedRules : rules;
    const rule: Rule = set[ctx.direction][compared.effect]!;
    return [
      schemaChange(
        rule,
        `pattern ${show(base.pattern)} → ${show(head.pattern)}`,
        base.pattern ?? null,
        head.pattern ?? null,
      ),
    ];
  },
};
