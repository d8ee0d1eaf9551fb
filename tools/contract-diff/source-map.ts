/**
 * Finds the .tsp line that declares what a change is about: a model, enum or union and
 * its property or member, or an operation. Plain text search over the contract sources
 * (the documents carry no source positions); good enough for a review link, and falls
 * back to the declaration when a member comes from a template or spread it cannot follow.
 */
import type { ReportedChange, SourceLink } from "./report.ts";
import { operationLabel, operationsByKey, type Doc } from "./openapi.ts";

/** Contract files by path relative to the repository (`contract/models.tsp`). */
export type Sources = Record<string, string>;

interface Location {
  file: string;
  line: number;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function findDeclaration(sources: Sources, name: string): (Location & { lines: string[]; index: number }) | undefined {
  const pattern = new RegExp(`^\\s*(?:@\\S+\\s+)*(?:model|enum|union|scalar|alias|interface)\\s+${escape(name)}\\b`);
  for (const [file, text] of Object.entries(sources)) {
    const lines = text.split("\n");
    const index = lines.findIndex((l) => pattern.test(l));
    if (index >= 0) return { file, line: index + 1, lines, index };
  }
  return undefined;
}

/** Lines of the `{ … }` block opening at or after `start`, with their brace depth. */
function blockLines(lines: string[], start: number): { index: number; depth: number }[] {
  const result: { index: number; depth: number }[] = [];
  let depth = 0;
  let opened = false;
  for (let i = start; i < lines.length; i++) {
    const line = lines[i]!;
    if (opened) result.push({ index: i, depth });
    for (const ch of line.replace(/\/\/.*$/, "").replace(/"(?:[^"\\]|\\.)*"/g, "")) {
      if (ch === "{") {
        depth++;
        opened = true;
      } else if (ch === "}") depth--;
    }
    if (opened && depth <= 0) break;
    if (!opened && /[;=]\s*$/.test(line) && !line.includes("{")) {
      // `model X is Y<…>;` or `alias X = …;`: no block of its own.
      break;
    }
  }
  return result;
}

function findMember(sources: Sources, model: string, member: string, depth = 0): Location | undefined {
  const declaration = findDeclaration(sources, model);
  if (declaration === undefined || depth > 4) return undefined;
  const { lines, index, file } = declaration;
  const memberPattern = new RegExp(
    `^\\s*(?:@\\S+(?:\\(.*\\))?\\s+)*(?:\\w+\\.)?[\`"]?${escape(member)}[\`"]?\\s*(?:\\?\\s*:|:|,|$|=|\\(|<)`,
  );
  const block = blockLines(lines, index);
  for (const { index: i, depth: d } of block) {
    if (d === 1 && memberPattern.test(lines[i]!)) return { file, line: i + 1 };
  }
  // Members from `is X<…>`, `extends X` or `...X`.
  const header = lines.slice(index, index + 3).join(" ");
  const inherited = [
    ...header.matchAll(/\b(?:is|extends)\s+(\w+)/g),
    ...block.filter((b) => b.depth === 1).flatMap((b) => [...lines[b.index]!.matchAll(/\.\.\.(\w+)/g)]),
  ];
  for (const match of inherited) {
    const found = findMember(sources, match[1]!, member, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * `["Dataset", "name", "[]", …]` → the line of `Dataset.name`; with `exact: false`, the
 * line of `Dataset` when the member cannot be found.
 */
export function locateDeclared(sources: Sources, segments: readonly string[], exact = false): Location | undefined {
  const [name, member] = segments;
  if (name === undefined) return undefined;
  if (member !== undefined && /^[\w$-]+$/.test(member)) {
    const found = findMember(sources, name, member);
    if (found !== undefined || exact) return found;
  }
  const declaration = findDeclaration(sources, name);
  return declaration && { file: declaration.file, line: declaration.line };
}

/**
 * `createDataset` (an `op`), `createDpoJob` (an interface member, found by its name) or
 * `DpoJobs_createDpoJob` (TypeSpec's default id for an interface member) → its line.
 */
export function locateOperation(sources: Sources, operationId: string): Location | undefined {
  const separator = operationId.indexOf("_");
  if (separator > 0) {
    const found = findMember(sources, operationId.slice(0, separator), operationId.slice(separator + 1));
    if (found !== undefined) return found;
  }
  const declared = new RegExp(`^\\s*@operationId\\(\\s*"${escape(operationId)}"\\s*\\)`);
  const pattern = new RegExp(`^\\s*(?:@\\S+\\s+)*op\\s+${escape(operationId)}\\b`);
  for (const [file, text] of Object.entries(sources)) {
    const lines = text.split("\n");
    const index = lines.findIndex((l) => pattern.test(l));
    if (index >= 0) return { file, line: index + 1 };
    // An interface member renamed with @operationId: the line that declares it follows its decorators.
    const decorator = lines.findIndex((l) => declared.test(l));
    if (decorator >= 0) {
      const member = lines.findIndex((l, i) => i > decorator && !/^\s*@/.test(l));
      return { file, line: (member >= 0 ? member : decorator) + 1 };
    }
  }
  return undefined;
}

export interface Side {
  doc: Doc;
  sources: Sources;
}

const REMOVAL = /^(path|operation)-removed/;

/** Sets `source` on each change: head's declaration, or base's for what only base has. */
export function linkSources(changes: ReportedChange[], base: Side, head: Side): void {
  const operationIds = (doc: Doc) =>
    new Map(
      [...operationsByKey(doc).values()].map((op) => [
        operationLabel(op),
        op.operation.operationId as string | undefined,
      ]),
    );
  const baseIds = operationIds(base.doc);
  const headIds = operationIds(head.doc);
  for (const change of changes) {
    let link: SourceLink | undefined;
    // The member itself on either side (a removed property is only in base), then its model.
    const { head: headPath, base: basePath } = change.declared ?? {};
    if (headPath !== undefined) link = at("head", locateDeclared(head.sources, headPath, true));
    if (link === undefined && basePath !== undefined) link = at("base", locateDeclared(base.sources, basePath, true));
    if (link === undefined && headPath !== undefined) link = at("head", locateDeclared(head.sources, headPath));
    if (link === undefined && basePath !== undefined) link = at("base", locateDeclared(base.sources, basePath));
    const operation = change.occurrences[0]?.operation;
    if (link === undefined && operation !== undefined) {
      const removed = REMOVAL.test(change.rule.id);
      const id = (removed ? baseIds : headIds).get(operation);
      if (id !== undefined)
        link = at(removed ? "base" : "head", locateOperation(removed ? base.sources : head.sources, id));
    }
    if (link !== undefined) change.source = link;
  }
}

function at(revision: "base" | "head", location: Location | undefined): SourceLink | undefined {
  return location && { revision, ...location };
}
