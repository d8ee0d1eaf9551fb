/**
 * The reviewed ignore file (contract-diff-ignore.yaml at the repository root): each entry
 * accepts one reported change, named by rule id and location, with the reason it is
 * acceptable. Entries without a reason or with an unknown rule are errors, so the file
 * stays a record of decisions; entries that match nothing are reported as stale.
 */
import { existsSync, readFileSync } from "node:fs";
import { parse } from "yaml";
import { isObject } from "./openapi.ts";
import { occurrenceText, type ReportedChange } from "./report.ts";
import { findRule } from "./rules/catalog.ts";

export interface IgnoreEntry {
  rule: string;
  /** The change's location as printed; `*` matches any text. */
  location: string;
  reason: string;
}

export class IgnoreFileError extends Error {}

export function parseIgnoreFile(text: string, file = "ignore file"): IgnoreEntry[] {
  const data: unknown = parse(text) ?? {};
  if (!isObject(data)) throw new IgnoreFileError(`${file}: expected a mapping with an \`ignore\` list`);
  const list: unknown = data.ignore ?? [];
  if (!Array.isArray(list)) throw new IgnoreFileError(`${file}: \`ignore\` must be a list`);
  return list.map((entry, index) => {
    const where = `${file}: entry ${index + 1}`;
    if (!isObject(entry)) throw new IgnoreFileError(`${where}: expected {rule, location, reason}`);
    const { rule, location, reason } = entry;
    if (typeof rule !== "string" || findRule(rule) === undefined)
      throw new IgnoreFileError(`${where}: unknown rule ${JSON.stringify(rule)} (see --list-rules)`);
    if (typeof location !== "string" || location.trim() === "")
      throw new IgnoreFileError(`${where}: \`location\` is required`);
    if (typeof reason !== "string" || reason.trim() === "")
      throw new IgnoreFileError(`${where}: \`reason\` is required: say why this change is acceptable`);
    return { rule, location, reason: reason.trim() };
  });
}

export function loadIgnoreFile(file: string): IgnoreEntry[] {
  return existsSync(file) ? parseIgnoreFile(readFileSync(file, "utf8"), file) : [];
}

function globToRegExp(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split("*")
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
}

/** Matches the printed location or the location of any single occurrence. */
export function entryMatches(entry: IgnoreEntry, change: ReportedChange): boolean {
  if (entry.rule !== change.rule.id) return false;
  const pattern = globToRegExp(entry.location);
  return pattern.test(change.where) || change.occurrences.some((o) => pattern.test(occurrenceText(o)));
}

/** Marks ignored changes; returns the entries that matched nothing. */
export function applyIgnores(changes: ReportedChange[], entries: readonly IgnoreEntry[]): IgnoreEntry[] {
  const used = new Set<IgnoreEntry>();
  for (const change of changes) {
    const entry = entries.find((e) => entryMatches(e, change));
    if (entry === undefined) continue;
    change.ignored = { reason: entry.reason };
    used.add(entry);
  }
  return entries.filter((e) => !used.has(e));
}
