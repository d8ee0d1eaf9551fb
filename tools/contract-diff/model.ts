/**
 * The vocabulary of the contract diff: rules, their levels and classes, and the changes
 * they report.
 *
 * A change is judged from the two parties built against the base contract:
 * - **clients** send base-valid requests and read base-shaped responses;
 * - **implementations** (this repo's server or any other one the conformance kit tests)
 *   accept base-valid requests and send base-valid responses.
 * Narrowing what a request may be or widening what a response may be breaks clients;
 * the opposite breaks implementations. See docs/contract-review.md.
 */

/** ERR: a definite break. WARN: may break, undecidable from the documents. INFO: compatible. */
export type Level = "ERR" | "WARN" | "INFO";
export const LEVELS: readonly Level[] = ["INFO", "WARN", "ERR"];

export function levelRank(level: Level): number {
  return LEVELS.indexOf(level);
}

/** Who a change breaks; `none` is a compatible change. */
export type Breaks = "clients" | "implementations" | "both" | "none";

export function breaksClients(breaks: Breaks): boolean {
  return breaks === "clients" || breaks === "both";
}

export function breaksImplementations(breaks: Breaks): boolean {
  return breaks === "implementations" || breaks === "both";
}

export function describeBreaks(breaks: Breaks): string {
  switch (breaks) {
    case "clients":
      return "breaking for clients";
    case "implementations":
      return "breaking for implementations";
    case "both":
      return "breaking for clients and implementations";
    case "none":
      return "compatible";
  }
}

export interface Rule {
  /** Stable id, used in the ignore file and `--list-rules`. */
  readonly id: string;
  readonly level: Level;
  readonly breaks: Breaks;
  readonly description: string;
}

export function defineRule(rule: Rule): Rule {
  if (rule.breaks === "none" && rule.level !== "INFO") throw new Error(`${rule.id}: a compatible rule is INFO`);
  if (rule.breaks !== "none" && rule.level === "INFO") throw new Error(`${rule.id}: a breaking rule is ERR or WARN`);
  return Object.freeze({ ...rule });
}

/** Whether a schema describes what a client sends (request) or what it receives (response). */
export type Direction = "request" | "response";

/**
 * What a change does to the set of values a schema accepts. `changed` is neither a subset
 * nor a superset (e.g. a new pattern, a type swapped for another).
 */
export type Effect = "narrowed" | "widened" | "changed";

/**
 * Where a change sits by declaration: a component name followed by property names
 * (`["Dataset", "name"]`), `[]` for array items, `*` for map values and `<…>` for a union
 * variant. Used for display, grouping and finding the .tsp line. Each side has its own,
 * since a model may be renamed.
 */
export interface Declared {
  base?: string[];
  head?: string[];
}

export interface Change {
  rule: Rule;
  /** What changed, readable on its own, e.g. "maxLength 64 → 32". */
  message: string;
  before?: unknown;
  after?: unknown;
  /** `METHOD /path` of the operation (head's path spelling, base's when removed). */
  operation?: string;
  /** The part of the operation, e.g. "request body application/json", "response 200 header x-request-id". */
  part?: string;
  /** JSON path inside the part: property names, `[]` for items, `*` for map values, `<…>` for variants. */
  path: string[];
  declared?: Declared;
}

/** Renders a path like `data[].id` or `input<type=message>.content`. */
export function renderPath(segments: readonly string[]): string {
  let out = "";
  for (const segment of segments) {
    if (segment === "[]" || segment.startsWith("<") || segment.startsWith("[")) out += segment;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}
