/**
 * `--format markdown`: a pull-request comment. Breaking changes first as a table, then
 * the compatible ones folded, each linked to the .tsp line when a repository URL is given.
 * The first line is a marker so CI can update its own comment instead of adding one.
 */
import { isBreaking, sourceText, sourceUrl, type Report, type ReportedChange } from "../report.ts";

export const COMMENT_MARKER = "<!-- contract-diff -->";

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function code(text: string): string {
  return `\`${text.replace(/`/g, "")}\``;
}

function operations(change: ReportedChange): string {
  if (change.declared === undefined) return "";
  const ops = [...new Set(change.occurrences.map((o) => o.operation).filter((o): o is string => o !== undefined))];
  if (ops.length === 0) return "";
  return `<br>in ${ops.slice(0, 3).map(code).join(", ")}${ops.length > 3 ? ` and ${ops.length - 3} more` : ""}`;
}

function contract(report: Report, change: ReportedChange): string {
  if (change.source === undefined) return "";
  const text = sourceText(change.source);
  const url = sourceUrl(report, change.source);
  return url === undefined ? code(text) : `[${text}](${url})`;
}

function table(report: Report, changes: ReportedChange[]): string[] {
  const rows = ["| Level | Breaks | Rule | Where | Change | Contract |", "| --- | --- | --- | --- | --- | --- |"];
  for (const change of changes) {
    const breaks =
      change.rule.breaks === "none"
        ? "—"
        : change.rule.breaks === "both"
          ? "clients, implementations"
          : change.rule.breaks;
    const ignored = change.ignored !== undefined ? `<br>*ignored: ${cell(change.ignored.reason)}*` : "";
    rows.push(
      `| ${change.rule.level} | ${breaks} | ${code(change.rule.id)} | ${code(change.where)}${operations(change)} | ${cell(change.message)}${ignored} | ${contract(report, change)} |`,
    );
  }
  return rows;
}

export function formatMarkdown(report: Report): string {
  const { summary } = report;
  const active = report.changes.filter((c) => c.ignored === undefined);
  const breaking = active.filter(isBreaking);
  const compatible = active.filter((c) => !isBreaking(c));
  const ignored = report.changes.filter((c) => c.ignored !== undefined);
  const out = [COMMENT_MARKER, `### Contract diff: ${code(report.base.label)} → ${code(report.head.label)}`, ""];
  const verdict = report.failed
    ? `:x: **${summary.failing} breaking change(s) at or above ${report.failOn}.**`
    : breaking.length > 0
      ? ":warning: Breaking changes below the failing level."
      : ":white_check_mark: No breaking changes.";
  out.push(
    `${verdict} ${summary.breakingForClients} breaking for clients, ${summary.breakingForImplementations} breaking for implementations, ${summary.compatible} compatible, ${summary.ignored} ignored.`,
    "",
  );
  if (breaking.length > 0) out.push("#### Breaking changes", "", ...table(report, breaking), "");
  if (compatible.length > 0)
    out.push(
      `<details><summary>Compatible changes (${compatible.length})</summary>`,
      "",
      ...table(report, compatible),
      "",
      "</details>",
      "",
    );
  if (ignored.length > 0)
    out.push(
      `<details><summary>Ignored after review (${ignored.length})</summary>`,
      "",
      ...table(report, ignored),
      "",
      "</details>",
      "",
    );
  if (report.changes.length === 0) out.push("No contract changes.", "");
  for (const unused of report.unusedIgnores)
    out.push(`- Stale ignore entry (matches nothing): ${code(unused.rule)} at ${code(unused.location)}`);
  out.push(
    `<sub>Compared the OpenAPI ${report.document} documents with ${report.ruleCount} rules (\`npm run contract:diff -- --list-rules\`). ` +
      "ERR: definite break, WARN: may break. *Clients* are callers built on the base contract, *implementations* servers built on it. " +
      "To accept a reviewed break, add its rule and location with a reason to `contract-diff-ignore.yaml` (see docs/contract-review.md).</sub>",
  );
  return `${out.join("\n")}\n`;
}
