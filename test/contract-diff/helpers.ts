/** Shared by the contract-diff tests: the fixture document and small edits of it. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { diffDocuments } from "../../tools/contract-diff/diff.ts";
/**
 * Fixture documents are edited in place by deep paths (`doc.paths["/x"].post…`): loosely
 * typed here, in tests only; the tool itself reads documents as `unknown` and narrows.
 */
export type Doc = Record<string, any>;
export type Node = Record<string, any>;
import { groupChanges, type ReportedChange } from "../../tools/contract-diff/report.ts";
import type { DiffOptions } from "../../tools/contract-diff/rules/context.ts";

export const fixturesDir = join(import.meta.dirname, "fixtures");
export const baseFixturePath = join(fixturesDir, "base.openapi.yaml");

export function loadBase(): Doc {
  return parse(readFileSync(baseFixturePath, "utf8")) as Doc;
}

export type Edit = (doc: Doc) => void;

export function edited(from: Doc, edit: Edit): Doc {
  const copy = structuredClone(from);
  edit(copy);
  return copy;
}

export function schemas(doc: Doc): Node {
  return doc.components.schemas;
}

/** The request body model's properties (an open object). */
export function requestProps(doc: Doc): Node {
  return doc.components.schemas.CreateThingRequest.properties;
}

/** The response model's properties (a closed object, in three operations). */
export function responseProps(doc: Doc): Node {
  return doc.components.schemas.Thing.properties;
}

/** Renames a component schema and every `$ref` to it: a change of name only. */
export function renameSchema(doc: Doc, from: string, to: string): void {
  const all = doc.components.schemas;
  all[to] = all[from];
  delete all[from];
  replaceDeep(doc, (node) => (node.$ref === `#/components/schemas/${from}` ? { ...node, $ref: `#/components/schemas/${to}` } : node));
}

/** Replaces every `$ref` to a schema by a copy of the schema itself. */
export function inlineSchema(doc: Doc, name: string): void {
  const target = doc.components.schemas[name];
  replaceDeep(doc, (node) => (node.$ref === `#/components/schemas/${name}` ? structuredClone(target) : node));
  delete doc.components.schemas[name];
}

function replaceDeep(node: unknown, replace: (node: Node) => Node): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => {
      if (typeof item === "object" && item !== null) node[i] = replace(item);
      replaceDeep(node[i], replace);
    });
  } else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === "object" && value !== null && !Array.isArray(value)) (node as Node)[key] = replace(value as Node);
      replaceDeep((node as Node)[key], replace);
    }
  }
}

/** The grouped changes of a diff. */
export function report(base: Doc, head: Doc, options: Partial<DiffOptions> = {}): ReportedChange[] {
  return groupChanges(diffDocuments(base, head, options));
}

/** `LEVEL class rule-id` of each reported change, sorted: what the rule tests assert. */
export function classified(base: Doc, head: Doc, options: Partial<DiffOptions> = {}): string[] {
  return report(base, head, options)
    .map((c) => `${c.rule.level} ${c.rule.breaks} ${c.rule.id}`)
    .sort();
}
