/**
 * Paths and operations: removed, added, operationId changed, deprecated. Paths are matched
 * with parameter names erased (`/a/{id}` = `/a/{name}`): those names are not on the wire.
 * A renamed path is a removal and an addition; the removal names where its operationId went.
 */
import { defineRule, type Change } from "../model.ts";
import { normalizePathTemplate, operationLabel, operationsByKey, type Doc, type OperationRef } from "../openapi.ts";
import { deprecatedRemoval } from "./deprecation.ts";

export const pathRemoved = defineRule({
  id: "path-removed",
  level: "ERR",
  breaks: "clients",
  description: "A path and all its operations were removed (or the path was renamed); clients calling it get 404.",
});
export const pathAdded = defineRule({ id: "path-added", level: "INFO", breaks: "none", description: "A new path." });
export const operationRemoved = defineRule({
  id: "operation-removed",
  level: "ERR",
  breaks: "clients",
  description: "An operation (method on a path that remains) was removed; clients calling it fail.",
});
export const operationAdded = defineRule({
  id: "operation-added",
  level: "INFO",
  breaks: "none",
  description: "A new operation on an existing path.",
});
export const operationIdChanged = defineRule({
  id: "operation-id-changed",
  level: "WARN",
  breaks: "clients",
  description: "The operationId changed; generated clients rename the method (the wire is unchanged).",
});
export const operationDeprecated = defineRule({
  id: "operation-deprecated",
  level: "INFO",
  breaks: "none",
  description: "The operation is now deprecated.",
});

export const pathRules = [
  pathRemoved,
  pathAdded,
  operationRemoved,
  operationAdded,
  operationIdChanged,
  operationDeprecated,
];

export interface OperationSets {
  changes: Change[];
  /** Operations present on both sides, as [base, head]. */
  common: [OperationRef, OperationRef][];
}

function operationChange(
  rule: typeof pathRemoved,
  operation: OperationRef,
  message: string,
  extra: Partial<Change> = {},
): Change {
  return { rule, message, operation: operationLabel(operation), path: [], ...extra };
}

/** `today` (YYYY-MM-DD) judges the sunset dates of deprecated operations (rules/deprecation.ts). */
export function checkOperationSets(base: Doc, head: Doc, today = new Date().toISOString().slice(0, 10)): OperationSets {
  const baseOps = operationsByKey(base);
  const headOps = operationsByKey(head);
  const headPaths = new Set([...headOps.values()].map((op) => normalizePathTemplate(op.path)));
  const basePaths = new Set([...baseOps.values()].map((op) => normalizePathTemplate(op.path)));
  const headById = new Map(
    [...headOps.values()]
      .filter((op) => op.operation.operationId)
      .map((op) => [op.operation.operationId as string, op]),
  );
  const changes: Change[] = [];
  const common: [OperationRef, OperationRef][] = [];
  for (const [key, op] of baseOps) {
    const other = headOps.get(key);
    if (other !== undefined) {
      common.push([op, other]);
      continue;
    }
    const pathGone = !headPaths.has(normalizePathTemplate(op.path));
    const movedTo = typeof op.operation.operationId === "string" ? headById.get(op.operation.operationId) : undefined;
    const hint =
      movedTo !== undefined ? ` (operationId \`${op.operation.operationId}\` is now ${operationLabel(movedTo)})` : "";
    const siblings = [...baseOps.values()].filter(
      (o) => normalizePathTemplate(o.path) === normalizePathTemplate(op.path),
    );
    const deprecation = pathGone
      ? deprecatedRemoval(
          "path",
          siblings.map((o) => o.operation),
          today,
        )
      : deprecatedRemoval("operation", [op.operation], today);
    const note = deprecation === undefined ? "" : ` (${deprecation.note})`;
    changes.push(
      operationChange(
        deprecation?.rule ?? (pathGone ? pathRemoved : operationRemoved),
        op,
        `${pathGone ? "path" : "operation"} removed${hint}${note}`,
        { before: operationLabel(op) },
      ),
    );
  }
  for (const [key, op] of headOps) {
    if (baseOps.has(key)) continue;
    const pathNew = !basePaths.has(normalizePathTemplate(op.path));
    changes.push(
      operationChange(pathNew ? pathAdded : operationAdded, op, `${pathNew ? "path" : "operation"} added`, {
        after: operationLabel(op),
      }),
    );
  }
  return { changes, common };
}

export function checkOperationMetadata(base: OperationRef, head: OperationRef): Change[] {
  const changes: Change[] = [];
  const before = base.operation.operationId;
  const after = head.operation.operationId;
  if (before !== after)
    changes.push(
      operationChange(operationIdChanged, head, `operationId \`${before ?? "none"}\` → \`${after ?? "none"}\``, {
        before,
        after,
      }),
    );
  if (head.operation.deprecated === true && base.operation.deprecated !== true)
    changes.push(operationChange(operationDeprecated, head, "operation deprecated"));
  return changes;
}
