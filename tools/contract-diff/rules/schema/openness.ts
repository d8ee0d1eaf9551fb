/**
 * Undeclared properties: allowed (`unevaluatedProperties: {}`), rejected
 * (`unevaluatedProperties: {not: {}}`, `additionalProperties: false`) or checked against a
 * schema (a map). Closing narrows, opening widens. Whether anyone sends undeclared fields
 * is undecidable, so these are WARN.
 */
import { defineRule, type Effect } from "../../model.ts";
import { isObjectLike, type Openness } from "../../schema.ts";
import { schemaChange } from "../directional.ts";
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

const OPENNESS_ORDER: Record<Openness, number> = { closed: 0, map: 1, open: 2 };
const WORDS: Record<Openness, string> = { closed: "rejected", map: "must match a schema", open: "allowed" };

export const opennessRule: SchemaRuleSet = {
  rules: [rules.request.narrowed, rules.request.widened, rules.response.widened, rules.response.narrowed],
  check(base, head, ctx) {
    if (!isObjectLike(base) || !isObjectLike(head) || base.openness === head.openness) return [];
    const effect: Effect = OPENNESS_ORDER[head.openness] < OPENNESS_ORDER[base.openness] ? "narrowed" : "widened";
    const rule = rules[ctx.direction][effect];
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
