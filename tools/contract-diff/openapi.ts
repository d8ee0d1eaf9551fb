/**
 * Reading OpenAPI documents as plain data: local `$ref` resolution, operations, path
 * templates. Nothing here knows about rules.
 */

export type Node = Record<string, unknown>;
export type Doc = Node;

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace", "query"] as const;

export function isObject(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The object at `keys` below `node`; undefined when any step is missing or not an object. */
export function objectAt(node: unknown, ...keys: string[]): Node | undefined {
  let current = node;
  for (const key of keys) current = isObject(current) ? current[key] : undefined;
  return isObject(current) ? current : undefined;
}

/** The array at `key` of `node`; empty when missing or not an array. */
export function listAt(node: Node, key: string): unknown[] {
  const value = node[key];
  return Array.isArray(value) ? value : [];
}

/** Looks up a local JSON pointer (`#/components/schemas/X`). */
export function lookupPointer(doc: Doc, pointer: string): unknown {
  if (!pointer.startsWith("#")) throw new Error(`only local $refs are supported: ${pointer}`);
  let target: unknown = doc;
  for (const raw of pointer
    .slice(1)
    .split("/")
    .filter((s) => s !== "")) {
    const key = decodePointerSegment(raw);
    target = isObject(target) || Array.isArray(target) ? (target as Node)[key] : undefined;
  }
  return target;
}

/** `a%20b`, `a~1b` → `a b`, `a/b`; a malformed escape is kept as written. */
function decodePointerSegment(raw: string): string {
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Not percent-encoded after all: the segment is its own text.
  }
  return decoded.replaceAll("~1", "/").replaceAll("~0", "~");
}

/** The last segment of a `$ref`, i.e. the component's name. */
export function refName(pointer: string): string {
  const segments = pointer.split("/");
  return (segments[segments.length - 1] ?? pointer).replaceAll("~1", "/").replaceAll("~0", "~");
}

/**
 * Follows `$ref`s of a non-schema object (parameter, response, header, request body).
 * Returns the target and the last component name on the way.
 */
export function derefObject(doc: Doc, node: unknown): { node: Node | undefined; name?: string } {
  let name: string | undefined;
  const seen = new Set<string>();
  let current: unknown = node;
  while (isObject(current) && typeof current.$ref === "string") {
    if (seen.has(current.$ref)) return { node: undefined, name };
    seen.add(current.$ref);
    name = refName(current.$ref);
    current = lookupPointer(doc, current.$ref);
  }
  return isObject(current) ? { node: current, name } : { node: undefined, name };
}

/** `/accounts/{account}/datasets` → `/accounts/{}/datasets`: parameter names are not on the wire. */
export function normalizePathTemplate(path: string): string {
  return path.replace(/\{[^}]*\}/g, "{}");
}

/** The names of a path template's parameters, in order. */
export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]*)\}/g)].map((m) => m[1] ?? "");
}

/**
 * The operations of a path item: the fixed methods, and OpenAPI 3.2's
 * `additionalOperations` (other methods, e.g. `LINK`), by lower-case method.
 */
export function operationsOf(pathItem: Node): [string, Node][] {
  const result: [string, Node][] = [];
  for (const method of HTTP_METHODS) {
    const operation = pathItem[method];
    if (isObject(operation)) result.push([method, operation]);
  }
  for (const [method, operation] of Object.entries(objectAt(pathItem, "additionalOperations") ?? {})) {
    const lower = method.toLowerCase();
    if (isObject(operation) && !result.some(([m]) => m === lower)) result.push([lower, operation]);
  }
  return result;
}

export interface OperationRef {
  method: string;
  /** The path as written in the document. */
  path: string;
  pathItem: Node;
  operation: Node;
}

/** Operations keyed by `METHOD /normalized/{}/path`. */
export function operationsByKey(doc: Doc): Map<string, OperationRef> {
  const result = new Map<string, OperationRef>();
  for (const [path, rawItem] of Object.entries(doc.paths ?? {})) {
    const pathItem = derefObject(doc, rawItem).node;
    if (pathItem === undefined) continue;
    for (const [method, operation] of operationsOf(pathItem))
      result.set(`${method.toUpperCase()} ${normalizePathTemplate(path)}`, { method, path, pathItem, operation });
  }
  return result;
}

export function operationLabel(op: OperationRef): string {
  return `${op.method.toUpperCase()} ${op.path}`;
}

export function isSuccessStatus(status: string): boolean {
  return /^2/.test(status);
}

/** Stable key for deep comparisons of plain data (object keys sorted). */
export function canonical(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (isObject(value)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys(value[k])]),
    );
  }
  return value;
}

/** Renders a value for a message: strings in backticks, `none` for absent. */
export function show(value: unknown): string {
  if (value === undefined) return "none";
  if (typeof value === "string") return `\`${value}\``;
  return `\`${JSON.stringify(value)}\``;
}
