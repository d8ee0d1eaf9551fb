/**
 * Turns raw changes into what a reviewer reads: changes with the same rule, place and
 * message are one entry listing the operations they occur in (a model shared by twenty
 * operations changes once, not twenty times), ordered breaking first.
 */
import {
  breaksClients,
  breaksImplementations,
  levelRank,
  renderPath,
  type Breaks,
  type Change,
  type Declared,
  type Level,
  type Rule,
} from "./model.ts";

export interface Occurrence {
  operation?: string;
  part?: string;
  path: string;
}

export interface SourceLink {
  revision: "base" | "head";
  file: string;
  line: number;
}

export interface ReportedChange {
  rule: Rule;
  message: string;
  /** The change's location as printed and as matched by the ignore file. */
  where: string;
  before?: unknown;
  after?: unknown;
  declared?: Declared;
  occurrences: Occurrence[];
  source?: SourceLink;
  /** Set when a reviewed entry of the ignore file covers the change. */
  ignored?: { reason: string };
}

/** `Dataset.name` when the change sits in a named schema, else `METHOD /path › part › path`. */
export function whereOf(change: Change): string {
  const declared = change.declared?.head ?? change.declared?.base;
  if (declared !== undefined) return renderPath(declared);
  return occurrenceText(occurrenceOf(change));
}

function occurrenceOf(change: Change): Occurrence {
  const occurrence: Occurrence = { path: renderPath(change.path) };
  if (change.operation !== undefined) occurrence.operation = change.operation;
  if (change.part !== undefined) occurrence.part = change.part;
  return occurrence;
}

export function occurrenceText(occurrence: Occurrence): string {
  return [occurrence.operation, occurrence.part, occurrence.path]
    .filter((s) => s !== undefined && s !== "")
    .join(" › ");
}

const BREAKS_ORDER: Record<Breaks, number> = { both: 0, clients: 1, implementations: 2, none: 3 };

export function groupChanges(changes: readonly Change[]): ReportedChange[] {
  const groups = new Map<string, ReportedChange>();
  for (const change of changes) {
    const where = whereOf(change);
    const key = `${change.rule.id}\u0000${where}\u0000${change.message}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { rule: change.rule, message: change.message, where, occurrences: [] };
      if (change.before !== undefined) group.before = change.before;
      if (change.after !== undefined) group.after = change.after;
      if (change.declared !== undefined) group.declared = change.declared;
      groups.set(key, group);
    }
    const occurrence = occurrenceOf(change);
    const text = occurrenceText(occurrence);
    if (!group.occurrences.some((o) => occurrenceText(o) === text)) group.occurrences.push(occurrence);
  }
  for (const group of groups.values())
    group.occurrences.sort((a, b) => occurrenceText(a).localeCompare(occurrenceText(b)));
  return [...groups.values()].sort(
    (a, b) =>
      levelRank(b.rule.level) - levelRank(a.rule.level) ||
      BREAKS_ORDER[a.rule.breaks] - BREAKS_ORDER[b.rule.breaks] ||
      a.rule.id.localeCompare(b.rule.id) ||
      a.where.localeCompare(b.where) ||
      a.message.localeCompare(b.message),
  );
}

/** Which breaking changes fail the run: `--fail-for`. */
export type FailFor = "any" | "clients" | "implementations";

export function isBreaking(change: ReportedChange): boolean {
  return change.rule.breaks !== "none";
}

export function fails(change: ReportedChange, failOn: Level, failFor: FailFor): boolean {
  if (change.ignored !== undefined || !isBreaking(change)) return false;
  if (levelRank(change.rule.level) < levelRank(failOn)) return false;
  if (failFor === "clients") return breaksClients(change.rule.breaks);
  if (failFor === "implementations") return breaksImplementations(change.rule.breaks);
  return true;
}

export interface Summary {
  breakingForClients: number;
  breakingForImplementations: number;
  compatible: number;
  ignored: number;
  failing: number;
}

export function summarize(changes: readonly ReportedChange[], failOn: Level, failFor: FailFor): Summary {
  const active = changes.filter((c) => c.ignored === undefined);
  return {
    breakingForClients: active.filter((c) => breaksClients(c.rule.breaks)).length,
    breakingForImplementations: active.filter((c) => breaksImplementations(c.rule.breaks)).length,
    compatible: active.filter((c) => !isBreaking(c)).length,
    ignored: changes.length - active.length,
    failing: changes.filter((c) => fails(c, failOn, failFor)).length,
  };
}

export interface RevisionInfo {
  /** What the user asked for: a ref, a file, or "working tree". */
  label: string;
  /** The commit, when the revision is one (used for links). */
  commit?: string;
}

export interface UnusedIgnore {
  rule: string;
  location: string;
  reason: string;
}

export interface Report {
  base: RevisionInfo;
  head: RevisionInfo;
  /** Which generated document was compared: "3.2" or "3.1". */
  document: string;
  failOn: Level;
  failFor: FailFor;
  changes: ReportedChange[];
  unusedIgnores: UnusedIgnore[];
  summary: Summary;
  failed: boolean;
  ruleCount: number;
  /** e.g. https://github.com/owner/repo: links to `blob/<commit>/<file>#L<line>`. */
  repoUrl?: string;
}

export function sourceUrl(report: Report, source: SourceLink): string | undefined {
  const commit = report[source.revision].commit;
  if (report.repoUrl === undefined || commit === undefined) return undefined;
  return `${report.repoUrl.replace(/\/+$/, "")}/blob/${commit}/${source.file}#L${source.line}`;
}

export function sourceText(source: SourceLink): string {
  return `${source.file}:${source.line}${source.revision === "base" ? " (base)" : ""}`;
}
