/**
 * Reports of a run: readable text for a terminal (each failure with its transcript, step,
 * rule, expected and received values and the request id), JUnit XML for CI, and JSON.
 */
import { inspect } from "node:util";
import type { CoverageCount, Rule } from "./coverage.ts";
import type { Outcome, RunReport, StepFailure, TranscriptResult } from "./runner.ts";

export interface TextOptions {
  color?: boolean;
  /** List every transcript, not only failures and skips. */
  verbose?: boolean;
  baseUrl?: string;
  /** The rule catalogue, for the rules' texts in "Failures by rule". */
  rules?: Rule[];
}

/** The words of the outcomes, the same in every report (terminal, JUnit, JSON, HTML). */
export const OUTCOME_LABEL: Record<Outcome, string> = {
  passed: "passed",
  failed: "failed",
  skipped: "skipped",
  "not-implemented": "not implemented",
};

export interface AreaSummary {
  area: string;
  passed: number;
  failed: number;
  skipped: number;
  notImplemented: number;
}

/** Per area (transcript folder): how many passed, failed, were skipped or not implemented. */
export function byArea(report: Pick<RunReport, "details">): AreaSummary[] {
  const areas = new Map<string, AreaSummary>();
  for (const r of report.details) {
    const area = r.transcript.split("/")[0] as string;
    const a = areas.get(area) ?? { area, passed: 0, failed: 0, skipped: 0, notImplemented: 0 };
    if (r.status === "not-implemented") a.notImplemented++;
    else a[r.status]++;
    areas.set(area, a);
  }
  return [...areas.values()].sort((a, b) => a.area.localeCompare(b.area));
}

export interface RuleSummary {
  rule: string;
  /** Failures (steps) that broke it. */
  count: number;
  transcripts: string[];
}

/** The broken rules, most failures first: what to fix first. */
export function failuresByRule(report: Pick<RunReport, "failures">): RuleSummary[] {
  const rules = new Map<string, RuleSummary>();
  for (const f of report.failures) {
    const rule = f.rule ?? "(no rule)";
    const r = rules.get(rule) ?? { rule, count: 0, transcripts: [] };
    r.count++;
    if (!r.transcripts.includes(f.transcript)) r.transcripts.push(f.transcript);
    rules.set(rule, r);
  }
  return [...rules.values()].sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule));
}

/** `12 passed, 3 failed, 2 skipped, 40 not implemented`. */
export function outcomeCounts(report: Pick<RunReport, "passed" | "failed" | "skipped" | "notImplemented">): string {
  return `${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped, ${report.notImplemented} not implemented`;
}

export function textReport(report: RunReport, options: TextOptions = {}): string {
  const c = colors(options.color ?? false);
  const lines: string[] = [];
  lines.push(
    c.bold(
      `Conformance run ${report.runId}: profile ${report.profile}${options.baseUrl ? ` → ${options.baseUrl}` : ""}, contract ${report.contractVersion}`,
    ),
  );
  lines.push("");
  for (const r of report.details) {
    if ((r.status === "passed" || r.status === "not-implemented") && !options.verbose) continue;
    if (r.status === "passed") lines.push(`  ${c.green("✓")} ${r.transcript} ${c.dim(`(${r.durationMs} ms)`)}`);
    else if (r.status === "skipped")
      lines.push(`  ${c.yellow("-")} ${r.transcript} ${c.dim(`skipped: ${r.reason ?? ""}`)}`);
    else if (r.status === "not-implemented")
      lines.push(`  ${c.dim("·")} ${r.transcript} ${c.dim(`not implemented: ${r.reason ?? ""}`)}`);
    else lines.push(`  ${c.red("✗")} ${r.transcript} ${c.dim(`(${r.durationMs} ms)`)}`);
  }
  if (report.failures.length) {
    lines.push("", c.bold("Failures"), "");
    report.failures.forEach((f, i) => lines.push(...failureLines(f, i + 1, report.details, c)));
    lines.push(c.bold("Failures by rule (fix the top ones first)"));
    const texts = new Map((options.rules ?? []).map((r) => [r.id, r.text]));
    for (const r of failuresByRule(report)) {
      const text = texts.get(r.rule);
      lines.push(
        `  ${String(r.count).padStart(4)}× ${r.rule}${text ? c.dim(` — ${oneLine(text)}`) : ""} ${c.dim(`(${r.transcripts.length} transcript${r.transcripts.length === 1 ? "" : "s"})`)}`,
      );
    }
  }
  lines.push("", c.bold("By area (passed of those run)"));
  for (const a of byArea(report)) {
    const run = a.passed + a.failed;
    const rest = [
      a.skipped ? `${a.skipped} skipped` : "",
      a.notImplemented ? `${a.notImplemented} not implemented` : "",
    ]
      .filter(Boolean)
      .join(", ");
    const line = `  ${a.area.padEnd(10)} ${String(a.passed).padStart(3)}/${run}${rest ? c.dim(`${" ".repeat(Math.max(1, 4 - String(run).length))}${rest}`) : ""}`;
    lines.push(a.failed ? c.red(line) : line);
  }
  lines.push("", c.bold("Coverage of the interface document"));
  const cov = report.coverage;
  lines.push(coverageLine("operations", cov.operations));
  lines.push(coverageLine("status codes", cov.statusCodes, false));
  lines.push(coverageLine("error codes", cov.errorCodes));
  lines.push(`${coverageLine("rules", cov.rules)}${c.dim(`  (${cov.rules.passed} passed)`)}`);
  lines.push("");
  const waited =
    report.rateLimitWaitedMs > 0
      ? `; honoured Retry-After of the service's rate limit for ${(report.rateLimitWaitedMs / 1000).toFixed(0)} s in all`
      : "";
  for (const line of timeLimitLines(report)) lines.push(c.red(line));
  const cleanup = cleanupLines(report);
  cleanup.forEach((line, i) => lines.push(i === 0 && !report.leftBehind.length ? c.dim(line) : c.yellow(line)));
  const summary = `${outcomeCounts(report)} in ${(report.durationMs / 1000).toFixed(1)} s (${report.requests} requests${waited})${report.timedOut ? "; TIME LIMIT reached, cleanups ran" : report.interrupted ? "; INTERRUPTED, cleanups ran" : ""}`;
  lines.push(report.failed > 0 ? c.red(c.bold(summary)) : c.green(c.bold(summary)));
  return lines.join("\n");
}

/**
 * What the run made and what is still there after its cleanup, in words (the terminal and
 * the HTML report): only what the service still showed, and the models its jobs trained.
 */
export function cleanupLines(report: Pick<RunReport, "made" | "leftBehind" | "modelsLeft">): string[] {
  const lines: string[] = [];
  const { datasets, jobs } = report.made;
  if (datasets + jobs > 0)
    lines.push(
      report.leftBehind.length
        ? `Made ${datasets} datasets and ${jobs} fine-tuning jobs; after the cleanup ${report.leftBehind.length} remain:`
        : `Made ${datasets} datasets and ${jobs} fine-tuning jobs; removed them all (jobs cancelled, datasets deleted)`,
    );
  for (const item of report.leftBehind) lines.push(`  ${item}`);
  if (report.modelsLeft?.length)
    lines.push(
      `Left ${report.modelsLeft.length} model${report.modelsLeft.length === 1 ? "" : "s"} its jobs trained (the interface has no operation that deletes a model): ${report.modelsLeft.join(", ")}`,
    );
  return lines;
}

/** When the run's time limit passed: what was running, each with its step and the request awaiting an answer. */
export function timeLimitLines(report: Pick<RunReport, "timedOut" | "inFlight">): string[] {
  if (!report.timedOut) return [];
  return [
    `The run's time limit passed: ${report.inFlight.length} transcript${report.inFlight.length === 1 ? " was" : "s were"} running (failed under kit.time-limit), the rest not started (skipped)`,
    ...report.inFlight.map(
      (f) => `  ${f.transcript}, step ${f.step}: ${f.request ? `waiting for ${f.request}` : "between requests"}`,
    ),
  ];
}

/**
 * One transcript's failures as the terminal report prints them (the vitest entry's test
 * failure message, conformance/vitest.ts), without colour.
 */
export function failureText(result: TranscriptResult): string {
  const c = colors(false);
  return result.failures.flatMap((f, i) => failureLines(f, i + 1, [result], c)).join("\n");
}

/** Problems listed under a failure in the terminal; the files list them all. */
const SHOWN_DETAILS = 5;

function failureLines(f: StepFailure, n: number, details: TranscriptResult[], c: ReturnType<typeof colors>): string[] {
  const title = details.find((d) => d.transcript === f.transcript)?.title;
  const out = [`  ${n}) ${c.bold(f.transcript)}, step ${f.step}${title ? c.dim(` — ${title}`) : ""}`];
  if (f.rule) out.push(`     rule:     ${f.rule}`);
  out.push(`     ${c.red(f.message)}`);
  const also = f.details ?? [];
  for (const d of also.slice(0, SHOWN_DETAILS)) out.push(`       ${c.dim(`also: ${d}`)}`);
  if (also.length > SHOWN_DETAILS)
    out.push(
      `       ${c.dim(`… and ${also.length - SHOWN_DETAILS} more (all of them in the JSON, JUnit and HTML reports)`)}`,
    );
  if (f.expected !== undefined) out.push(`     expected: ${show(f.expected)}`);
  if (f.received !== undefined) out.push(`     received: ${show(f.received)}`);
  if (f.exchange)
    out.push(
      `     sent:     ${f.exchange.request.method} ${f.exchange.request.url}${f.exchange.request.body !== undefined ? ` ${show(f.exchange.request.body, 200)}` : ""}`,
    );
  if (f.requestId) out.push(`     request id: ${f.requestId}`);
  out.push("");
  return out;
}

function show(value: unknown, maxChars = Infinity): string {
  let text =
    typeof value === "string"
      ? JSON.stringify(value)
      : inspect(value, {
          depth: 4,
          breakLength: maxChars === Infinity ? 120 : Infinity,
          maxArrayLength: 12,
          maxStringLength: 300,
        });
  if (text.length > maxChars) text = `${text.slice(0, maxChars)}…`;
  return text.split("\n").join("\n               ");
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 100 ? `${flat.slice(0, 100)}…` : flat;
}

function coverageLine(label: string, count: CoverageCount, listMissing = true): string {
  const pct = count.total ? Math.round((100 * count.touched) / count.total) : 100;
  const missing =
    listMissing && count.missing.length
      ? `  not touched: ${count.missing.slice(0, 12).join(", ")}${count.missing.length > 12 ? `, … ${count.missing.length - 12} more` : ""}`
      : "";
  return `  ${label.padEnd(13)} ${String(count.touched).padStart(3)}/${String(count.total).padEnd(3)} (${pct}%)${missing}`;
}

function colors(on: boolean) {
  const wrap = (code: string) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);
  return { red: wrap("31"), green: wrap("32"), yellow: wrap("33"), dim: wrap("2"), bold: wrap("1") };
}

// ---------------------------------------------------------------------------

export function junitReport(report: RunReport): string {
  const byArea = new Map<string, TranscriptResult[]>();
  for (const r of report.details) {
    const area = r.transcript.split("/")[0] as string;
    byArea.set(area, [...(byArea.get(area) ?? []), r]);
  }
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(
    `<testsuites name="conformance" tests="${report.details.length}" failures="${report.failed}" skipped="${report.skipped + report.notImplemented}" time="${(report.durationMs / 1000).toFixed(3)}">`,
  );
  for (const [area, results] of byArea) {
    const failures = results.filter((r) => r.status === "failed").length;
    const skipped = results.filter((r) => r.status === "skipped" || r.status === "not-implemented").length;
    const time = results.reduce((s, r) => s + r.durationMs, 0) / 1000;
    out.push(
      `  <testsuite name="${xml(area)}" tests="${results.length}" failures="${failures}" skipped="${skipped}" time="${time.toFixed(3)}">`,
    );
    for (const r of results) {
      out.push(
        `    <testcase classname="${xml(area)}" name="${xml(r.transcript)}" time="${(r.durationMs / 1000).toFixed(3)}">`,
      );
      // JUnit has no "not implemented": a skip whose message starts with the outcome's words.
      if (r.status === "skipped") out.push(`      <skipped message="${xml(r.reason ?? "")}"/>`);
      if (r.status === "not-implemented")
        out.push(`      <skipped message="${xml(`${OUTCOME_LABEL[r.status]}: ${r.reason ?? ""}`)}"/>`);
      if (r.status === "failed") {
        const first = r.failures[0];
        const body = r.failures
          .map((f) =>
            [
              `step ${f.step}${f.rule ? ` [${f.rule}]` : ""}: ${f.message}`,
              ...(f.details ?? []).map((d) => `also: ${d}`),
              f.expected !== undefined ? `expected: ${JSON.stringify(f.expected)}` : "",
              f.received !== undefined ? `received: ${JSON.stringify(f.received)}` : "",
              f.requestId ? `request id: ${f.requestId}` : "",
              f.exchange ? `request: ${JSON.stringify(f.exchange.request, null, 2)}` : "",
              f.exchange && f.exchange.response.status
                ? `response: ${JSON.stringify(f.exchange.response, null, 2)}`
                : "",
              f.exchange?.events ? `events (up to the failure): ${JSON.stringify(f.exchange.events, null, 2)}` : "",
            ]
              .filter(Boolean)
              .join("\n"),
          )
          .join("\n\n");
        out.push(
          `      <failure message="${xml(first?.message ?? r.reason ?? "failed")}" type="${xml(first?.rule ?? "conformance")}">${xml(body)}</failure>`,
        );
      }
      if (r.rules.length)
        out.push(`      <properties><property name="rules" value="${xml(r.rules.join(", "))}"/></properties>`);
      out.push("    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return out.join("\n") + "\n";
}

function xml(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

/** The whole report as JSON, with the failures by rule and the summary by area added. */
export function jsonReport(report: RunReport): string {
  return JSON.stringify({ ...report, failuresByRule: failuresByRule(report), byArea: byArea(report) }, null, 2) + "\n";
}
