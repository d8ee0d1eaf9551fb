/**
 * The generated OpenAPI 3.1 document the server answers to, read once. The validator
 * reads the same file by path; the rest of the HTTP core reads the parsed document here.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

export const CONTRACT_PATH = fileURLToPath(new URL("../../generated/openapi.3.1.yaml", import.meta.url));

/** The served paths are relative to the server url `{origin}/v1`. */
export const BASE_PATH = "/v1";

export type JsonObject = { [key: string]: unknown };

let cached: JsonObject | undefined;

export function contractDocument(): JsonObject {
  cached ??= parse(readFileSync(CONTRACT_PATH, "utf8")) as JsonObject;
  return cached;
}

/** Follows a local `$ref` (`#/components/schemas/X`) until a non-reference object. */
export function resolveRef(doc: JsonObject, value: unknown): JsonObject | undefined {
  let current = value;
  for (let depth = 0; depth < 32 && isObject(current) && typeof current.$ref === "string"; depth++) {
    const pointer = current.$ref.replace(/^#\//, "").split("/").map(unescapePointer);
    current = pointer.reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), doc);
  }
  return isObject(current) ? current : undefined;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}
