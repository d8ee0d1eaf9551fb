/**
 * The deprecation policy: removing what the base had marked `deprecated: true` is the
 * announced end of a deprecation, not a surprise. It still breaks the clients that did not
 * migrate, so it stays reported (WARN, with the sunset date), unless the base promised a
 * later date (`x-sunset`, as oasdiff reads it): removed before its sunset, it is ERR.
 * Without a prior deprecation a removal keeps its ordinary rule.
 */
import { defineRule, type Rule } from "../model.ts";
import type { Node } from "../openapi.ts";

function removalRules(thing: string, id: string): { afterDeprecation: Rule; beforeSunset: Rule } {
  return {
    afterDeprecation: defineRule({
      id: `${id}-removed-after-deprecation`,
      level: "WARN",
      breaks: "clients",
      description: `A deprecated ${thing} was removed (after its sunset date, if any): announced, but clients that did not migrate break.`,
    }),
    beforeSunset: defineRule({
      id: `${id}-removed-before-sunset`,
      level: "ERR",
      breaks: "clients",
      description: `A deprecated ${thing} was removed before the sunset date the base promised (x-sunset), or with a sunset that is not a date.`,
    }),
  };
}

export const deprecationRules = {
  path: removalRules("path", "path"),
  operation: removalRules("operation", "operation"),
  parameter: removalRules("parameter", "request-parameter"),
};

export const deprecationRuleList: Rule[] = Object.values(deprecationRules).flatMap((r) => [
  r.afterDeprecation,
  r.beforeSunset,
]);

export interface Deprecation {
  rule: Rule;
  /** e.g. "deprecated, sunset 2025-06-30" */
  note: string;
}

const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * The sunset day of a node: `x-sunset` as a date (`2026-12-31`, an RFC 3339 time, or the
 * HTTP date of RFC 8594's Sunset header); `unreadable` when it is given but is no date.
 */
function sunsetOf(node: Node): string | { unreadable: unknown } | undefined {
  const sunset = node["x-sunset"];
  if (sunset === undefined) return undefined;
  if (sunset instanceof Date) return sunset.toISOString().slice(0, 10);
  if (typeof sunset === "string" && /^\d{4}-\d{2}-\d{2}/.test(sunset)) return sunset.slice(0, 10);
  if (typeof sunset === "string" && HTTP_DATE.test(sunset) && !Number.isNaN(Date.parse(sunset)))
    return new Date(sunset).toISOString().slice(0, 10);
  return { unreadable: sunset };
}

/**
 * The rule for removing `nodes` (an operation, a parameter, every operation of a path)
 * when all were deprecated in the base; undefined when one was not (the ordinary rule applies).
 * A sunset that is given but is no date may still be ahead: the removal is judged as before it.
 */
export function deprecatedRemoval(
  kind: keyof typeof deprecationRules,
  nodes: Node[],
  today: string,
): Deprecation | undefined {
  if (nodes.length === 0 || !nodes.every((n) => n.deprecated === true)) return undefined;
  const read = nodes.map(sunsetOf);
  const unreadable = read.find((s) => typeof s === "object");
  if (unreadable !== undefined)
    return {
      rule: deprecationRules[kind].beforeSunset,
      note: `deprecated, but its sunset ${JSON.stringify(unreadable.unreadable)} is not a date (YYYY-MM-DD): it may not have passed`,
    };
  const sunsets = read.filter((s): s is string => typeof s === "string").sort();
  const latest = sunsets[sunsets.length - 1];
  if (latest !== undefined && latest > today)
    return {
      rule: deprecationRules[kind].beforeSunset,
      note: `deprecated, but its sunset is ${latest} (today is ${today})`,
    };
  return {
    rule: deprecationRules[kind].afterDeprecation,
    note: latest === undefined ? "deprecated, no sunset date given" : `deprecated, sunset ${latest} passed`,
  };
}
