/**
 * JSON the server reads back from its own rows and files (stored job records, trainer
 * checkpoints, adapter headers) is checked, not cast: against a JSON Schema typed with
 * ajv's `JSONSchemaType<T>`, so tsc refuses a schema that drifts from the type it checks.
 * Each schema is compiled once, when its module loads (the job record check runs for every
 * row a job listing reads). Corrupt data fails at once with a message naming where it was
 * read and the field, instead of a TypeError three calls later.
 */
import { Ajv, type ErrorObject, type JSONSchemaType } from "ajv";

// One instance for every schema: ajv caches compiled code per instance. strict catches a
// misspelt keyword in a schema here at start-up; a first error is all a message needs.
const ajv = new Ajv({ strict: true, allErrors: false });

/** Stored data that does not have the shape its reader needs. */
export class CorruptDataError extends Error {
  override name = "CorruptDataError";
  /** Where the data was read: a file, a table row. */
  readonly source: string;
  /** The field at fault, dotted (`config.epochs`); "" for the whole value (the message is then `{source} {problem}`). */
  readonly field: string;

  constructor(source: string, field: string, problem: string) {
    super(field === "" ? `${source} ${problem}` : `${source}: ${field} ${problem}`);
    this.source = source;
    this.field = field;
  }
}

/** The keys of T a value must have (an optional property's type admits undefined). */
type RequiredKey<T> = { [K in keyof T]-?: undefined extends T[K] ? never : K }[keyof T];

/**
 * A schema's `required` list, checked complete by tsc: JSONSchemaType checks that each
 * listed key is a required one, not that none is left out
 * (`requiredKeys<JobRecord>()(["jobId"])` names the keys it lacks).
 */
export function requiredKeys<T>() {
  return <const K extends RequiredKey<T>>(
    keys: readonly K[] &
      ([Exclude<RequiredKey<T>, K>] extends [never] ? unknown : { missing: Exclude<RequiredKey<T>, K> }),
  ): readonly K[] => keys;
}

/** Returns `value` as a T when it matches, or throws a CorruptDataError naming `source` and the field. */
export type JsonCheck<T> = (value: unknown, source: string) => T;

export function compileCheck<T>(schema: JSONSchemaType<T>): JsonCheck<T> {
  const validate = ajv.compile(schema);
  return (value, source) => {
    if (validate(value)) return value;
    const error = validate.errors?.[0];
    throw error === undefined ? new CorruptDataError(source, "", "is invalid") : corruptionOf(source, error);
  };
}

function corruptionOf(source: string, error: ErrorObject): CorruptDataError {
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const params = error.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
  if (params.missingProperty !== undefined)
    return new CorruptDataError(source, [...path, params.missingProperty].join("."), "is missing");
  if (params.additionalProperty !== undefined)
    return new CorruptDataError(source, [...path, params.additionalProperty].join("."), "is not a known field");
  const allowed = params.allowedValues?.map((v) => JSON.stringify(v)).join(", ");
  const problem = allowed === undefined ? (error.message ?? "is invalid") : `must be one of ${allowed}`;
  return new CorruptDataError(source, path.join("."), problem);
}
