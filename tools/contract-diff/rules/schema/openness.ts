/**
 * Undeclared properties: allowed (`unevaluatedProperties: {}`), rejected
 * (`unevaluatedProperties: {not: {}}`, `additionalProperties: false`) or checked against a
 * schema (a map). Closing narrows, opening widens. Whether anyone sends undeclared fields
 * is undecidable, so these are WARN; except in a free-form object (no declared
 * properties), where the undeclared properties are all it holds: `meta: {type: object}`
 * closed, or its values held to a schema, refuses what clients sent, for certain. Those are
 * judged like any other keyword (directional.ts).
 */
import { defineRule, type Effect } from "../../model.ts";
import { isObjectLike, type NormalSchema, type Openness } from "../../schema.ts";
import { allOf, defineDirectionalRules, schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = {
  request: {
    narrowed: defineRule({
      id: "request-object-closed",
      level: "WARN",
      breaks: "clients",
      description:
        "Request: undeclared properties were allowed and now are rejected (or must match a schema); clients sending extra fields are rejected.",
    }),
    widened: defineRule({
      id: "request-object-opened",
      level: "WARN",
      breaks: "implementations",
      description:
        "Request: undeclared properties were rejected and now are allowed; an implementation built on the base rejects them.",
    }),
  },
  response: {
    widened: defineRule({
      id: "response-object-opened",
      level: "WARN",
      breaks: "clients",
      description:
        "Response: undeclared properties were rejected and now may appear; clients validating against the base reject them.",
    }),
    narrowed: defineRule({
      id: "response-object-closed",
      level: "WARN",
      breaks: "implementations",
      description:
        "Response: undeclared properties were allowed and now are rejected; implementations built on the base may send some.",
    }),
  },
};

const freeFormRules = defineDirectionalRules({
  keyword: "free-form-object",
  verbs: { narrowed: "narrowed", widened: "widened" },
  what: {
    narrowed: "an object without declared properties now rejects its entries or holds them to a schema",
    widened: "an object without declared properties now allows entries it rejected",
  },
});

function isFreeForm(schema: NormalSchema): boolean {
  return schema.properties.size === 0 && schema.patternProperties === undefined;
}

const OPENNESS_ORDER: Record<Openness, number> = { closed: 0, map: 1, open: 2 };
const WORDS: Record<Openness, string> = { closed: "rejected", map: "must match a schema", open: "allowed" };

export const opennessRule: SchemaRuleSet = {
  rules: [
    rules.request.narrowed,
    rules.request.widened,
    rules.response.widened,
    rules.response.narrowed,
    ...allOf(freeFormRules),
  ],
  check(base, head, ctx) {
    if (!isObjectLike(base) || !isObjectLike(head) || base.openness === head.openness) return [];
    const effect: Effect = OPENNESS_ORDER[head.openness] < OPENNESS_ORDER[base.openness] ? "narrowed" : "widened";
    const rule = (isFreeForm(base) && isFreeForm(head) ? freeFormRules : rules)[ctx.direction][effect]!;
    return [
      schemaChange(
        rule,
        `undeclared properties: ${WORDS[base.openness]} → ${WORDS[head.openness]}`,
        base.openness,
        head.openness,
      ),
    ];
  },
};
