/**
 * Schema resolution and normalization, so that rules compare meaning rather than
 * spelling: `$ref`s are followed (names never matter), `anyOf [X, null]` and
 * `type: [X, "null"]` become X plus a nullable flag, `allOf` is merged, a union of
 * single-value enums (how TypeSpec emits a union of enum members) is one enum, and a
 * free string with "known values" branches is a free string.
 */
import { canonical, isObject, lookupPointer, refName, type Doc, type Node } from "./openapi.ts";

export type JsonType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";

export interface ResolvedSchema {
  /** The schema after `$ref`s and nullable wrappers are peeled off. */
  schema: Node;
  /** The object the last `$ref` pointed at (or the schema itself): identity for memoization and cycles. */
  identity: Node;
  /** True when `schema` is exactly `identity` (no sibling keywords merged onto it), so results may be reused. */
  exact: boolean;
  /** The last component name on the way, e.g. `Dataset`. */
  ref?: string;
  nullable: boolean;
}

// Keywords that only document; they never change which values are valid.
const ANNOTATIONS = new Set(["description", "title", "examples", "example", "$comment", "deprecated", "externalDocs"]);

/** Follows `$ref`s and nullable wrappers. Sibling keywords next to a `$ref` (3.1) apply too. */
export function resolveSchema(doc: Doc, raw: unknown): ResolvedSchema {
  let nullable = false;
  let ref: string | undefined;
  let overlay: Node = {};
  const seen = new Set<string>();
  let node: unknown = raw;
  for (;;) {
    if (node === false) {
      node = { not: {} };
      break;
    }
    if (!isObject(node)) {
      node = {};
      break;
    }
    if (typeof node.$ref === "string") {
      // A cycle of pure aliases describes nothing; treat it as "anything".
      if (seen.has(node.$ref)) {
        node = {};
        break;
      }
      seen.add(node.$ref);
      const { $ref, ...siblings } = node;
      overlay = { ...withoutAnnotations(siblings), ...overlay };
      ref = refName($ref);
      node = lookupPointer(doc, $ref);
      continue;
    }
    const peeled = peelNullable(node);
    if (peeled !== undefined) {
      nullable = true;
      overlay = { ...withoutAnnotations(peeled.outer), ...overlay };
      node = peeled.schema;
      continue;
    }
    const known = peelKnownValues(doc, node);
    if (known !== undefined) {
      node = known;
      continue;
    }
    break;
  }
  const identity = node as Node;
  let schema: Node = Object.keys(overlay).length > 0 ? { ...identity, ...overlay } : identity;
  if (Array.isArray(schema.type) && schema.type.includes("null") && schema.type.length > 1) {
    nullable = true;
    const rest = (schema.type as string[]).filter((t) => t !== "null");
    schema = { ...schema, type: rest.length === 1 ? rest[0] : rest };
  }
  if (Array.isArray(schema.enum) && schema.enum.includes(null) && schema.enum.length > 1) {
    nullable = true;
    schema = { ...schema, enum: schema.enum.filter((v: unknown) => v !== null) };
  }
  return { schema, identity, exact: schema === identity, ref, nullable };
}

function withoutAnnotations(node: Node): Node {
  return Object.fromEntries(Object.entries(node).filter(([k]) => !ANNOTATIONS.has(k)));
}

function isNullSchema(node: unknown): boolean {
  if (!isObject(node)) return false;
  if (node.type === "null") return true;
  if ("const" in node && node.const === null) return true;
  return Array.isArray(node.enum) && node.enum.length === 1 && node.enum[0] === null;
}

/** `anyOf: [X, {type: null}]` → X (with the wrapper's other keywords as `outer`). */
function peelNullable(node: Node): { schema: unknown; outer: Node } | undefined {
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = node[key];
    if (!Array.isArray(branches) || branches.length < 2) continue;
    const nonNull = branches.filter((b) => !isNullSchema(b));
    if (nonNull.length === branches.length || nonNull.length === 0) continue;
    const { [key]: _branches, ...outer } = node;
    const onlyAnnotations = Object.keys(outer).every((k) => ANNOTATIONS.has(k) || k === "default");
    if (nonNull.length === 1 && onlyAnnotations) return { schema: nonNull[0], outer };
    return { schema: { ...outer, [key]: nonNull }, outer: {} };
  }
  return undefined;
}

export interface Bound {
  value: number;
  exclusive: boolean;
}

export type Openness = "open" | "closed" | "map";

/** A schema reduced to what the rules compare. Child schemas stay raw (resolved on demand). */
export interface NormalSchema {
  /** Accepted JSON types (null excluded); undefined when any type is accepted. */
  types?: Set<JsonType>;
  /** Allowed values (`enum`, `const`, or a union of them); undefined when not restricted. */
  values?: unknown[];
  properties: Map<string, unknown>;
  required: Set<string>;
  /** Undeclared properties: allowed (`open`), rejected (`closed`) or checked against `additional` (`map`). */
  openness: Openness;
  additional?: unknown;
  items?: unknown;
  /** Branches of an `anyOf`/`oneOf` that is not just a list of values. */
  variants?: unknown[];
  counts: Partial<Record<CountKeyword, number>>;
  maximum?: Bound;
  minimum?: Bound;
  multipleOf?: number;
  pattern?: string;
  format?: string;
  uniqueItems: boolean;
  hasDefault: boolean;
  default?: unknown;
  /** The union is a `oneOf` (exactly one branch may match), not an `anyOf`. */
  exclusive: boolean;
  /** JSON Schema 2020-12 applicators and assertions, compared by their own rules. */
  contains?: unknown;
  minContains?: number;
  maxContains?: number;
  prefixItems?: unknown[];
  /** `items: false` or `unevaluatedItems: false`: no item beyond `prefixItems`. */
  itemsClosed: boolean;
  dependentRequired?: Record<string, string[]>;
  dependentSchemas?: Record<string, unknown>;
  conditional?: { if: unknown; then?: unknown; else?: unknown };
  propertyNames?: unknown;
  patternProperties?: Record<string, unknown>;
  not?: unknown;
  /** Properties left out in this direction (readOnly in requests, writeOnly in responses). */
  hidden: Set<string>;
}

export const COUNT_KEYWORDS = [
  "maxLength",
  "minLength",
  "maxItems",
  "minItems",
  "maxProperties",
  "minProperties",
] as const;
export type CountKeyword = (typeof COUNT_KEYWORDS)[number];

export function normalize(doc: Doc, schema: Node, depth = 0): NormalSchema {
  const own = normalizeOwn(doc, schema);
  if (!Array.isArray(schema.allOf) || depth > 16) return own;
  // allOf: every member applies; merge their declarations under the schema's own.
  let merged = own;
  for (const member of schema.allOf) {
    const resolved = resolveSchema(doc, member);
    merged = mergeAllOf(merged, normalize(doc, resolved.schema, depth + 1), schema);
  }
  return merged;
}

function mergeAllOf(own: NormalSchema, member: NormalSchema, ownRaw: Node): NormalSchema {
  const ownSaysOpenness = "unevaluatedProperties" in ownRaw || "additionalProperties" in ownRaw;
  return {
    ...member,
    ...definedOnly(own),
    types: own.types ?? member.types,
    values: own.values ?? member.values,
    properties: new Map([...member.properties, ...own.properties]),
    required: new Set([...member.required, ...own.required]),
    openness: ownSaysOpenness ? own.openness : member.openness,
    additional: ownSaysOpenness ? own.additional : member.additional,
    counts: { ...member.counts, ...own.counts },
    uniqueItems: own.uniqueItems || member.uniqueItems,
    exclusive: own.variants !== undefined ? own.exclusive : member.exclusive,
    itemsClosed: own.itemsClosed || member.itemsClosed,
    hidden: new Set([...member.hidden, ...own.hidden]),
    hasDefault: own.hasDefault || member.hasDefault,
    default: own.hasDefault ? own.default : member.default,
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function normalizeOwn(doc: Doc, schema: Node): NormalSchema {
  const properties = new Map<string, unknown>(Object.entries(isObject(schema.properties) ? schema.properties : {}));
  const { openness, additional } = readOpenness(schema);
  const { values, variants } = readUnion(doc, schema);
  const counts: Partial<Record<CountKeyword, number>> = {};
  for (const keyword of COUNT_KEYWORDS) if (typeof schema[keyword] === "number") counts[keyword] = schema[keyword];
  return {
    types: readTypes(schema, values, properties, variants),
    values,
    properties,
    required: new Set(Array.isArray(schema.required) ? schema.required : []),
    openness,
    additional,
    items: schema.items === false || schema.items === true ? undefined : schema.items,
    variants,
    exclusive: variants !== undefined && !Array.isArray(schema.anyOf) && Array.isArray(schema.oneOf),
    itemsClosed: schema.items === false || schema.unevaluatedItems === false,
    hidden: new Set(),
    ...keywords2020(schema),
    counts,
    maximum: readBound(schema.maximum, schema.exclusiveMaximum, Math.min),
    minimum: readBound(schema.minimum, schema.exclusiveMinimum, Math.max),
    multipleOf: typeof schema.multipleOf === "number" ? schema.multipleOf : undefined,
    pattern: typeof schema.pattern === "string" ? schema.pattern : undefined,
    format: typeof schema.format === "string" ? schema.format : undefined,
    uniqueItems: schema.uniqueItems === true,
    hasDefault: "default" in schema,
    default: schema.default,
  };
}

function numberOr(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}

/** The 2020-12 keywords, each only when present. */
function keywords2020(schema: Node): Partial<NormalSchema> {
  const out: Partial<NormalSchema> = {};
  if ("contains" in schema) {
    out.contains = schema.contains;
    out.minContains = numberOr(schema.minContains) ?? 1;
    const max = numberOr(schema.maxContains);
    if (max !== undefined) out.maxContains = max;
  }
  if (Array.isArray(schema.prefixItems)) out.prefixItems = schema.prefixItems;
  if (isObject(schema.dependentRequired))
    out.dependentRequired = Object.fromEntries(
      Object.entries(schema.dependentRequired).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : []]),
    );
  if (isObject(schema.dependentSchemas)) out.dependentSchemas = schema.dependentSchemas;
  if ("if" in schema && ("then" in schema || "else" in schema))
    out.conditional = {
      if: schema.if,
      ...("then" in schema ? { then: schema.then } : {}),
      ...("else" in schema ? { else: schema.else } : {}),
    };
  if ("propertyNames" in schema) out.propertyNames = schema.propertyNames;
  if (isObject(schema.patternProperties)) out.patternProperties = schema.patternProperties;
  if ("not" in schema && !(isObject(schema.not) && Object.keys(schema.not).length === 0)) out.not = schema.not;
  return out;
}

/** `maximum` and `exclusiveMaximum` (a number in 3.1) as one effective bound. */
function readBound(
  inclusive: unknown,
  exclusive: unknown,
  tighter: (a: number, b: number) => number,
): Bound | undefined {
  const i = typeof inclusive === "number" ? inclusive : undefined;
  const e = typeof exclusive === "number" ? exclusive : undefined;
  if (i === undefined && e === undefined) return undefined;
  if (i === undefined) return { value: e!, exclusive: true };
  if (e === undefined) return { value: i, exclusive: false };
  const value = tighter(i, e);
  return { value, exclusive: value === e };
}

function readOpenness(schema: Node): { openness: Openness; additional?: unknown } {
  const rule = "unevaluatedProperties" in schema ? schema.unevaluatedProperties : schema.additionalProperties;
  if (rule === undefined || rule === true || (isObject(rule) && Object.keys(rule).length === 0))
    return { openness: "open" };
  if (
    rule === false ||
    (isObject(rule) && isObject(rule.not) && Object.keys(rule.not).length === 0 && Object.keys(rule).length === 1)
  ) {
    return { openness: "closed" };
  }
  return { openness: "map", additional: rule };
}

/** A branch that only lists values: `{type: string, enum: [a]}` or `{const: a}`. */
function valuesOf(doc: Doc, branch: unknown): unknown[] | undefined {
  const { schema } = resolveSchema(doc, branch);
  const keys = Object.keys(schema).filter((k) => !ANNOTATIONS.has(k));
  if (!keys.every((k) => k === "enum" || k === "const" || k === "type")) return undefined;
  if (Array.isArray(schema.enum)) return schema.enum;
  if ("const" in schema) return [schema.const];
  return undefined;
}

function isBareType(doc: Doc, branch: unknown): JsonType | undefined {
  const { schema } = resolveSchema(doc, branch);
  const keys = Object.keys(schema).filter((k) => !ANNOTATIONS.has(k));
  return keys.length === 1 && keys[0] === "type" && typeof schema.type === "string"
    ? (schema.type as JsonType)
    : undefined;
}

function readUnion(doc: Doc, schema: Node): { values?: unknown[]; variants?: unknown[] } {
  let values: unknown[] | undefined;
  if (Array.isArray(schema.enum)) values = [...schema.enum];
  else if ("const" in schema) values = [schema.const];
  const branches = unionBranches(schema);
  if (branches === undefined) return { values };
  const listed = branches.map((b) => valuesOf(doc, b));
  if (listed.every((v) => v !== undefined)) {
    return { values: uniqueValues([...(values ?? []), ...listed.flatMap((v) => v!)]) };
  }
  return { values, variants: branches };
}

function unionBranches(schema: Node): unknown[] | undefined {
  if (Array.isArray(schema.anyOf)) return schema.anyOf;
  if (Array.isArray(schema.oneOf)) return schema.oneOf;
  return undefined;
}

/**
 * `string | "a" | "b"` (an open set with known values) accepts any string: the value
 * branches are documentation. Drops them; a single remaining branch is the schema.
 */
function peelKnownValues(doc: Doc, node: Node): Node | undefined {
  const key = Array.isArray(node.anyOf) ? "anyOf" : Array.isArray(node.oneOf) ? "oneOf" : undefined;
  if (key === undefined) return undefined;
  const branches = node[key] as unknown[]; // checked by Array.isArray above
  const bareTypes = new Set(branches.map((b) => isBareType(doc, b)).filter((t): t is JsonType => t !== undefined));
  if (bareTypes.size === 0) return undefined;
  const kept = branches.filter((branch) => {
    const values = valuesOf(doc, branch);
    return values === undefined || !values.every((v) => acceptsType(bareTypes, jsonTypeOf(v)));
  });
  if (kept.length === branches.length) return undefined;
  const { [key]: _branches, ...outer } = node;
  const onlyAnnotations = Object.keys(outer).every((k) => ANNOTATIONS.has(k) || k === "default");
  if (kept.length === 1 && onlyAnnotations && isObject(kept[0])) return { ...outer, ...kept[0] };
  return { ...outer, [key]: kept };
}

function uniqueValues(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = canonical(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "object") return "object";
  return typeof value as JsonType;
}

function readTypes(
  schema: Node,
  values: unknown[] | undefined,
  properties: Map<string, unknown>,
  variants: unknown[] | undefined,
): Set<JsonType> | undefined {
  if (typeof schema.type === "string") return new Set([schema.type as JsonType]);
  if (Array.isArray(schema.type)) return new Set(schema.type as JsonType[]);
  if (values !== undefined) return new Set(values.map(jsonTypeOf).filter((t) => t !== "null"));
  if (variants !== undefined) return undefined;
  if (
    properties.size > 0 ||
    ["additionalProperties", "unevaluatedProperties", "required", "patternProperties", "propertyNames"].some(
      (k) => k in schema,
    ) ||
    ["dependentRequired", "dependentSchemas"].some((k) => k in schema)
  )
    return new Set(["object"]);
  if (["items", "prefixItems", "contains", "unevaluatedItems"].some((k) => k in schema)) return new Set(["array"]);
  return undefined;
}

/** Whether `set` accepts values of type `type` (an integer is a number). */
export function acceptsType(set: Set<JsonType> | undefined, type: JsonType): boolean {
  return set === undefined || set.has(type) || (type === "integer" && set.has("number"));
}

export function isObjectLike(schema: NormalSchema): boolean {
  return schema.types === undefined ? schema.properties.size > 0 : schema.types.has("object");
}
