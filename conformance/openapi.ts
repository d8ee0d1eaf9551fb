/**
 * The OpenAPI 3.2 document as the kit reads it: only the fields the kit looks at, every
 * one optional, so that a read of a field the document lacks is checked by the compiler
 * (`?.`, `?? {}`) instead of trusted. Values whose shape the kit does not rely on (a
 * `const`, the members of an `enum`) are `unknown` and narrowed where they are used.
 */
import { isPlainObject } from "./matchers.ts";

/** A JSON Schema node: the keywords the kit reads to check headers and pick SSE branches. */
export interface SchemaNode {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  required?: string[];
  properties?: Record<string, SchemaNode>;
  oneOf?: SchemaNode[];
  contentSchema?: SchemaNode;
}

export interface HeaderObject {
  required?: boolean;
  schema?: SchemaNode;
}

/** A media type of a response; `itemSchema` (OpenAPI 3.2) describes each event of a stream. */
export interface MediaTypeObject {
  schema?: SchemaNode;
  itemSchema?: SchemaNode;
}

export interface ResponseObject {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaTypeObject>;
}

export interface OperationObject {
  operationId?: string;
  /** By status ("200", "4XX") or `default`. */
  responses?: Record<string, ResponseObject>;
}

export const HTTP_METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const;

export type PathItem = Partial<Record<(typeof HTTP_METHODS)[number], OperationObject>>;

export interface OpenApiDocument {
  info?: { version?: string };
  paths?: Record<string, PathItem>;
  components?: { schemas?: Record<string, SchemaNode> };
}

/**
 * A parsed document that is an object with an object `paths` is taken as an OpenAPI
 * document; its deeper fields are optional in the types above and read with care.
 */
export function isOpenApiDocument(value: unknown): value is OpenApiDocument {
  return isPlainObject(value) && isPlainObject(value.paths);
}

/** A node reached by a JSON pointer is a schema node when it is an object (every keyword is optional). */
export function isSchemaNode(value: unknown): value is SchemaNode {
  return isPlainObject(value);
}

/** One step of a JSON pointer into parsed JSON: a property of an object or an index of an array. */
export function childOf(value: unknown, key: string): unknown {
  if (Array.isArray(value)) return /^\d+$/.test(key) ? value[Number(key)] : undefined;
  return isPlainObject(value) ? value[key] : undefined;
}

/** The segments of a JSON pointer, unescaped (`/a~1b/0` → `a/b`, `0`). */
export function pointerSegments(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"));
}
