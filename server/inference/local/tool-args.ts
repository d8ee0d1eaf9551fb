/**
 * Arguments for a function call, built to satisfy the tool's JSON Schema. The tiny
 * model cannot reliably write JSON, so values are taken from the user's message where
 * one can be found (quoted strings, words after the property's name, capitalised words,
 * numbers, mentioned enum values) and otherwise from text the model generates; required
 * properties are always filled, optional ones only when the message supplies a value.
 *
 * Supported schema: object/properties/required, string (enum, const, min/maxLength),
 * number and integer (minimum/maximum), boolean, array (items, minItems), nested
 * objects, `type` lists and anyOf/oneOf (first non-null branch). `pattern` and
 * `format` are not honoured.
 */

type Schema = Record<string, unknown>;

/** Where values come from: the user's message, and model text on demand. */
export interface ArgumentSource {
  message: string;
  /** Short model-generated text, used for required strings the message does not supply. */
  generated: string;
}

export function buildArguments(parameters: Schema | undefined, source: ArgumentSource): Record<string, unknown> {
  return parameters === undefined ? {} : fillObject(parameters, source, new MessageCursor(source.message));
}

/** Quoted strings and numbers of the message, handed out in order to the properties that take them. */
class MessageCursor {
  readonly quoted: string[];
  readonly numbers: number[];

  constructor(message: string) {
    this.quoted = [...message.matchAll(/"([^"]+)"|“([^”]+)”|'([^']+)'/g)].map((m) => (m[1] ?? m[2] ?? m[3])!);
    this.numbers = [...message.matchAll(/-?\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));
  }
}

function resolve(schema: Schema): Schema {
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) {
    return branches.find((b) => b.type !== "null") ?? branches[0]!;
  }
  return schema;
}

function typeOf(schema: Schema): string {
  const t = schema.type;
  if (Array.isArray(t)) return (t.find((x) => x !== "null") as string | undefined) ?? "null";
  if (typeof t === "string") return t;
  if (schema.properties !== undefined) return "object";
  if (Array.isArray(schema.enum)) return typeof schema.enum[0];
  return "string";
}

function fillObject(schema: Schema, source: ArgumentSource, cursor: MessageCursor): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(properties)) {
    const value = fillValue(name, resolve(raw), source, cursor, required.has(name));
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** A value for one property, or undefined when it is optional and the message has none. */
function fillValue(
  name: string,
  schema: Schema,
  source: ArgumentSource,
  cursor: MessageCursor,
  required: boolean,
): unknown {
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum))
    return mentionedEnum(schema.enum, source.message) ?? (required ? schema.enum[0] : undefined);
  switch (typeOf(schema)) {
    case "string":
      return fillString(name, schema, source, cursor, required);
    case "number":
    case "integer":
      return fillNumber(schema, cursor, required);
    case "boolean":
      return fillBoolean(name, source.message, required);
    case "array":
      return fillArray(name, schema, source, cursor, required);
    case "object":
      return required || mentions(source.message, name) ? fillObject(schema, source, cursor) : undefined;
    case "null":
      return required ? null : undefined;
    default:
      return undefined;
  }
}

function mentionedEnum(values: unknown[], message: string): unknown {
  const lower = message.toLowerCase();
  let best: { value: unknown; at: number } | undefined;
  for (const value of values) {
    const at = wordIndex(lower, String(value).toLowerCase());
    if (at >= 0 && (best === undefined || at < best.at)) best = { value, at };
  }
  return best?.value;
}

function fillString(
  name: string,
  schema: Schema,
  source: ArgumentSource,
  cursor: MessageCursor,
  required: boolean,
): string | undefined {
  let value = cursor.quoted.shift() ?? wordsAfterName(source.message, name) ?? capitalisedWord(source.message);
  if (value === undefined) {
    if (!required) return undefined;
    value = source.generated;
  }
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Infinity;
  if (value.length < min) value = value.padEnd(min, ".");
  return value.slice(0, max);
}

/** "city Paris", "query: cheap flights" → the (up to four) words after the property's name. */
function wordsAfterName(message: string, name: string): string | undefined {
  const label = escapeRegExp(name.replace(/[_-]+/g, " ")).replace(/ /g, "[\\s_-]+");
  const match = new RegExp(`\\b${label}\\b\\s*(?:is|=|:|of|for)?\\s*([^.,;!?\\n]+)`, "i").exec(message);
  const words = match?.[1]?.trim().split(/\s+/).slice(0, 4).join(" ");
  return words === undefined || words.length === 0 ? undefined : words;
}

/** A capitalised word that is not the message's first word (a name, a city, …), with the next one if also capitalised. */
function capitalisedWord(message: string): string | undefined {
  const match = /(?<=\s)([A-Z][\p{L}'-]+(?:\s[A-Z][\p{L}'-]+)?)/u.exec(message);
  return match?.[1]?.replace(/'s$/, "");
}

function fillNumber(schema: Schema, cursor: MessageCursor, required: boolean): number | undefined {
  const taken = cursor.numbers.shift();
  if (taken === undefined && !required) return undefined;
  const min = typeof schema.minimum === "number" ? schema.minimum : undefined;
  const max = typeof schema.maximum === "number" ? schema.maximum : undefined;
  let value = taken ?? min ?? 0;
  if (schema.type === "integer" || (Array.isArray(schema.type) && schema.type.includes("integer")))
    value = Math.round(value);
  if (min !== undefined && value < min) value = min;
  if (max !== undefined && value > max) value = max;
  return value;
}

function fillBoolean(name: string, message: string, required: boolean): boolean | undefined {
  const lower = message.toLowerCase();
  if (!mentions(lower, name)) return required ? false : undefined;
  return !/\b(no|not|false|without|disable)\b/.test(lower);
}

function fillArray(
  name: string,
  schema: Schema,
  source: ArgumentSource,
  cursor: MessageCursor,
  required: boolean,
): unknown[] | undefined {
  const items = resolve((schema.items ?? {}) as Schema);
  const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
  const first = fillValue(name, items, source, cursor, minItems > 0);
  if (first === undefined) return required ? [] : undefined;
  const values: unknown[] = [first];
  while (values.length < minItems) values.push(fillValue(name, items, source, cursor, true));
  return values;
}

function mentions(message: string, name: string): boolean {
  return (
    wordIndex(message.toLowerCase(), name.toLowerCase().replace(/[_-]+/g, " ")) >= 0 ||
    wordIndex(message.toLowerCase(), name.toLowerCase()) >= 0
  );
}

/** Index of `word` in `text` as a whole word (case already folded), or -1. */
export function wordIndex(text: string, word: string): number {
  if (word.length === 0) return -1;
  const match = new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(word)}(?![\\p{L}\\p{N}_])`, "u").exec(text);
  return match === null ? -1 : match.index;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
