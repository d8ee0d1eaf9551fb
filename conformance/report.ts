/**
 * Reports of a run: readable text for a terminal (each failure with its transcript, step,
 * rule, expected and received values and the request id), JUnit XML for CI, and JSON.
 */
import { inspect } from "node:util";
import type { CoverageCount } from "./coverage.ts";
import type { RunReport, StepFailure, TranscriptResult } from "./runner.ts";

export interface TextOptions {
  color?: boolean;
  /** List every transcript, not only failures and skips. */
  verbose?: boolean;
  baseUrl?: string;
}

export function textReport(report: RunReport, options: TextOptions = {}): string {
  const c = colors(options.color ?? false);
  const lines: string[] = [];
  lines.push(c.bold(`Conformance run ${report.runId}: profile ${report.profile}${options.baseUrl ? ` → ${options.baseUrl}` : ""}, contract ${report.contractVersion}`));
  lines.push("");
  for (const r of report.details) {
    if (r.status === "passed" && !options.verbose) continue;
    if (r.status === "passed") lines.push(`  ${c.green("✓")} ${r.transcript} ${c.dim(`(${r.durationMs} ms)`)}`);
    else if (r.status === "skipped") lines.push(`  ${c.yellow("-")} ${r.transcript} ${c.dim(`skipped: ${r.reason ?? ""}`)}`);
    else lines.push(`  ${c.red("✗")} ${r.transcript} ${c.dim(`(${r.durationMs} ms)`)}`);
  }
  if (report.failures.length) {
    lines.push("", c.bold("Failures"), "");
    report.failures.forEach((f, i) => lines.push(...failureLines(f, i + 1, report.details, c)));
  }
  lines.push("", c.bold("Coverage of the interface document"));
  const cov = report.coverage;
  lines.push(coverageLine("operations", cov.operations));
  lines.push(coverageLine("status codes", cov.statusCodes, false));
  lines.push(coverageLine("error codes", cov.errorCodes));
  lines.push(`${coverageLine("rules", cov.rules)}${c.dim(`  (${cov.rules.passed} passed)`)}`);
  lines.push("");
  const waited = report.rateLimitWaitedMs > 0 ? `; honoured Retry-After of the service's rate limit for ${(report.rateLimitWaitedMs / 1000).toFixed(0)} s in all` : "";
  const summary = `${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped in ${(report.durationMs / 1000).toFixed(1)} s (${report.requests} requests${waited})`;
  lines.push(report.failed > 0 ? c.red(c.bold(summary)) : c.green(c.bold(summary)));
  return lines.join("\n");
}

function failureLines(f: StepFailure, n: number, details: TranscriptResult[], c: ReturnType<typeof colors>): string[] {
  const title = details.find((d) => d.transcript === f.transcript)?.title;
  const out = [`  ${n}) ${c.bold(f.transcript)}, step ${f.step}${title ? c.dim(` — ${title}`) : ""}`];
  if (f.rule) out.push(`     rule:     ${f.rule}`);
  out.push(`     ${c.red(f.message)}`);
  if (f.expected !== undefined) out.push(`     expected: ${show(f.expected)}`);
  if (f.received !== undefined) out.push(`     received: ${show(f.received)}`);
  if (f.requestId) out.push(`     request id: ${f.requestId}`);
  out.push("");
  return out;
}

function show(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : inspect(value, { depth: 4, breakLength: 120, maxArrayLength: 12, maxStringLength: 300 });
  return text.split("\n").join("\n               ");
}

function coverageLine(label: string, count: CoverageCount, listMissing = true): string {
  const pct = count.total ? Math.round((100 * count.touched) / count.total) : 100;
  const missing = listMissing && count.missing.length ? `  not touched: ${count.missing.slice(0, 12).join(", ")}${count.missing.length > 12 ? `, … ${count.missing.length - 12} more` : ""}` : "";
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
  out.push(`<testsuites name="conformance" tests="${report.details.length}" failures="${report.failed}" skipped="${report.skipped}" time="${(report.durationMs / 1000).toFixed(3)}">`);
  for (const [area, results] of byArea) {
    const failures = results.filter((r) => r.status === "failed").length;
    const skipped = results.filter((r) => r.status === "skipped").length;
    const time = results.reduce((s, r) => s + r.durationMs, 0) / 1000;
    out.push(`  <testsuite name="${xml(area)}" tests="${results.length}" failures="${failures}" skipped="${skipped}" time="${time.toFixed(3)}">`);
    for (const r of results) {
      out.push(`    <testcase classname="${xml(area)}" name="${xml(r.transcript)}" time="${(r.durationMs / 1000).toFixed(3)}">`);
      if (r.status === "skipped") out.push(`      <skipped message="${xml(r.reason ?? "")}"/>`);
      if (r.status === "failed") {
        const first = r.failures[0];
        const body = r.failures
          .map((f) => [`step ${f.step}${f.rule ? ` [${f.rule}]` : ""}: ${f.message}`, f.expected !== undefined ? `expected: ${JSON.stringify(f.expected)}` : "", f.received !== undefined ? `received: ${JSON.stringify(f.received)}` : "", f.requestId ? `request id: ${f.requestId}` : ""].filter(Boolean).join("\n"))
          .join("\n\n");
        out.push(`      <failure message="${xml(first?.message ?? r.reason ?? "failed")}" type="${xml(first?.rule ?? "conformance")}">${xml(body)}</failure>`);
      }
      if (r.rules.length) out.push(`      <properties><property name="rules" value="${xml(r.rules.join(", "))}"/></properties>`);
      out.push("    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return out.join("\n") + "\n";
}

function xml(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function jsonReport(report: RunReport): string {
  return JSON.stringify(report, null, 2) + "\n";
}
