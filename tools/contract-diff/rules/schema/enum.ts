/**
 * Allowed values (`enum`, `const`, or a union of single values). Each added or removed
 * value is its own change. Enums made only of error codes are left to the error-code
 * rules (rules/error-codes.ts), which judge them by this API's append-only rule.
 */
import { defineRule, type Breaks, type Change, type Direction, type Level, type Rule } from "../../model.ts";
import { canonical, show } from "../../openapi.ts";
import { classify, schemaChange } from "../directional.ts";
import type { SchemaCheckContext, SchemaRuleSet } from "./check.ts";
import { isConstChange } from "./const.ts";

function enumRule(
  direction: Direction,
  verb: string,
  description: string,
  classification: { level: Level; breaks: Breaks },
): Rule {
  return defineRule({ id: `${direction}-enum-${verb}`, ...classification, description });
}

const rules = {
  request: {
    valueRemoved: enumRule(
      "request",
      "value-removed",
      "Request: a value is no longer accepted; clients sending it are rejected.",
      classify("request", "narrowed"),
    ),
    valueAdded: enumRule(
      "request",
      "value-added",
      "Request: a new value is accepted; an implementation built on the base rejects it.",
      classify("request", "widened"),
    ),
    set: enumRule(
      "request",
      "set",
      "Request: values are now restricted to a list; clients sending other values are rejected.",
      classify("request", "narrowed"),
    ),
    unset: enumRule(
      "request",
      "unset",
      "Request: the list of values was lifted; an implementation built on the base rejects the new values.",
      classify("request", "widened"),
    ),
  },
  response: {
    // A client with an exhaustive switch fails on a new value; a tolerant one does not: undecidable.
    valueAdded: enumRule(
      "response",
      "value-added",
      "Response: a new value may be sent; clients that switch over the known values may not handle it.",
      { level: "WARN", breaks: "clients" },
    ),
    // Clients may wait for or branch on the value (a rename is a removal plus an addition),
    // and implementations built on the base may still send it.
    valueRemoved: enumRule(
      "response",
      "value-removed",
      "Response: a value is no longer sent; clients waiting for it never see it, and implementations built on the base may still send it.",
      { level: "WARN", breaks: "both" },
    ),
    set: enumRule(
      "response",
      "set",
      "Response: values are now restricted to a list; an implementation built on the base may send other values.",
      classify("response", "narrowed"),
    ),
    unset: enumRule(
      "response",
      "unset",
      "Response: the list of values was lifted; clients may receive values they were not built for.",
      classify("response", "widened"),
    ),
  },
} satisfies Record<Direction, Record<string, Rule>>;

export function isErrorCodeList(values: unknown[] | undefined, ctx: SchemaCheckContext): boolean {
  return (
    values !== undefined && values.length > 0 && values.every((v) => typeof v === "string" && ctx.errorCodes.has(v))
  );
}

function minus(a: unknown[], b: unknown[]): unknown[] {
  const keys = new Set(b.map(canonical));
  return a.filter((v) => !keys.has(canonical(v)));
}

export const enumRuleSet: SchemaRuleSet = {
  rules: [...Object.values(rules.request), ...Object.values(rules.response)],
  check(base, head, ctx): Change[] {
    const r = rules[ctx.direction];
    if (base.values === undefined && head.values === undefined) return [];
    if (isErrorCodeList(base.values, ctx) && isErrorCodeList(head.values, ctx)) return [];
    if (isConstChange(base, head)) return []; // one fixed value replaced: rules/schema/const.ts
    if (base.values === undefined)
      return [schemaChange(r.set, `values restricted to ${head.values!.map(show).join(", ")}`, null, head.values)];
    if (head.values === undefined)
      return [
        schemaChange(
          r.unset,
          `values no longer restricted (were ${base.values.map(show).join(", ")})`,
          base.values,
          null,
        ),
      ];
    return [
      ...minus(base.values, head.values).map((v) =>
        schemaChange(r.valueRemoved, `value ${show(v)} removed`, v, undefined),
      ),
      ...minus(head.values, base.values).map((v) => schemaChange(r.valueAdded, `value ${show(v)} added`, undefined, v)),
    ];
  },
};
