/**
 * The one classification behind every schema keyword rule: what a change does to the set
 * of accepted values (its effect) and whether the schema is sent by the client (request)
 * or by the implementation (response) decide who it breaks.
 *
 * | direction | narrowed                         | widened                              |
 * | request   | ERR, clients: sent values now rejected | WARN, implementations: built on the base, they reject what the head allows |
 * | response  | WARN, implementations: they may send what the head forbids | ERR, clients: they receive values they were not built for |
 *
 * A `changed` effect (neither subset nor superset) is ERR for both.
 */
import { defineRule, type Breaks, type Change, type Direction, type Effect, type Level, type Rule } from "../model.ts";

export function classify(direction: Direction, effect: Effect): { level: Level; breaks: Breaks } {
  if (effect === "changed") return { level: "ERR", breaks: "both" };
  const breaksClients = (direction === "request") === (effect === "narrowed");
  return breaksClients ? { level: "ERR", breaks: "clients" } : { level: "WARN", breaks: "implementations" };
}

const CONSEQUENCE: Record<Direction, Record<Effect, string>> = {
  request: {
    narrowed: "clients sending values valid before are rejected",
    widened: "an implementation built on the base rejects requests the head allows",
    changed: "clients sending values valid before are rejected, and implementations reject values now allowed",
  },
  response: {
    narrowed: "an implementation built on the base may send values the head forbids",
    widened: "clients may receive values they were not built for",
    changed: "clients may receive values they were not built for, and implementations may send values now forbidden",
  },
};

export interface DirectionalSpec {
  /** Id fragment, e.g. `max-length`. */
  keyword: string;
  /** Id suffix per effect, e.g. `{narrowed: "decreased", widened: "increased"}`. */
  verbs: Partial<Record<Effect, string>>;
  /** What the change is, per effect, e.g. `{narrowed: "maxLength lowered or set"}`. */
  what: Partial<Record<Effect, string>>;
}

export type DirectionalRules = Record<Direction, Partial<Record<Effect, Rule>>>;

/** One rule per direction and effect: `request-max-length-decreased`, `response-max-length-increased`, … */
export function defineDirectionalRules(spec: DirectionalSpec): DirectionalRules {
  const rules: DirectionalRules = { request: {}, response: {} };
  for (const direction of ["request", "response"] as const) {
    for (const [effect, verb] of Object.entries(spec.verbs) as [Effect, string][]) {
      rules[direction][effect] = defineRule({
        id: `${direction}-${spec.keyword}-${verb}`,
        ...classify(direction, effect),
        description: `${direction === "request" ? "Request" : "Response"}: ${spec.what[effect]}; ${CONSEQUENCE[direction][effect]}.`,
      });
    }
  }
  return rules;
}

export function allOf(rules: DirectionalRules): Rule[] {
  return [...Object.values(rules.request), ...Object.values(rules.response)].filter((r): r is Rule => r !== undefined);
}

/** A change found in a schema, located relative to it (the walker adds the path). */
export function schemaChange(rule: Rule, message: string, before?: unknown, after?: unknown): Change {
  const change: Change = { rule, message, path: [] };
  if (before !== undefined) change.before = before;
  if (after !== undefined) change.after = after;
  return change;
}
