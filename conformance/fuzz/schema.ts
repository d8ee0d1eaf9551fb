/**
 * fast-check arbitraries derived from the contract's JSON Schemas (OpenAPI 3.1, i.e.
 * JSON Schema 2020-12): valid instances, and instances with mutations at random nodes.
 *
 * Valid: `$ref`, `enum`/`const`, `anyOf`/`oneOf`/`allOf`, every `type` with its
 * `minLength`/`maxLength`/`pattern`/`format`, `minimum`/`maximum`, `minItems`/`maxItems`,
 * `properties`/`required`. Strings and arrays are kept short; recursion stops at a depth
 * budget (only required properties and minimal arrays below it).
 *
 * Mutated: each node is, with a small probability, replaced by something hostile: a value
 * of the wrong JSON type, a boundary value (min−1, max+1, maxLength+1, 2^31, 2^53+1,
 * 1e400 written as JSON text, -0, 1.5 for an integer), a string off its pattern or enum,
 * a nasty string (lone surrogate, NUL, bidi, 64 KiB), nesting thousands of levels deep,
 * a long array; and objects may lose required properties and gain extra ones (`__proto__`,
 * `constructor`, empty or 1000-character names).
 *
 * Values that JSON.stringify cannot write as intended (1e400, nesting deeper than the
 * serialiser's own stack) are `RawJson` text, written verbatim by `toJsonText`.
 */
import fc from "fast-check";
import type { Schema } from "./operations.ts";

/** JSON text inserted verbatim by `toJsonText`. */
export class RawJson {
  readonly text: string;
  readonly label: string;
  constructor(text: string, label: string) {
    this.text = text;
    this.label = label;
  }
}

export interface SchemaArbitraryOptions {
  /** Follows `$ref`. */
  resolve: (schema: Schema) => Schema;
  /** Weight (out of 100) of a mutation at each node; 0 gives valid instances only. */
  mutationRate: number;
  /** Valid values to use for properties of these names instead of the schema's own. */
  hints?: Record<string, fc.Arbitrary<unknown>>;
  /** Nesting of objects and arrays generated in full (default 5). */
  maxDepth?: number;
  /** Allow megabyte strings and 100k-level nesting among the mutations (default false). */
  huge?: boolean;
  /**
   * Weight (out of 100) of replacing a free-form object (no properties of its own, open to
   * any) with one nested thousands of levels deep, which is still valid (default 4 × mutationRate).
   */
  deepOpenObjects?: number;
  /** Optional properties of these names are always generated (e.g. `max_output_tokens`, to keep generation short). */
  alwaysInclude?: string[];
}

/** An arbitrary of JSON values for `schema` (see the file comment). */
export function schemaArbitrary(schema: Schema, options: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  return new Builder(options).build(schema, options.maxDepth ?? 5, undefined);
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

class Builder {
  readonly #options: SchemaArbitraryOptions;
  constructor(options: SchemaArbitraryOptions) {
    this.#options = options;
  }

  build(schema: Schema, depth: number, name: string | undefined): fc.Arbitrary<unknown> {
    const resolved = this.#options.resolve(schema);
    const valid = this.#valid(resolved, depth, name);
    if (this.#options.mutationRate <= 0) return valid;
    return fc.oneof(
      { weight: 100 - this.#options.mutationRate, arbitrary: valid },
      { weight: this.#options.mutationRate, arbitrary: mutationFor(resolved, this.#options.huge === true) },
    );
  }

  #valid(schema: Schema, depth: number, name: string | undefined): fc.Arbitrary<unknown> {
    const hint = name === undefined ? undefined : this.#options.hints?.[name];
    if (hint) return hint;
    if ("const" in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (union) return fc.oneof(...union.map((branch) => this.build(branch, depth, name)));
    if (Array.isArray(schema.allOf)) {
      const parts = (schema.allOf as Schema[]).map((part) => this.#valid(this.#options.resolve(part), depth, name));
      return fc
        .tuple(...parts)
        .map((values) => Object.assign({}, ...values.filter((v) => typeof v === "object" && v !== null)));
    }
    const types = Array.isArray(schema.type)
      ? (schema.type as string[])
      : schema.type === undefined
        ? undefined
        : [schema.type as string];
    if (types === undefined) return schema.properties ? this.#object(schema, depth) : anyJson(Math.min(depth, 2));
    return fc.oneof(...types.map((type) => this.#typed(type, schema, depth)));
  }

  #typed(type: string, schema: Schema, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case "string":
        return validString(schema);
      case "integer":
        return fc.integer(integerRange(schema));
      case "number": {
        const min = typeof schema.minimum === "number" ? schema.minimum : -1e6;
        const max = typeof schema.maximum === "number" ? schema.maximum : 1e6;
        return fc.oneof(fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(min, max));
      }
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array": {
        const minLength = typeof schema.minItems === "number" ? schema.minItems : 0;
        if (!schema.items) return fc.constant([]);
        // Below the depth budget, arrays are as short as allowed.
        const maxLength =
          depth <= 0
            ? minLength
            : Math.max(minLength, Math.min(typeof schema.maxItems === "number" ? schema.maxItems : 3, 3));
        return fc.array(this.build(schema.items as Schema, depth - 1, undefined), { minLength, maxLength });
      }
      case "object":
        return this.#object(schema, depth);
      default:
        return anyJson(1);
    }
  }

  #object(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required ?? []) as string[]);
    const names = Object.keys(properties).filter((n) => depth > 0 || required.has(n));
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const n of names) model[n] = this.build(properties[n] as Schema, depth - 1, n);
    const always = new Set(this.#options.alwaysInclude ?? []);
    const record = fc.record(model, {
      requiredKeys: names.filter((n) => required.has(n) || always.has(n)),
    }) as fc.Arbitrary<Record<string, unknown>>;
    // Open objects (`unevaluatedProperties: {}` with no properties, e.g. a tool's `parameters`) get some content of their own.
    const open =
      names.length === 0 &&
      schema.unevaluatedProperties !== undefined &&
      !isFalseSchema(schema.unevaluatedProperties as Schema);
    const openValue =
      this.#options.mutationRate > 0
        ? fc.oneof(
            { weight: 100 - this.#options.mutationRate, arbitrary: anyJson(Math.min(depth - 1, 2)) },
            { weight: this.#options.mutationRate, arbitrary: hostileLeaf(this.#options.huge === true) },
          )
        : anyJson(Math.min(depth - 1, 2));
    const base =
      open && depth > 0
        ? fc.dictionary(fc.string({ maxLength: 8 }), openValue, { maxKeys: 3 }).map(definePlain)
        : record;
    const deepWeight = Math.min(90, this.#options.deepOpenObjects ?? 4 * this.#options.mutationRate);
    if (open && deepWeight > 0) {
      // Free-form JSON (a tool's parameter schema, an image source): where nesting thousands deep is valid.
      const levels = this.#options.huge ? [100, 1000, 10_000, 100_000] : [100, 1000, 10_000, 10_000];
      const deep = fc.constantFrom(...levels).map((n) => nestedJson(n, "object"));
      return fc.oneof({ weight: 100 - deepWeight, arbitrary: base }, { weight: deepWeight, arbitrary: deep });
    }
    if (this.#options.mutationRate <= 0) return base;
    // Missing required properties and extra ones, at the same rate as other mutations.
    return fc.oneof(
      { weight: 100 - this.#options.mutationRate, arbitrary: base },
      {
        weight: this.#options.mutationRate,
        arbitrary: fc
          .tuple(
            base,
            fc.subarray([...required]),
            fc.array(fc.tuple(extraKey(), hostileLeaf(this.#options.huge === true)), { maxLength: 3 }),
          )
          .map(([value, drop, extra]) => {
            const copy = definePlain(value);
            for (const key of drop) delete copy[key];
            for (const [key, v] of extra) defineOwn(copy, key, v);
            return copy;
          }),
      },
    );
  }
}

function isFalseSchema(schema: Schema): boolean {
  return (
    typeof schema === "object" && schema !== null && "not" in schema && Object.keys(schema.not as object).length === 0
  );
}

function integerRange(schema: Schema): { min: number; max: number } {
  const int32 = schema.format === "int32";
  const min = typeof schema.minimum === "number" ? schema.minimum : int32 ? INT32_MIN : -1e9;
  const max = typeof schema.maximum === "number" ? schema.maximum : int32 ? INT32_MAX : 1e9;
  return { min, max };
}

/** Short strings honouring length, pattern and format; mostly words, sometimes any Unicode. */
function validString(schema: Schema): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === "number" ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === "number" ? schema.maxLength : Infinity;
  const fits = (s: string) => [...s].length >= minLength && [...s].length <= maxLength;
  if (schema.format === "date-time")
    return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());
  if (typeof schema.pattern === "string") {
    const pattern = new RegExp(schema.pattern as string, "u");
    try {
      return fc.stringMatching(pattern).filter((s) => fits(s) && s.length <= 256);
    } catch {
      return fc.string({ minLength, maxLength: Math.min(maxLength, 24) }).filter((s) => pattern.test(s));
    }
  }
  const cap = Math.max(minLength, Math.min(maxLength, 24));
  const words = fc
    .array(fc.constantFrom("hello", "world", "the", "sea", "tell", "me", "about", "a", "ship", "?", "!", "1", "ok"), {
      minLength: 1,
      maxLength: 6,
    })
    .map((w) => w.join(" "));
  return fc.oneof(
    { weight: 3, arbitrary: words.filter(fits) },
    { weight: 1, arbitrary: fc.string({ minLength, maxLength: cap, unit: "grapheme" }) },
    { weight: 1, arbitrary: fc.string({ minLength, maxLength: cap, unit: "binary" }) },
  );
}

/** Small arbitrary JSON (any type). */
export function anyJson(depth: number): fc.Arbitrary<unknown> {
  return fc
    .jsonValue({ maxDepth: depth })
    .map((v) =>
      typeof v === "object" && v !== null && !Array.isArray(v) ? definePlain(v as Record<string, unknown>) : v,
    );
}

/** A copy of a plain object whose keys are all own, enumerable properties (so `__proto__` stays a key). */
function definePlain(value: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) defineOwn(copy, key, value[key]);
  return copy;
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function extraKey(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      "__proto__",
      "constructor",
      "prototype",
      "toString",
      "hasOwnProperty",
      "valueOf",
      "",
      " ",
      "\u0000",
      "$ref",
      "x".repeat(1000),
      "stream",
      "n\u0303",
      "\ud800",
    ),
    fc.string({ maxLength: 12 }),
  );
}

/** Hostile values to put anywhere. */
function hostileLeaf(huge: boolean): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: wrongTyped() },
    { weight: 3, arbitrary: nastyString(huge) },
    { weight: 2, arbitrary: edgeNumber() },
    { weight: 1, arbitrary: deepNesting(huge) },
    { weight: 1, arbitrary: longArray(huge) },
  );
}

function wrongTyped(): fc.Arbitrary<unknown> {
  return fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, "", "x", "true", "1", [], [null], {}, { a: 1 }, [
    [[]],
  ]);
}

const NASTY = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "\ufeff",
  "\u202e\u202dreversed",
  "\u200b\u200c\u200d",
  "🦀👩‍👩‍👧‍👦",
  "n\u0303\u0303\u0303\u0303",
  "\r\n\r\n",
  "\t\u000b\f",
  "%00%2F%2e%2e",
  "../../etc/passwd",
  "${jndi:ldap://x}",
  "<script>alert(1)</script>",
  "'; DROP TABLE accounts; --",
  "\\u0000",
  "blocked-demo-term",
  "data:image/png;base64,iVBORw0KGgo=",
  "data:;base64,!!!!",
  "http://169.254.169.254/latest/meta-data",
  "file:///etc/passwd",
  "accounts/acme/models/x",
  "accounts/globex/datasets/fz-data/versions/1",
];

function nastyString(huge: boolean): fc.Arbitrary<string> {
  const sizes = huge ? [4096, 65_536, 1_048_576, 4_194_304] : [4096, 65_536];
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...NASTY) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40, unit: "binary" }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...sizes), fc.constantFrom("x", "é", "🦀", "hello ", "\u0000"))
        .map(([n, s]) => s.repeat(Math.ceil(n / s.length))),
    },
  );
}

function edgeNumber(): fc.Arbitrary<unknown> {
  return fc.constantFrom<unknown>(
    0,
    -0,
    -1,
    0.5,
    1.5,
    INT32_MAX,
    INT32_MAX + 1,
    INT32_MIN,
    INT32_MIN - 1,
    Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER,
    1e21,
    1e308,
    -1e308,
    5e-324,
    new RawJson("9007199254740993", "2^53+1"),
    new RawJson("1e400", "1e400"),
    new RawJson("-1e400", "-1e400"),
    new RawJson("1" + "0".repeat(400), "400 digits"),
    new RawJson("1.0", "1.0"),
    new RawJson("1E2", "1E2"),
    new RawJson("-0.0", "-0.0"),
    new RawJson("0." + "0".repeat(400) + "1", "tiny"),
  );
}

/** Nesting `levels` deep, as text: arrays, or objects `{"a":{"a":…}}`. */
export function nestedJson(levels: number, kind: "array" | "object"): RawJson {
  const text =
    kind === "array" ? "[".repeat(levels) + "]".repeat(levels) : '{"a":'.repeat(levels) + "1" + "}".repeat(levels);
  return new RawJson(text, `${kind} nested ${levels} deep`);
}

function deepNesting(huge: boolean): fc.Arbitrary<RawJson> {
  const levels = huge ? [64, 200, 1000, 10_000, 100_000] : [64, 200, 1000, 10_000];
  return fc
    .tuple(fc.constantFrom(...levels), fc.constantFrom<"array" | "object">("array", "object"))
    .map(([n, kind]) => nestedJson(n, kind));
}

function longArray(huge: boolean): fc.Arbitrary<RawJson> {
  return fc
    .constantFrom(...(huge ? [1000, 100_000] : [1000, 10_000]))
    .map((n) => new RawJson(`[${Array.from({ length: n }, () => '"x"').join(",")}]`, `array of ${n}`));
}

/** A hostile replacement for a node of `schema`: off its boundaries, its type, its pattern, or anything. */
function mutationFor(schema: Schema, huge: boolean): fc.Arbitrary<unknown> {
  const edges: unknown[] = [];
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("string") || Array.isArray(schema.enum)) {
    const min = typeof schema.minLength === "number" ? schema.minLength : 0;
    if (typeof schema.maxLength === "number")
      edges.push(
        "a".repeat(schema.maxLength),
        "a".repeat(schema.maxLength + 1),
        "é".repeat(schema.maxLength),
        "🦀".repeat(schema.maxLength),
      );
    if (min > 0) edges.push("a".repeat(min - 1));
    if (typeof schema.pattern === "string") edges.push("NOT a match!", "a\nb", "-");
    if (Array.isArray(schema.enum))
      edges.push(
        ...(schema.enum as unknown[])
          .filter((v) => typeof v === "string")
          .flatMap((v) => [(v as string).toUpperCase(), ` ${v as string}`, `${v as string}\u0000`]),
        "unknown_value",
      );
  }
  if (types.includes("integer") || types.includes("number")) {
    for (const bound of [schema.minimum, schema.maximum])
      if (typeof bound === "number") edges.push(bound - 1, bound, bound + 1, bound + 0.5);
  }
  if (types.includes("array")) {
    if (typeof schema.minItems === "number" && schema.minItems > 0) edges.push([]);
    if (schema.items) edges.push([null], ["x"], [{}]);
    edges.push(nestedJson(10_000, "array"));
  }
  if (types.includes("object")) edges.push({}, nestedJson(10_000, "object"));
  const anyOf = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (anyOf) edges.push({ type: "unknown" }, { type: null });
  return fc.oneof(
    { weight: 3, arbitrary: edges.length > 0 ? fc.constantFrom(...edges) : wrongTyped() },
    { weight: 4, arbitrary: hostileLeaf(huge) },
  );
}

/** JSON text of `value`, with `RawJson` inserted verbatim and own `__proto__` keys kept. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : toJsonText(v))).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const parts: string[] = [];
    for (const key of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) parts.push(`${JSON.stringify(key)}:${toJsonText(v)}`);
    }
    return `{${parts.join(",")}}`;
  }
  if (typeof value === "number" && Object.is(value, -0)) return "-0";
  return JSON.stringify(value) ?? "null";
}

/** A short description of a JSON value for failure reports: long strings and raw text cut. */
export function describeJson(value: unknown, limit = 600): string {
  const text = JSON.stringify(value, (_key, v) => {
    if (v instanceof RawJson) return `<${v.label}>`;
    if (typeof v === "string" && v.length > 80) return `${v.slice(0, 40)}…<${v.length} chars>`;
    return v;
  });
  return text === undefined ? String(value) : text.length > limit ? `${text.slice(0, limit)}…` : text;
}
