/**
 * An answer's parsed JSON as the fuzzer reads it: JSON.parse's own type. The fuzzer meets
 * answers of any shape, reads them field by field with optional chaining, and its checks
 * say what each field must be; a field of another type is a finding, never a crash.
 */
export type Json = ReturnType<typeof JSON.parse>;

/** The text parsed as JSON, or undefined when it is not JSON. */
export function parseJson(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
