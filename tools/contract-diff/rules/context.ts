/** What the document-level rules share: both documents and a schema walker per direction. */
import type { Change } from "../model.ts";
import type { Doc } from "../openapi.ts";
import { schemaDiffContext, type SchemaDiffContext } from "../schema-diff.ts";

/** Policies a team chooses (command-line flags). */
export interface DiffOptions {
  /** The implementations reject unknown query parameters: removing one breaks clients. */
  strictQueryParams: boolean;
  /** `YYYY-MM-DD`: sunset dates (`x-sunset`) are judged against this day. */
  date: string;
}

export interface DiffContext {
  base: Doc;
  head: Doc;
  errorCodes: ReadonlySet<string>;
  options: DiffOptions;
  request: SchemaDiffContext;
  response: SchemaDiffContext;
  /** Parameter values, judged as the text on the wire (rules/schema/wire-text.ts). */
  parameter: SchemaDiffContext;
}

export function diffContext(
  base: Doc,
  head: Doc,
  errorCodes: ReadonlySet<string>,
  options: Partial<DiffOptions> = {},
): DiffContext {
  return {
    base,
    head,
    errorCodes,
    options: { strictQueryParams: false, date: new Date().toISOString().slice(0, 10), ...options },
    request: schemaDiffContext(base, head, "request", errorCodes),
    response: schemaDiffContext(base, head, "response", errorCodes),
    parameter: schemaDiffContext(base, head, "request", errorCodes, { wireText: true }),
  };
}

/** Sets the part (e.g. "parameter query limit") on changes that do not have one yet. */
export function inPart(part: string, changes: Change[]): Change[] {
  return changes.map((c) => (c.part === undefined ? { ...c, part } : c));
}

/** Component names such as `ListQuery.filter` (TypeSpec's name for a spread property) as segments. */
export function componentSegments(name: string): string[] {
  const dot = name.indexOf(".");
  return dot < 0 ? [name] : [name.slice(0, dot), name.slice(dot + 1)];
}

/** Declares changes without a declaration in a named component (parameters, headers). */
export function declaredBy(baseName: string | undefined, headName: string | undefined, changes: Change[]): Change[] {
  if (baseName === undefined && headName === undefined) return changes;
  return changes.map((c) => {
    if (c.declared !== undefined) return c;
    return {
      ...c,
      declared: {
        ...(baseName !== undefined ? { base: [...componentSegments(baseName), ...c.path] } : {}),
        ...(headName !== undefined ? { head: [...componentSegments(headName), ...c.path] } : {}),
      },
    };
  });
}
