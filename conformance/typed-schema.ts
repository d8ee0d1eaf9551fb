/**
 * The kit's files (transcripts, profiles) are checked against JSON Schemas typed with
 * ajv's `JSONSchemaType<T>`, so tsc refuses a schema that drifts from the type the kit
 * reads; a value that passes is a T without a cast. Schemas are compiled once, when the
 * module that declares them loads. A failure is said as the field's dotted path and the
 * problem in plain words (contract.ts's plainSchemaError), for the caller to prefix with
 * the file.
 */
import { Ajv, type ErrorObject, type JSONSchemaType } from "ajv";
import { plainSchemaError } from "./contract.ts";

// strictTypes off: a number that may also be written as a template is `type: [integer, string]`
// with a `pattern` that only strings obey, which strictTypes reports as a mistake. verbose:
// an error carries the schema node it failed at, for that node's `problem`.
const ajv = new Ajv({ strict: true, strictTypes: false, allErrors: false, verbose: true });
/**
 * An annotation: how to say that the value at this node is wrong (`must be {id, key}`), or,
 * on a property, that it is missing; said after the field's dotted path.
 */
ajv.addKeyword({ keyword: "problem", schemaType: "string" });

const BASE = "https://conformance-kit.invalid/";
ajv.addSchema({ $id: `${BASE}anything.json` });
ajv.addSchema({ $id: `${BASE}list.json`, type: "array" });

/**
 * JSONSchemaType cannot spell `unknown`, nor a union in an optional field: such a field
 * refers by `$ref` to a schema registered here (a property may always be `{ $ref }`).
 */
export const ANY_VALUE = { $ref: `${BASE}anything.json` } as const;
/** A list of anything (`unknown[]`). */
export const ANY_LIST = { $ref: `${BASE}list.json` } as const;

/** Registers `schema` (still typed against T) under `name`, for a field to refer to. */
export function refTo<T>(name: string, schema: JSONSchemaType<T>): { $ref: string } {
  const $id = `${BASE}${name}.json`;
  ajv.addSchema({ ...schema, $id });
  return { $ref: $id };
}

/** What is wrong and where: `poll.maxAttempts` and `must be an integer or a string`. */
export interface SchemaProblem {
  /** The dotted path of the field ("" for the value itself). */
  field: string;
  text: string;
  /** Set when the field is a key the schema does not know (`additionalProperties` or `propertyNames`). */
  unknownKey?: string;
}

export type SchemaCheck<T> = (value: unknown) => { ok: true; value: T } | { ok: false; problem: SchemaProblem };

export function compileCheck<T>(schema: JSONSchemaType<T>): SchemaCheck<T> {
  const validate = ajv.compile(schema);
  return (value) => {
    if (validate(value)) return { ok: true, value };
    const error = mostSpecific(validate.errors ?? []);
    return { ok: false, problem: error === undefined ? { field: "", text: "is invalid" } : problemOf(error) };
  };
}

/** `steps[2]: request.method must be a string`: the problem after `prefix` (a place that ends in the field's parent). */
export function describeProblem({ field, text }: SchemaProblem, prefix = ""): string {
  const name = [prefix, field].filter((s) => s !== "").join(".");
  return name === "" ? text : `${name} ${text}`;
}

/** Of an anyOf's failures, the one deepest in the value: where the written value went astray. */
function mostSpecific(errors: ErrorObject[]): ErrorObject | undefined {
  const depth = (e: ErrorObject) => e.instancePath.split("/").length + (e.keyword === "required" ? 1 : 0);
  return errors
    .filter((e) => e.keyword !== "anyOf")
    .reduce<ErrorObject | undefined>((best, e) => (best === undefined || depth(e) > depth(best) ? e : best), undefined);
}

function problemOf(error: ErrorObject): SchemaProblem {
  const { message, pointer } = plainSchemaError(error);
  const at = dotted(error.instancePath);
  const params = error.params as { missingProperty?: string; additionalProperty?: string; propertyName?: string };
  // A name refused by `propertyNames` is on the error itself (its inner error) or in its params.
  const unknownKey = params.additionalProperty ?? error.propertyName ?? params.propertyName;
  if (unknownKey !== undefined) return { field: join(at, unknownKey), text: "is not a known field", unknownKey };
  const node = error.parentSchema as
    { problem?: string; properties?: Record<string, { problem?: string }> } | undefined;
  if (error.keyword === "required") {
    const missing = String(params.missingProperty);
    return { field: join(at, missing), text: node?.properties?.[missing]?.problem ?? "is required" };
  }
  return { field: dotted(pointer), text: node?.problem ?? message };
}

function dotted(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
}

function join(parent: string, key: string): string {
  return parent === "" ? key : `${parent}.${key}`;
}
