/**
 * `default`: what the server assumes when a request omits the field. A changed request
 * default silently changes behaviour for every client that omits it; whether any does is
 * undecidable (WARN). In a response a default only documents.
 */
import { defineRule } from "../../model.ts";
import { canonical, show } from "../../openapi.ts";
import { schemaChange } from "../directional.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = {
  request: defineRule({
    id: "request-default-changed",
    level: "WARN",
    breaks: "clients",
    description:
      "Request: the default was changed, added or removed; clients that omit the field get different behaviour.",
  }),
  response: defineRule({
    id: "response-default-changed",
    level: "INFO",
    breaks: "none",
    description: "Response: the documented default was changed; no effect on what is valid.",
  }),
};

export const defaultRule: SchemaRuleSet = {
  rules: [rules.request, rules.response],
  check(base, head, ctx) {
    if (
      base.hasDefault === head.hasDefault &&
      (!base.hasDefault || canonical(base.default) === canonical(head.default))
    )
      return [];
    const before = base.hasDefault ? base.default : undefined;
    const after = head.hasDefault ? head.default : undefined;
    return [
      schemaChange(rules[ctx.direction], `default ${show(before)} → ${show(after)}`, before ?? null, after ?? null),
    ];
  },
};
