/**
 * A fixed value (`const`, or an enum of one) replaced by another: every value changes,
 * so it breaks both parties in either direction (a response's `type: "pet"` becoming
 * `"animal"` reaches every client). The enum rules leave this case to this rule.
 */
import { canonical, show } from "../../openapi.ts";
import type { NormalSchema } from "../../schema.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";
import { isErrorCodeList } from "./enum.ts";

const rules = defineDirectionalRules({
  keyword: "const",
  verbs: { changed: "changed" },
  what: { changed: "the one allowed value (const) was replaced" },
});

export function isConstChange(base: NormalSchema, head: NormalSchema): boolean {
  return (
    base.values?.length === 1 && head.values?.length === 1 && canonical(base.values[0]) !== canonical(head.values[0])
  );
}

export const constRule: SchemaRuleSet = {
  rules: allOf(rules),
  check(base, head, ctx) {
    if (!isConstChange(base, head)) return [];
    if (isErrorCodeList(base.values, ctx) && isErrorCodeList(head.values, ctx)) return [];
    const [before] = base.values!;
    const [after] = head.values!;
    return [schemaChange(rules[ctx.direction].changed!, `const ${show(before)} → ${show(after)}`, before, after)];
  },
};
