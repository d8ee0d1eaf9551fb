/**
 * `dependentRequired` (if `a` is present, `b` must be too) and `dependentSchemas` (if `a`
 * is present, the object must match a schema): each dependency added narrows, each
 * removed widens; dependent schemas on both sides are compared.
 */
import type { Change } from "../../model.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";
import { subschemaChanges } from "./subschema.ts";

const requiredRules = defineDirectionalRules({
  keyword: "dependent-required",
  verbs: { narrowed: "added", widened: "removed" },
  what: {
    narrowed: "a property now requires another one",
    widened: "a property no longer requires another one",
  },
});
const schemaRules = defineDirectionalRules({
  keyword: "dependent-schema",
  verbs: { narrowed: "added", widened: "removed" },
  what: {
    narrowed: "a property's presence now imposes a schema",
    widened: "a property's presence no longer imposes a schema",
  },
});

export const dependentRule: SchemaRuleSet = {
  rules: [...allOf(requiredRules), ...allOf(schemaRules)],
  check(base, head, ctx) {
    const changes: Change[] = [];
    const before = base.dependentRequired ?? {};
    const after = head.dependentRequired ?? {};
    for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const was = new Set(before[name] ?? []);
      const is = new Set(after[name] ?? []);
      for (const needed of is)
        if (!was.has(needed))
          changes.push(schemaChange(requiredRules[ctx.direction].narrowed!, `\`${name}\` now requires \`${needed}\``));
      for (const needed of was)
        if (!is.has(needed))
          changes.push(
            schemaChange(requiredRules[ctx.direction].widened!, `\`${name}\` no longer requires \`${needed}\``),
          );
    }
    const beforeSchemas = base.dependentSchemas ?? {};
    const afterSchemas = head.dependentSchemas ?? {};
    for (const name of new Set([...Object.keys(beforeSchemas), ...Object.keys(afterSchemas)]))
      changes.push(
        ...subschemaChanges(schemaRules, `dependentSchemas ${name}`, beforeSchemas[name], afterSchemas[name], ctx),
      );
    return changes;
  },
};
