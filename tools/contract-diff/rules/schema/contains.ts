/** `contains` (with `minContains`/`maxContains`): an array must hold matching items. */
import type { Change } from "../../model.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import { compareLimit } from "./bounds.ts";
import type { SchemaRuleSet } from "./check.ts";
import { subschemaChanges } from "./subschema.ts";

const rules = defineDirectionalRules({
  keyword: "contains",
  verbs: { narrowed: "added", widened: "removed" },
  what: {
    narrowed: "the array must now contain a matching item",
    widened: "the array no longer needs a matching item",
  },
});
const minRules = defineDirectionalRules({
  keyword: "min-contains",
  verbs: { narrowed: "increased", widened: "decreased" },
  what: { narrowed: "more matching items are required", widened: "fewer matching items are required" },
});
const maxRules = defineDirectionalRules({
  keyword: "max-contains",
  verbs: { narrowed: "decreased", widened: "increased" },
  what: { narrowed: "fewer matching items are allowed", widened: "more matching items are allowed" },
});

export const containsRule: SchemaRuleSet = {
  rules: [...allOf(rules), ...allOf(minRules), ...allOf(maxRules)],
  check(base, head, ctx) {
    const changes: Change[] = subschemaChanges(rules, "contains", base.contains, head.contains, ctx);
    if (base.contains === undefined || head.contains === undefined) return changes;
    const min = compareLimit(base.minContains, head.minContains, "lower");
    if (min !== undefined)
      changes.push(
        schemaChange(minRules[ctx.direction][min]!, `minContains ${base.minContains} → ${head.minContains}`),
      );
    const max = compareLimit(base.maxContains, head.maxContains, "upper");
    if (max !== undefined)
      changes.push(
        schemaChange(
          maxRules[ctx.direction][max]!,
          `maxContains ${base.maxContains ?? "none"} → ${head.maxContains ?? "none"}`,
        ),
      );
    return changes;
  },
};
