/**
 * Parameters are text on the wire (`?limit=10`, `X-Retry: 3`): a value's JSON type only
 * says which strings parse. So a parameter whose type changes is judged by which texts
 * stay valid: string → integer narrows (`abc` is now refused), integer → string widens
 * (every integer is a string), integer → boolean changes. An enum `[1, 2]` and an enum
 * `["1", "2"]` are the same texts. Only used for parameters with a `schema`
 * (`content` parameters are serialized documents, compared as JSON).
 */
import type { Change, Effect } from "../../model.ts";
import type { JsonType, NormalSchema } from "../../schema.ts";
import { defineDirectionalRules, schemaChange } from "../directional.ts";
import { effectivePattern } from "./pattern.ts";
import { showTypes } from "./type.ts";

const rules = defineDirectionalRules({
  keyword: "parameter-text",
  verbs: { narrowed: "narrowed", widened: "widened", changed: "changed" },
  what: {
    narrowed: "the parameter accepts fewer texts on the wire (string → integer, repeated values → one)",
    widened: "the parameter accepts more texts on the wire (integer → string, one value → repeated values)",
    changed: "the parameter's texts on the wire were replaced (integer → boolean)",
  },
});

export const wireTextRules = [rules.request.narrowed!, rules.request.widened!, rules.request.changed!];

const SCALARS: ReadonlySet<JsonType> = new Set(["string", "number", "integer", "boolean"]);

function isScalar(schema: NormalSchema): boolean {
  return schema.types !== undefined && schema.types.size > 0 && [...schema.types].every((t) => SCALARS.has(t));
}

/** A string that accepts any text: no values, pattern, format or length limits. */
function isFreeString(schema: NormalSchema): boolean {
  return (
    schema.types?.has("string") === true &&
    schema.values === undefined &&
    effectivePattern(schema.pattern) === undefined &&
    schema.format === undefined &&
    schema.counts.maxLength === undefined &&
    (schema.counts.minLength ?? 0) <= 1
  );
}

const TEXT: Record<string, RegExp> = {
  integer: /^-?\d+$/,
  number: /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/,
  boolean: /^(true|false)$/,
};

/** Whether every text `inner` accepts is accepted by `outer` (undefined: cannot tell). */
function textsIncluded(inner: NormalSchema, outer: NormalSchema): boolean | undefined {
  if (isFreeString(outer)) return true;
  if (inner.values !== undefined) {
    const texts = inner.values.map(String);
    if (outer.values !== undefined) {
      const allowed = new Set(outer.values.map(String));
      return texts.every((t) => allowed.has(t));
    }
    const pattern = [...(outer.types ?? [])].map((t) => TEXT[t]).filter((p) => p !== undefined);
    if (pattern.length === 0) return undefined;
    return texts.every((t) => pattern.some((p) => p.test(t)));
  }
  if (outer.values !== undefined || isFreeString(inner)) return false;
  const innerTypes = [...(inner.types ?? [])];
  const outerTypes = outer.types ?? new Set<JsonType>();
  const covered = (t: JsonType) => outerTypes.has(t) || (t === "integer" && outerTypes.has("number"));
  if (innerTypes.every(covered)) return true;
  return innerTypes.some((t) => t === "string") ? false : undefined;
}

/**
 * The change when the texts of two scalar parameter schemas differ in kind; `undefined`
 * when the schemas have the same type (the ordinary rules compare their limits).
 */
export function compareWireText(base: NormalSchema, head: NormalSchema): Change[] | undefined {
  if (!isScalar(base) || !isScalar(head)) return undefined;
  const sameTypes = showTypes(base.types) === showTypes(head.types);
  const valuesAsText = (s: NormalSchema) => s.values?.map(String).sort().join("\u0000");
  if (sameTypes) return undefined;
  if (base.values !== undefined && head.values !== undefined && valuesAsText(base) === valuesAsText(head)) return [];
  const headHoldsBase = textsIncluded(base, head);
  const baseHoldsHead = textsIncluded(head, base);
  let effect: Effect;
  if (headHoldsBase === true && baseHoldsHead === true) return [];
  else if (headHoldsBase === true) effect = "widened";
  else if (baseHoldsHead === true) effect = "narrowed";
  else effect = "changed";
  return [wireTextChange(effect, `${describe(base)} → ${describe(head)}`)];
}

export function wireTextChange(effect: Effect, message: string): Change {
  return schemaChange(rules.request[effect]!, `text on the wire: ${message}`);
}

function describe(schema: NormalSchema): string {
  if (schema.values !== undefined) return schema.values.map((v) => JSON.stringify(v)).join(" | ");
  return showTypes(schema.types) + (schema.pattern !== undefined ? ` /${schema.pattern}/` : "");
}
