/**
 * This API's own error rules (contract/errors.tsp):
 * - `ErrorCode` lists every code once and is **append-only**: removing or renaming a code
 *   breaks clients that branch on it; adding one is compatible.
 * - Each HTTP status's error response lists the codes it may carry (`BadRequestErrorCode`
 *   for 400, …). The pairing is read from the documents: for every operation, every
 *   error status, the code values found in its JSON body. A code that already came
 *   with a status and now also comes with another (or moved) breaks clients that branch
 *   on (status, code); a code no longer coming with a status breaks those clients and
 *   implementations that still send it there. A code's first status, new code or not,
 *   is part of its publication (clients must expect new codes on a status): no report.
 *
 * The registry is the component schema named `ErrorCode`: that name is the API's
 * published list, so it is looked up by name (the rest of the diff never uses names).
 */
import { defineRule, type Change } from "../model.ts";
import { derefObject, isObject, objectAt, operationsByKey, type Doc } from "../openapi.ts";
import { normalize, resolveSchema } from "../schema.ts";

export const ERROR_CODE_SCHEMA = "ErrorCode";

export const errorCodeRemoved = defineRule({
  id: "error-code-removed",
  level: "ERR",
  breaks: "both",
  description: "An error code was removed or renamed; codes are append-only and clients branch on them.",
});
export const errorCodeAdded = defineRule({
  id: "error-code-added",
  level: "INFO",
  breaks: "none",
  description: "A new error code (codes are append-only; adding is allowed).",
});
export const errorCodeStatusAdded = defineRule({
  id: "error-code-status-added",
  level: "ERR",
  breaks: "clients",
  description:
    "An error code that already came with some HTTP status now also comes with another; clients branching on (status, code) miss it.",
});
export const errorCodeStatusRemoved = defineRule({
  id: "error-code-status-removed",
  level: "ERR",
  breaks: "both",
  description:
    "An error code no longer comes with an HTTP status (moved or dropped); clients branching on (status, code) never match, and implementations built on the base still send it there.",
});

export const errorCodeRules = [errorCodeRemoved, errorCodeAdded, errorCodeStatusAdded, errorCodeStatusRemoved];

/** The values of the `ErrorCode` schema, in document order. */
export function errorCodeRegistry(doc: Doc): string[] {
  const schema = objectAt(doc, "components", "schemas", ERROR_CODE_SCHEMA);
  if (schema === undefined) return [];
  const values = normalize(doc, resolveSchema(doc, schema).schema).values ?? [];
  return values.filter((v): v is string => typeof v === "string");
}

interface Pairing {
  codes: Set<string>;
  /** The component listing the codes of that status (e.g. `ConflictErrorCode`), for the link. */
  listedIn: Map<string, string>;
}

/** Error status → codes found in its bodies, over all operations. */
export function errorCodesByStatus(doc: Doc, known: ReadonlySet<string>): Map<string, Pairing> {
  const result = new Map<string, Pairing>();
  for (const op of operationsByKey(doc).values()) {
    for (const [status, rawResponse] of Object.entries(
      isObject(op.operation.responses) ? op.operation.responses : {},
    )) {
      if (!/^[45]/.test(status)) continue;
      const response = derefObject(doc, rawResponse).node ?? {};
      for (const media of Object.values(isObject(response.content) ? response.content : {})) {
        if (!isObject(media) || media.schema === undefined) continue;
        let pairing = result.get(status);
        if (pairing === undefined) result.set(status, (pairing = { codes: new Set(), listedIn: new Map() }));
        collectCodes(doc, media.schema, known, pairing, 0, new Set());
      }
    }
  }
  return result;
}

// error.code sits two levels down; a little more covers other envelopes.
const MAX_DEPTH = 4;

function collectCodes(
  doc: Doc,
  raw: unknown,
  known: ReadonlySet<string>,
  into: Pairing,
  depth: number,
  seen: Set<object>,
): void {
  const resolved = resolveSchema(doc, raw);
  if (depth > MAX_DEPTH || seen.has(resolved.identity)) return;
  seen.add(resolved.identity);
  const normal = normalize(doc, resolved.schema);
  const values = normal.values ?? [];
  if (values.length > 0 && values.every((v) => typeof v === "string" && known.has(v))) {
    for (const code of values as string[]) {
      into.codes.add(code);
      if (resolved.ref !== undefined && !into.listedIn.has(code)) into.listedIn.set(code, resolved.ref);
    }
    return;
  }
  for (const property of normal.properties.values()) collectCodes(doc, property, known, into, depth + 1, seen);
  for (const variant of normal.variants ?? []) collectCodes(doc, variant, known, into, depth + 1, seen);
}

function statusesOf(code: string, byStatus: Map<string, Pairing>): string[] {
  return [...byStatus]
    .filter(([, p]) => p.codes.has(code))
    .map(([s]) => s)
    .sort();
}

export function checkErrorCodes(base: Doc, head: Doc): Change[] {
  const before = errorCodeRegistry(base);
  const after = errorCodeRegistry(head);
  const known = new Set([...before, ...after]);
  const beforeSet = new Set(before);
  const afterSet = new Set(after);
  const pairedBefore = errorCodesByStatus(base, known);
  const pairedAfter = errorCodesByStatus(head, known);
  const changes: Change[] = [];
  const withStatuses = (statuses: string[]) => (statuses.length > 0 ? ` (status ${statuses.join(", ")})` : "");
  for (const code of before) {
    if (!afterSet.has(code)) {
      changes.push({
        rule: errorCodeRemoved,
        message: `error code \`${code}\` removed${withStatuses(statusesOf(code, pairedBefore))}`,
        part: ERROR_CODE_SCHEMA,
        path: [],
        before: code,
        declared: { base: [ERROR_CODE_SCHEMA, code] },
      });
    }
  }
  for (const code of after) {
    if (!beforeSet.has(code)) {
      changes.push({
        rule: errorCodeAdded,
        message: `error code \`${code}\` added${withStatuses(statusesOf(code, pairedAfter))}`,
        part: ERROR_CODE_SCHEMA,
        path: [],
        after: code,
        declared: { head: [ERROR_CODE_SCHEMA, code] },
      });
    }
  }
  const statuses = [...new Set([...pairedBefore.keys(), ...pairedAfter.keys()])].sort();
  for (const status of statuses) {
    const was = pairedBefore.get(status);
    const is = pairedAfter.get(status);
    for (const code of is?.codes ?? []) {
      if (was?.codes.has(code)) continue;
      // A code's first status is part of its publication (append-only), not a changed pairing.
      const earlier = statusesOf(code, pairedBefore);
      if (earlier.length === 0) continue;
      const listedIn = is!.listedIn.get(code);
      changes.push({
        rule: errorCodeStatusAdded,
        message: `\`${code}\` may now come with status ${status} (before: ${earlier.join(", ")})`,
        part: `errors with status ${status}`,
        path: [],
        after: status,
        ...(listedIn ? { declared: { head: [listedIn, code] } } : {}),
      });
    }
    for (const code of was?.codes ?? []) {
      if (is?.codes.has(code) || !afterSet.has(code)) continue;
      const now = statusesOf(code, pairedAfter);
      const listedIn = was!.listedIn.get(code);
      changes.push({
        rule: errorCodeStatusRemoved,
        message: `\`${code}\` no longer comes with status ${status}${now.length > 0 ? ` (now: ${now.join(", ")})` : ""}`,
        part: `errors with status ${status}`,
        path: [],
        before: status,
        ...(listedIn ? { declared: { base: [listedIn, code] } } : {}),
      });
    }
  }
  return changes;
}
