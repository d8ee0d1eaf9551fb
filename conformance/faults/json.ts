/**
 * Reading the parsed JSON of the messages a fault rewrites. Bodies and events are
 * `unknown` (the proxy parses whatever the upstream sent); a fault reaches into them only
 * through these guards, so that each read states what it expects and a body of another
 * shape is left alone instead of throwing.
 */
import { isPlainObject } from "../matchers.ts";

export type JsonObject = Record<string, unknown>;

export { isPlainObject as isObject };

/** The value at a path of property names; undefined when a step is missing or not an object. */
export function valueAt(value: unknown, ...path: string[]): unknown {
  let v = value;
  for (const key of path) v = isPlainObject(v) ? v[key] : undefined;
  return v;
}

/** The object at a path of property names (the value itself for an empty path); undefined when it is not an object. */
export function objectAt(value: unknown, ...path: string[]): JsonObject | undefined {
  const v = valueAt(value, ...path);
  return isPlainObject(v) ? v : undefined;
}

/** The array at a path of property names; undefined when it is not an array. */
export function listAt(value: unknown, ...path: string[]): unknown[] | undefined {
  const v = valueAt(value, ...path);
  return Array.isArray(v) ? v : undefined;
}

/** The string at a path of property names; undefined when it is not a string. */
export function stringAt(value: unknown, ...path: string[]): string | undefined {
  const v = valueAt(value, ...path);
  return typeof v === "string" ? v : undefined;
}

/** The objects of a list (its other members skipped); empty when it is not a list. */
export function objectsOf(list: unknown): JsonObject[] {
  return Array.isArray(list) ? list.filter(isPlainObject) : [];
}
