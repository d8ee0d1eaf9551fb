/**
 * Visits every object of a document that is structure (schemas, operations, …), skipping
 * data values (`example`, `default`, `enum`, `const`, extensions), where a key such as
 * `$ref` or `nullable` is only data. Keys of name maps (`properties`, `paths`, …) are names,
 * never keywords, so a property called `default` is still walked.
 */
import { DocumentError } from "./errors.ts";

type Node = Record<string, unknown>;

const VALUE_KEYS = new Set(["example", "examples", "default", "enum", "const", "value"]);
const NAME_MAPS = new Set([
  "properties",
  "patternProperties",
  "dependentSchemas",
  "$defs",
  "definitions",
  "schemas",
  "responses",
  "parameters",
  "requestBodies",
  "headers",
  "securitySchemes",
  "links",
  "callbacks",
  "pathItems",
  "paths",
  "webhooks",
  "content",
  "encoding",
  "mapping",
  "variables",
  "x-contract-diff-files",
]);
const MAX_DEPTH = 2000;

export function walkObjects(root: unknown, visit: (node: Node) => void, label: string): void {
  const stack = new Set<unknown>();
  const walk = (node: unknown, names: boolean, depth: number): void => {
    if (typeof node !== "object" || node === null) return;
    if (stack.has(node)) throw new DocumentError(`${label}: a YAML alias refers to itself (cyclic data)`);
    if (depth > MAX_DEPTH) throw new DocumentError(`${label}: nested more than ${MAX_DEPTH} levels deep`);
    stack.add(node);
    if (Array.isArray(node)) {
      for (const item of node) walk(item, false, depth + 1);
    } else {
      const object = node as Node;
      if (!names) visit(object);
      for (const [key, value] of Object.entries(object)) {
        if (names) walk(value, false, depth + 1);
        else if (!VALUE_KEYS.has(key) && !(key.startsWith("x-") && key !== "x-contract-diff-files"))
          walk(value, NAME_MAPS.has(key), depth + 1);
      }
    }
    stack.delete(node);
  };
  walk(root, false, 0);
}
