/** `propertyNames`: a schema every property name must match (keys of a map, say). */
import { allOf, defineDirectionalRules } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";
import { subschemaChanges } from "./subschema.ts";

const rules = defineDirectionalRules({
  keyword: "property-names",
  verbs: { narrowed: "added", widened: "removed" },
  what: { narrowed: "property names must now match a schema", widened: "property names are no longer restricted" },
});

export const propertyNamesRule: SchemaRuleSet = {
  rules: allOf(rules),
  check: (base, head, ctx) => subschemaChanges(rules, "propertyNames", base.propertyNames, head.propertyNames, ctx),
};
