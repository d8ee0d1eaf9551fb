/**
 * What the 2020-12 applicator rules share: a keyword holding a subschema is either added
 * (one more constraint: narrowed), removed (widened) or on both sides, where the
 * subschemas are compared in the same direction (a narrower `contains` schema narrows the
 * array) and the changes found are placed under `[keyword]`.
 */
import type { Change } from "../../model.ts";
import { schemaChange, type DirectionalRules } from "../directional.ts";
import type { SchemaCheckContext } from "./check.ts";

export function under(segment: string, changes: Change[]): Change[] {
  return changes.map((c) => ({ ...c, path: [segment, ...c.path] }));
}

export function subschemaChanges(
  rules: DirectionalRules,
  what: string,
  base: unknown,
  head: unknown,
  ctx: SchemaCheckContext,
): Change[] {
  if (base === undefined && head === undefined) return [];
  if (base === undefined) return [schemaChange(rules[ctx.direction].narrowed!, `${what} added`)];
  if (head === undefined) return [schemaChange(rules[ctx.direction].widened!, `${what} removed`)];
  return under(`[${what}]`, ctx.compare?.(base, head) ?? []);
}
