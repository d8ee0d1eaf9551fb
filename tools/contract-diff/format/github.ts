/**
 * GitHub workflow commands: one annotation per change on the .tsp line that declares it
 * (`::error file=contract/models.tsp,line=12,title=…::…`), so the pull request's diff shows
 * each change where it was made. A failing change is an error, another breaking one a
 * warning, a compatible one a notice; a change without a source line is annotated on
 * no file. Ends with a one-line summary.
 */
import { describeBreaks } from "../model.ts";
import { fails, isBreaking, type Report, type ReportedChange } from "../report.ts";

/** Escaping of workflow command data and property values (actions/toolkit's rules). */
function escapeData(text: string): string {
  return text.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(":", "%3A").replaceAll(",", "%2C");
}

function command(report: Report, change: ReportedChange): string {
  const failing = fails(change, report.failOn, report.failFor);
  const kind = failing ? "error" : isBreaking(change) && change.ignored === undefined ? "warning" : "notice";
  const properties = [`title=${escapeProperty(`${change.rule.level} ${change.rule.id}`)}`];
  if (change.source !== undefined) {
    properties.unshift(`file=${escapeProperty(change.source.file)}`, `line=${change.source.line}`);
  }
  const removedNote = change.source?.revision === "base" ? " (line in the base revision)" : "";
  const ignored = change.ignored !== undefined ? ` Ignored: ${change.ignored.reason}` : "";
  const message = `${change.where}: ${change.message} (${describeBreaks(change.rule.breaks)})${removedNote}.${ignored}`;
  return `::${kind} ${properties.join(",")}::${escapeData(message)}`;
}

export function formatGithub(report: Report): string {
  const lines = report.changes.map((change) => command(report, change));
  const { summary } = report;
  lines.push(
    `Contract diff: ${summary.breakingForClients} breaking for clients, ${summary.breakingForImplementations} breaking for implementations, ${summary.compatible} compatible, ${summary.ignored} ignored; ${report.failed ? `${summary.failing} failing` : "passes"}.`,
  );
  return `${lines.join("\n")}\n`;
}

/** A workflow error without a file (a revision that does not build). */
export function githubError(title: string, message: string): string {
  return `::error title=${escapeProperty(title)}::${escapeData(message)}`;
}
