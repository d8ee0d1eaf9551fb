/**
 * OpenAPI 3.0 schemas read with 3.1 (JSON Schema 2020-12) meaning, so both versions are
 * compared by one set of rules:
 * - `nullable: true` adds `null` to the accepted values (`type: [X, "null"]`; around a
 *   `$ref` or a composition, `anyOf: [X, {type: null}]`, which 3.0 writers mean);
 * - `exclusiveMinimum: true` with `minimum: n` is `exclusiveMinimum: n` (same for maximum);
 * - `example` becomes `examples: [example]` (an annotation either way).
 */
import { walkObjects } from "./walk.ts";

type Node = Record<string, unknown>;

const SCHEMA_KEYWORDS = ["type", "properties", "items", "$ref", "allOf", "anyOf", "oneOf", "enum", "format"];
const ANNOTATIONS = ["description", "title", "example", "examples", "deprecated", "readOnly", "writeOnly", "default"];

function looksLikeSchema(node: Node): boolean {
  return !("schema" in node) && !("content" in node) && SCHEMA_KEYWORDS.some((k) => k in node);
}

function nullableToNull(node: Node): void {
  const nullable = node.nullable;
  delete node.nullable;
  if (nullable !== true) return;
  if (typeof node.type === "string") {
    node.type = [node.type, "null"];
    if (Array.isArray(node.enum) && !node.enum.includes(null)) node.enum = [...node.enum, null];
    return;
  }
  if (Array.isArray(node.type)) {
    if (!node.type.includes("null")) node.type = [...node.type, "null"];
    return;
  }
  if (!("$ref" in node) && !("allOf" in node) && !("anyOf" in node) && !("oneOf" in node)) return;
  // A reference or composition made nullable: keep the annotations outside the wrapper.
  const inner: Node = {};
  for (const key of Object.keys(node)) {
    if (ANNOTATIONS.includes(key)) continue;
    inner[key] = node[key];
    delete node[key];
  }
  node.anyOf = [inner, { type: "null" }];
}

function exclusiveBound(node: Node, exclusive: "exclusiveMinimum" | "exclusiveMaximum", bound: string): void {
  const flag = node[exclusive];
  if (typeof flag !== "boolean") return;
  delete node[exclusive];
  if (flag && typeof node[bound] === "number") {
    node[exclusive] = node[bound];
    delete node[bound];
  }
}

export function normalizeOpenApi30(doc: Node, label: string): void {
  walkObjects(
    doc,
    (node) => {
      if ("nullable" in node && typeof node.nullable === "boolean") nullableToNull(node);
      exclusiveBound(node, "exclusiveMinimum", "minimum");
      exclusiveBound(node, "exclusiveMaximum", "maximum");
      if ("example" in node && !("examples" in node) && looksLikeSchema(node)) {
        node.examples = [node.example];
        delete node.example;
      }
    },
    label,
  );
}
