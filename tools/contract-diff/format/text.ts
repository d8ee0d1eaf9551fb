/** The default output: a readable summary for a terminal. */
import { describeBreaks } from "../model.ts";
import { isBreaking, sourceText, type Report, type ReportedChange } from "../report.ts";

const MAX_OCCURRENCES = 4;

function occurrencesLine(change: ReportedChange): string | undefined {
  // A change located by operation already says where; list operations only for shared schemas.
  if (change.declared === undefined || change.occurrences.every((o) => o.operation === undefined)) return undefined;
  const texts = change.occurrences
    .map((o) => [[o.operation, o.part].filter(Boolean).join(" "), o.path].filter(Boolean).join(" › "))
    .filter((t) => t !== "");
  if (texts.length === 0) return undefined;
  const shown = texts.slice(0, MAX_OCCURRENCES).join("; ");
  return `in ${shown}${texts.length > MAX_OCCURRENCES ? `; and ${texts.length - MAX_OCCURRENCES} more` : ""}`;
}

function entry(change: ReportedChange): string[] {
  const head = `  ${change.rule.level.padEnd(4)} ${change.rule.id}  (${describeBreaks(change.rule.breaks)})`;
  const lines = [head, `       ${change.where}: ${change.message}`];
  const occurrences = occurrencesLine(change);
  if (occurrences !== undefined) lines.push(`       ${occurrences}`);
  if (change.source !== undefined) lines.push(`       contract: ${sourceText(change.source)}`);
  if (change.ignored !== undefined) lines.push(`       ignored: ${change.ignored.reason}`);
  return lines;
}

export function formatText(report: Report): string {
  const { summary } = report;
  const out: string[] = [];
  out.push(
    `Contract diff: ${report.base.label} → ${report.head.label} (OpenAPI ${report.document} documents, ${report.ruleCount} rules)`,
  );
  out.push(
    `${summary.breakingForClients} breaking for clients, ${summary.breakingForImplementations} breaking for implementations, ` +
      `${summary.compatible} compatible, ${summary.ignored} ignored. ` +
      (report.failed
        ? `Fails: ${summary.failing} at or above ${report.failOn}${report.failFor === "any" ? "" : ` for ${report.failFor}`}.`
        : `Passes (--fail-on ${report.failOn}).`),
  );
  const active = report.changes.filter((c) => c.ignored === undefined);
  const sections: [string, ReportedChange[]][] = [
    ["Breaking changes", active.filter(isBreaking)],
    ["Compatible changes", active.filter((c) => !isBreaking(c))],
    ["Ignored (reviewed in the ignore file)", report.changes.filter((c) => c.ignored !== undefined)],
  ];
  for (const [title, changes] of sections) {
    if (changes.length === 0) continue;
    out.push("", `${title} (${changes.length})`);
    for (const change of changes) out.push(...entry(change));
  }
  if (report.changes.length === 0) out.push("", "No changes.");
  for (const unused of report.unusedIgnores)
    out.push("", `Stale ignore entry (matches nothing): ${unused.rule} at ${unused.location}`);
  return `${out.join("\n")}\n`;
}
