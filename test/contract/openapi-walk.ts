/**
 * Small helpers for reading the generated OpenAPI documents in tests: loading, `$ref`
 * resolution, finding operations, and walking schemas. They know nothing about this
 * service; the rules live in the tests.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";

// The documents are plain JSON-like data; tests read them loosely.

export type Node = any;

export const repoRoot = resolve(import.meta.dirname, "..", "..");
export const generatedDir = join(repoRoot, "generated");

const cache = new Map<string, Node>();

/** Parses generated/openapi.<version>.yaml (cached). */
export function loadDocument(version: "3.1" | "3.2"): Node {
  const file = join(generatedDir, `openapi.${version}.yaml`);
  let doc = cache.get(file);
  if (doc === undefined) {
    doc = parse(readFileSync(file, "utf8"));
    cache.set(file, doc);
  }
  return doc;
}

// ---------------------------------------------------------------------------
// $ref
// ---------------------------------------------------------------------------

/** Follows local `$ref`s (`#/a/b`) until the node is not a reference. */
export function deref(doc: Node, node: Node): Node {
  const seen = new Set<string>();
  while (node !== null && typeof node === "object" && typeof node.$ref === "string") {
    const ref: string = node.$ref;
    if (seen.has(ref)) throw new Error(`$ref cycle at ${ref}`);
    seen.add(ref);
    if (!ref.startsWith("#/")) throw new Error(`only local $refs are supported: ${ref}`);
    let target: Node = doc;
    for (const raw of ref.slice(2).split("/")) {
      const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
      target = target?.[key];
    }
    if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
    node = target;
  }
  return node;
}

// ---------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

export interface Operation {
  method: string; // upper case
  path: string;
  op: Node;
}

/** Every operation of the document. */
export function operations(doc: Node): Operation[] {
  const result: Operation[] = [];
  for (const [path, item] of Object.entries<Node>(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      if (item?.[method] !== undefined) result.push({ method: method.toUpperCase(), path, op: item[method] });
    }
  }
  return result;
}

/** The operation at `METHOD path`, or undefined. */
export function findOperation(doc: Node, method: string, path: string): Node | undefined {
  return doc.paths?.[path]?.[method.toLowerCase()];
}

/** The operation at `METHOD path`; throws a readable error when it is missing. */
export function operation(doc: Node, method: string, path: string): Node {
  const op = findOperation(doc, method, path);
  if (op === undefined) throw new Error(`the document has no ${method} ${path}`);
  return op;
}

/** The operation's responses by status code, resolved. */
export function responses(doc: Node, op: Node): Record<string, Node> {
  const result: Record<string, Node> = {};
  for (const [status, response] of Object.entries<Node>(op.responses ?? {})) {
    result[status] = deref(doc, response);
  }
  return result;
}

/** The status codes of the operation's 4xx and 5xx responses. */
export function errorStatuses(op: Node): string[] {
  return Object.keys(op.responses ?? {}).filter((s) => /^[45]/.test(s));
}

/** The 2xx responses of an operation, resolved. */
export function successResponses(doc: Node, op: Node): [string, Node][] {
  return Object.entries(responses(doc, op)).filter(([status]) => /^2/.test(status));
}

/** A response header by name (case-insensitive), resolved; undefined when absent. */
export function header(doc: Node, response: Node, name: string): Node | undefined {
  for (const [key, value] of Object.entries<Node>(response.headers ?? {})) {
    if (key.toLowerCase() === name.toLowerCase()) return deref(doc, value);
  }
  return undefined;
}

/** The operation's parameters (path-level ones included), resolved. */
export function parameters(doc: Node, path: string, op: Node): Node[] {
  const shared = doc.paths?.[path]?.parameters ?? [];
  return [...shared, ...(op.parameters ?? [])].map((p: Node) => deref(doc, p));
}

/** One parameter by location and name (header names case-insensitive), or undefined. */
export function parameter(doc: Node, path: string, op: Node, where: string, name: string): Node | undefined {
  return parameters(doc, path, op).find(
    (p) => p.in === where && (where === "header" ? p.name.toLowerCase() === name.toLowerCase() : p.name === name),
  );
}

/** The schema of a response's (or request body's) `mediaType` content, or undefined. */
export function contentSchema(doc: Node, responseOrBody: Node, mediaType = "application/json"): Node | undefined {
  return deref(doc, responseOrBody)?.content?.[mediaType]?.schema;
}

/** The JSON body schema of the operation's first 2xx response; throws when there is none. */
export function successJsonSchema(doc: Node, method: string, path: string): Node {
  const op = operation(doc, method, path);
  for (const [, response] of successResponses(doc, op)) {
    const schema = contentSchema(doc, response);
    if (schema !== undefined) return schema;
  }
  throw new Error(`${method} ${path} has no application/json success body`);
}

/** The JSON request body schema of an operation; throws when there is none. */
export function requestJsonSchema(doc: Node, method: string, path: string): Node {
  const op = operation(doc, method, path);
  const schema = op.requestBody === undefined ? undefined : contentSchema(doc, op.requestBody);
  if (schema === undefined) throw new Error(`${method} ${path} has no application/json request body`);
  return schema;
}

// ---------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------

/** True when the schema only admits `null`. */
function isNullSchema(doc: Node, schema: Node): boolean {
  const s = deref(doc, schema);
  return (
    s?.type === "null" || (Array.isArray(s?.enum) && s.enum.length === 1 && s.enum[0] === null) || s?.const === null
  );
}

/**
 * The schema and every schema it is made of: `$ref` targets, `allOf` members and the
 * non-null branches of `anyOf`/`oneOf`. Each is resolved.
 */
export function alternatives(doc: Node, schema: Node): Node[] {
  const result: Node[] = [];
  const visit = (node: Node): void => {
    const s = deref(doc, node);
    if (s === null || typeof s !== "object" || result.includes(s)) return;
    result.push(s);
    for (const member of s.allOf ?? []) visit(member);
    for (const branch of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) {
      if (!isNullSchema(doc, branch)) visit(branch);
    }
  };
  visit(schema);
  return result;
}

/** The first value of `keyword` found on the schema or on what it is made of. */
export function keyword(doc: Node, schema: Node, name: string): Node {
  for (const s of alternatives(doc, schema)) {
    if (s[name] !== undefined) return s[name];
  }
  return undefined;
}

/** Every property name the schema (or any of its branches) declares. */
export function propertyNames(doc: Node, schema: Node): Set<string> {
  const names = new Set<string>();
  for (const s of alternatives(doc, schema)) {
    for (const name of Object.keys(s.properties ?? {})) names.add(name);
  }
  return names;
}

/** True when the schema (or an `allOf` member) lists `name` as required. */
export function isRequired(doc: Node, schema: Node, name: string): boolean {
  return alternatives(doc, schema).some((s) => Array.isArray(s.required) && s.required.includes(name));
}

/**
 * Every schema at a dotted path of property names below `schema`, one per union branch
 * that has the path; `name[]` steps into the items of an array property.
 */
export function schemasAt(doc: Node, schema: Node, path: string): Node[] {
  let current: Node[] = [schema];
  for (const segment of path.split(".")) {
    const isArray = segment.endsWith("[]");
    const name = isArray ? segment.slice(0, -2) : segment;
    const next: Node[] = [];
    for (const node of current) {
      for (const owner of alternatives(doc, node)) {
        const property = owner.properties?.[name];
        if (property === undefined) continue;
        if (!isArray) next.push(property);
        else {
          const items = alternatives(doc, property).find((s) => s.items !== undefined)?.items;
          if (items !== undefined) next.push(items);
        }
      }
    }
    current = next;
  }
  return current;
}

/** The schema at a dotted path below `schema` (see `schemasAt`): the first branch that has it. */
export function schemaAt(doc: Node, schema: Node, path: string): Node | undefined {
  return schemasAt(doc, schema, path)[0];
}

/**
 * The literal values a schema admits (`enum`, `const`, and unions of those through
 * `$ref`, `anyOf` and `oneOf`), or undefined when it admits values that are not listed.
 */
export function literalValues(doc: Node, schema: Node): Set<unknown> | undefined {
  const s = deref(doc, schema);
  if (s === null || typeof s !== "object") return undefined;
  if (s.const !== undefined) return new Set([s.const]);
  if (Array.isArray(s.enum)) return new Set(s.enum);
  const branches = s.anyOf ?? s.oneOf;
  if (Array.isArray(branches)) {
    const values = new Set<unknown>();
    for (const branch of branches) {
      const branchValues = literalValues(doc, branch);
      if (branchValues === undefined) return undefined;
      for (const v of branchValues) values.add(v);
    }
    return values;
  }
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return literalValues(doc, s.allOf[0]);
  return undefined;
}

/** The JSON types a schema admits apart from null (`type` through `$ref`, `allOf` and unions). */
export function types(doc: Node, schema: Node): Set<string> {
  const result = new Set<string>();
  for (const s of alternatives(doc, schema)) {
    const t = s.type;
    for (const name of Array.isArray(t) ? t : t === undefined ? [] : [t]) {
      if (name !== "null") result.add(name);
    }
  }
  return result;
}

/** `false`, or the equivalent `{not: {}}`. */
export function isFalseSchema(value: Node): boolean {
  return (
    value === false ||
    (value !== null &&
      typeof value === "object" &&
      Object.keys(value).length === 1 &&
      value.not !== null &&
      typeof value.not === "object" &&
      Object.keys(value.not).length === 0)
  );
}

/** True when the object schema admits no undeclared properties (every union branch, if a union). */
export function isClosed(doc: Node, schema: Node): boolean {
  const s = deref(doc, schema);
  if (isFalseSchema(s.unevaluatedProperties) || isFalseSchema(s.additionalProperties)) return true;
  const branches = s.anyOf ?? s.oneOf;
  return (
    Array.isArray(branches) &&
    branches.length > 0 &&
    branches.every((b: Node) => isNullSchema(doc, b) || isClosed(doc, b))
  );
}

/** Child schemas of a schema (every keyword that holds schemas), unresolved, each with a label. */
function childSchemas(s: Node): [string, Node][] {
  const children: [string, Node][] = [];
  const single = [
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "contentSchema",
    "unevaluatedItems",
  ];
  for (const key of single) {
    if (s[key] !== null && typeof s[key] === "object") children.push([key, s[key]]);
  }
  for (const key of ["allOf", "anyOf", "oneOf", "prefixItems"]) {
    if (Array.isArray(s[key])) s[key].forEach((child: Node, i: number) => children.push([`${key}[${i}]`, child]));
  }
  for (const key of ["properties", "patternProperties", "dependentSchemas", "$defs"]) {
    if (s[key] !== null && typeof s[key] === "object") {
      for (const [name, child] of Object.entries<Node>(s[key]))
        children.push([key === "properties" ? name : `${key}.${name}`, child]);
    }
  }
  return children;
}

/**
 * Every schema reachable from `schema` (through `$ref`s and every subschema keyword), each
 * once, with where it was found: `Component.property…` or `(inline).property…`.
 */
export function reachableSchemas(doc: Node, schema: Node): { where: string; schema: Node }[] {
  const seen = new Set<Node>();
  const result: { where: string; schema: Node }[] = [];
  const visit = (node: Node, where: string): void => {
    if (node === null || typeof node !== "object") return;
    const label = typeof node.$ref === "string" ? node.$ref.replace("#/components/schemas/", "") : where;
    const s = deref(doc, node);
    if (s === null || typeof s !== "object" || seen.has(s)) return;
    seen.add(s);
    result.push({ where: label, schema: s });
    for (const [key, child] of childSchemas(s)) visit(child, `${label}.${key}`);
  };
  visit(schema, "(body)");
  return result;
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

/**
 * A JSON Schema 2020-12 validator for one schema of the document (its `#/components/…`
 * `$ref`s resolve against the document). Returns the error texts, `[]` when valid.
 * `contentSchema` stays an annotation, as JSON Schema and the OpenAPI 3.2 SSE section say.
 */
export function validatorFor(doc: Node, schema: Node): (instance: unknown) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile({ ...schema, components: doc.components });
  return (instance) =>
    validate(instance)
      ? []
      : (validate.errors ?? []).map(
          (e) => `${e.instancePath || "(item)"} ${e.message ?? ""} ${JSON.stringify(e.params)}`,
        );
}
