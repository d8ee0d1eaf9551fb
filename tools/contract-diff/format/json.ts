/** `--format json`: everything the other formats show, for tools. */
import type { Report } from "../report.ts";

export function formatJson(report: Report): string {
  const changes = report.changes.map((c) => ({
    rule: c.rule.id,
    level: c.rule.level,
    breaks: c.rule.breaks,
    message: c.message,
    where: c.where,
    ...(c.before !== undefined ? { before: c.before } : {}),
    ...(c.after !== undefined ? { after: c.after } : {}),
    occurrences: c.occurrences,
    ...(c.source !== undefined ? { source: c.source } : {}),
    ...(c.ignored !== undefined ? { ignored: c.ignored } : {}),
  }));
  const { base, head, document, failOn, failFor, summary, failed, ruleCount, unusedIgnores } = report;
  return `${JSON.stringify({ base, head, document, failOn, failFor, failed, ruleCount, summary, changes, unusedIgnores }, null, 2)}\n`;
}
