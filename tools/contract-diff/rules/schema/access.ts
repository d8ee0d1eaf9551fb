/**
 * `readOnly` and `writeOnly` by direction: a readOnly property is answered but never sent
 * (left out of request schemas, and out of their `required`), a writeOnly one is sent but
 * never answered (left out of responses). A property that becomes readOnly is, for
 * clients, a request property removed; one that becomes writeOnly disappears from
 * responses. The reverse (a property now writable or answered) is reported by the
 * property rules as an addition.
 */
import { defineRule, type Change, type Direction, type Rule } from "../../model.ts";
import type { Doc } from "../../openapi.ts";
import { resolveSchema, type NormalSchema } from "../../schema.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = {
  becameReadOnly: defineRule({
    id: "request-property-became-read-only",
    level: "WARN",
    breaks: "clients",
    description:
      "Request: a property became readOnly; clients still sending it have it ignored (or rejected by strict implementations).",
  }),
  requiredBecameWriteOnly: defineRule({
    id: "response-required-property-became-write-only",
    level: "ERR",
    breaks: "clients",
    description:
      "Response: a required property became writeOnly; it is no longer answered and clients reading it break.",
  }),
  optionalBecameWriteOnly: defineRule({
    id: "response-optional-property-became-write-only",
    level: "WARN",
    breaks: "clients",
    description: "Response: an optional property became writeOnly; clients that use it when present no longer get it.",
  }),
} satisfies Record<string, Rule>;

const HIDING_KEYWORD: Record<Direction, "readOnly" | "writeOnly"> = { request: "readOnly", response: "writeOnly" };

/** The schema as one direction sees it: readOnly properties left out of requests, writeOnly out of responses. */
export function inDirection(doc: Doc, schema: NormalSchema, direction: Direction): NormalSchema {
  const keyword = HIDING_KEYWORD[direction];
  const hidden = [...schema.properties.keys()].filter(
    (name) => resolveSchema(doc, schema.properties.get(name)).schema[keyword] === true,
  );
  if (hidden.length === 0) return schema;
  const properties = new Map([...schema.properties].filter(([name]) => !hidden.includes(name)));
  const required = new Set([...schema.required].filter((name) => !hidden.includes(name)));
  return { ...schema, properties, required, hidden: new Set([...schema.hidden, ...hidden]) };
}

export const accessRule: SchemaRuleSet = {
  rules: Object.values(rules),
  check(base, head, ctx) {
    const changes: Change[] = [];
    for (const name of base.properties.keys()) {
      if (!head.hidden.has(name)) continue;
      if (ctx.direction === "request") {
        changes.push({ rule: rules.becameReadOnly, message: `property \`${name}\` became readOnly`, path: [name] });
      } else {
        const required = base.required.has(name);
        changes.push({
          rule: required ? rules.requiredBecameWriteOnly : rules.optionalBecameWriteOnly,
          message: `property \`${name}\` became writeOnly (was ${required ? "required" : "optional"})`,
          path: [name],
        });
      }
    }
    return changes;
  },
};
