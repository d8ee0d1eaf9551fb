/**
 * The conformance report as one self-contained HTML page (`conformance run --html`): a
 * compatibility table by area and by rule, every failure with its filled-in request, the
 * answer and the events up to the failure, expected and received values and request id,
 * and the coverage figures. No script, no external file: it reads the same from a disk,
 * a mail attachment or a CI artefact.
 *
 * Statuses are the kit's outcomes (conformance/runner.ts, `Outcome`), in the same words as
 * the terminal: passed, failed, skipped (the profile lacks a value the transcript needs, a
 * setup failed or was skipped, the run stopped early; also a rule no transcript of this
 * run names), not implemented (outside the profile's `implements`). Only passed is a pass.
 */
import type { Rule } from "./coverage.ts";
import type { RunReport, StepFailure, TranscriptResult } from "./runner.ts";
import type { Step, Transcript } from "./transcript.ts";

export type Status = "pass" | "fail" | "skipped" | "not-implemented";

/** The kit's words for its outcomes, as OUTCOME_LABEL in report.ts words them; the page's own status names are its CSS classes. */
const LABEL: Record<Status, string> = {
  pass: "passed",
  fail: "failed",
  skipped: "skipped",
  "not-implemented": "not implemented",
};

/** The request a failure came from, as far as it is known. */
export interface FailureRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** True when taken from the transcript (before its variables were filled in), not from the wire. */
  template?: boolean;
}

export interface HtmlReportOptions {
  /** The implementation's base URL, shown in the header. */
  baseUrl?: string;
  /** The rule catalogue, for the rules' text and the rules no transcript of this run named. */
  rules?: Rule[];
  /** The transcripts, to show the request of a failed step when the failure does not carry it. */
  transcripts?: Transcript[];
  /** When the run happened (default now). */
  date?: Date;
  title?: string;
  /**
   * What the run left and whether its time limit passed, in the kit's words
   * (cleanupLines and timeLimitLines of conformance/report.ts): shown as "What the run left".
   */
  leftLines?: string[];
}

export function statusOf(result: Pick<TranscriptResult, "status" | "reason">): Status {
  if (result.status === "passed") return "pass";
  if (result.status === "failed") return "fail";
  return result.status === "not-implemented" ? "not-implemented" : "skipped";
}

/** A rule's status over the transcripts that name it: any failure fails it; a pass needs one run that passed. */
function combine(statuses: Status[]): Status {
  if (statuses.includes("fail")) return "fail";
  if (statuses.includes("pass")) return "pass";
  if (statuses.includes("skipped")) return "skipped";
  return "not-implemented";
}

export interface AreaRow {
  area: string;
  counts: Record<Status, number>;
  status: Status;
}

export interface RuleRow {
  id: string;
  text: string;
  source: string;
  status: Status;
  transcripts: { id: string; status: Status }[];
}

export function areaRows(report: RunReport): AreaRow[] {
  const byArea = new Map<string, Status[]>();
  for (const r of report.details) {
    const area = areaOf(r.transcript);
    byArea.set(area, [...(byArea.get(area) ?? []), statusOf(r)]);
  }
  return [...byArea]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([area, statuses]) => {
      const counts: Record<Status, number> = { pass: 0, fail: 0, skipped: 0, "not-implemented": 0 };
      for (const s of statuses) counts[s]++;
      return { area, counts, status: combine(statuses) };
    });
}

export function ruleRows(report: RunReport, rules: Rule[] = []): RuleRow[] {
  const byRule = new Map<string, { id: string; status: Status }[]>();
  for (const r of report.details) {
    for (const rule of r.rules)
      byRule.set(rule, [...(byRule.get(rule) ?? []), { id: r.transcript, status: statusOf(r) }]);
  }
  // A failure pinned on a rule (a protocol check) fails that rule even if the transcript named others.
  for (const f of report.failures) {
    for (const rule of (f.rule ?? "").split(/,\s*/).filter(Boolean)) {
      const list = byRule.get(rule) ?? [];
      if (!list.some((t) => t.id === f.transcript && t.status === "fail"))
        list.push({ id: f.transcript, status: "fail" });
      byRule.set(rule, list);
    }
  }
  const known = new Map(rules.map((r) => [r.id, r]));
  const ids = [...new Set([...rules.map((r) => r.id), ...byRule.keys()])];
  return ids
    .map((id) => {
      const transcripts = byRule.get(id) ?? [];
      return {
        id,
        text: known.get(id)?.text ?? "",
        source: known.get(id)?.source ?? "",
        // A catalogue rule no transcript of this run named (an area left out): not run, so skipped.
        status: transcripts.length ? combine(transcripts.map((t) => t.status)) : ("skipped" as Status),
        transcripts,
      };
    })
    .sort((a, b) => naturalCompare(a.id, b.id));
}

function naturalCompare(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

/** `[POST /accounts/acme/datasets → 400]` at the end of a failure's message. */
const WIRE = /\[([A-Z]+) (\S+) → (\d{3})\]\s*$/;

export function failureRequest(failure: StepFailure, transcripts: Transcript[] = []): FailureRequest | undefined {
  const sent = failure.exchange?.request;
  if (sent)
    return {
      method: sent.method,
      path: sent.url,
      headers: sent.headers,
      ...(sent.body !== undefined ? { body: sent.body } : {}),
    };
  const carried = (
    failure as StepFailure & {
      request?: {
        method?: string;
        url?: string;
        path?: string;
        relativePath?: string;
        headers?: Record<string, string>;
        body?: unknown;
        json?: unknown;
      };
    }
  ).request;
  if (carried?.method) {
    return {
      method: carried.method,
      path: carried.relativePath ?? carried.path ?? carried.url ?? "",
      ...(carried.headers ? { headers: carried.headers } : {}),
      ...(carried.json !== undefined
        ? { body: carried.json }
        : carried.body !== undefined
          ? { body: carried.body }
          : {}),
    };
  }
  const wire = WIRE.exec(failure.message);
  const step = findStep(failure, transcripts);
  if (!wire && !step) return undefined;
  const spec = step?.request;
  const body = spec
    ? (spec.json ?? spec.text ?? (spec.file ? `(file ${spec.file})` : spec.form ? { form: spec.form } : undefined))
    : undefined;
  return {
    method: wire?.[1] ?? spec?.method ?? "?",
    path: wire?.[2] ?? spec?.path ?? "?",
    ...(spec?.headers
      ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([k, v]) => [k, String(v)])) }
      : {}),
    ...(body !== undefined ? { body } : {}),
    template: body !== undefined || spec?.headers !== undefined,
  };
}

function findStep(failure: StepFailure, transcripts: Transcript[]): Step | undefined {
  const t = transcripts.find((x) => x.id === failure.transcript);
  if (!t) return undefined;
  const all = [...t.steps, ...t.cleanup];
  return (
    all.find((s) => s.label === String(failure.step)) ??
    (typeof failure.step === "number" ? all.find((s) => s.index === failure.step) : undefined)
  );
}

function received(failure: StepFailure): unknown {
  return failure.received;
}

// ---------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const h = escapeHtml;

function pretty(value: unknown): string {
  if (value === undefined) return "(nothing)";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function badge(status: Status): string {
  return `<span class="badge ${cls(status)}" data-status="${status}">${LABEL[status]}</span>`;
}

function cls(status: Status): string {
  return status === "not-implemented" ? "na" : status;
}

function percent(touched: number, total: number): number {
  return total === 0 ? 100 : Math.round((100 * touched) / total);
}

function meter(label: string, touched: number, total: number, extra = "", missing: string[] = []): string {
  const p = percent(touched, total);
  return `<div class="meter" data-coverage="${h(label)}">
  <div class="meter-label"><strong>${h(label)}</strong> <span class="figure">${touched} / ${total}</span> <span class="pct">(${p}%)</span>${extra ? ` <span class="muted">${h(extra)}</span>` : ""}</div>
  <div class="meter-bar"><div style="width:${p}%"></div></div>
  ${missing.length ? `<details><summary>${missing.length} not touched</summary><p class="missing">${missing.map((m) => `<code>${h(m)}</code>`).join(" ")}</p></details>` : ""}
</div>`;
}

function slug(value: string): string {
  return value.replace(/[^a-zA-Z0-9]+/g, "-");
}

/** The area of a transcript (`inference/stream-basic` → `inference`); setup transcripts have none. */
function areaOf(transcript: string): string {
  return transcript.includes("/") ? (transcript.split("/")[0] as string) : "(setup)";
}

/** `name: value` lines of a header map. */
function headerLines(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n");
}

/** The request of a failure as text: its line, headers and body; "(not recorded)" when there is none. */
function requestText(request: FailureRequest | undefined): string {
  if (!request) return "(not recorded)";
  const headers = request.headers ? "\n" + headerLines(request.headers) : "";
  const body = request.body !== undefined ? "\n\n" + pretty(request.body) : "";
  return h(`${request.method} ${request.path}${headers}${body}`);
}

/** The answer a failure saw, with the events up to it, folded away; empty when no response came. */
function responseDetails(f: StepFailure): string {
  const response = f.exchange?.response;
  if (!response?.status) return "";
  const events = f.exchange?.events;
  const body = response.body !== undefined ? `\n\n${pretty(response.body)}` : "";
  const eventText = events
    ? `\n\n${events.map((e) => `event: ${e.event ?? "message"}\ndata: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}`).join("\n\n")}`
    : "";
  return `<details class="response"><summary>Response ${response.status}${events ? `, ${events.length} events up to the failure` : ""}</summary><pre>${h(
    `${headerLines(response.headers)}${body}${eventText}`,
  )}</pre></details>`;
}

/** One failure: what was sent, what was expected, what came back. */
function failureBlock(report: RunReport, options: HtmlReportOptions, f: StepFailure, i: number): string {
  const request = failureRequest(f, options.transcripts);
  const detail = report.details.find((d) => d.transcript === f.transcript);
  return `<article class="failure" id="failure-${i + 1}" data-transcript="${h(f.transcript)}">
  <h3><span class="num">${i + 1}</span> <a href="#t-${slug(f.transcript)}">${h(f.transcript)}</a>, step ${h(String(f.step))}${detail?.title ? ` <span class="muted">— ${h(detail.title)}</span>` : ""}</h3>
  <p class="message">${h(f.message)}</p>
  <dl>
    ${f.rule ? `<dt>rule</dt><dd><code>${h(f.rule)}</code></dd>` : ""}
    <dt>request id</dt><dd><code class="request-id">${h(f.requestId ?? "(none)")}</code></dd>
  </dl>
  <div class="panes">
    <section class="pane request"><h4>Request${request?.template ? ' <span class="muted">(from the transcript, before its variables were filled in)</span>' : ""}</h4>
      <pre>${requestText(request)}</pre></section>
    <section class="pane expected"><h4>Expected</h4><pre>${h(pretty(f.expected))}</pre></section>
    <section class="pane received"><h4>Received</h4><pre>${h(pretty(received(f)))}</pre></section>
  </div>
  ${f.details?.length ? `<details class="also"><summary>${f.details.length} more under this rule</summary><ul>${f.details.map((d) => `<li>${h(d)}</li>`).join("")}</ul></details>` : ""}
  ${responseDetails(f)}
</article>`;
}

/** A transcript's row: status, rules, requests, time, and a link to its first failure or the reason it did not run. */
function transcriptRow(report: RunReport, r: TranscriptResult): string {
  const s = statusOf(r);
  const firstFailure = report.failures.findIndex((f) => f.transcript === r.transcript);
  return `      <tr id="t-${slug(r.transcript)}" data-status="${s}"><td><code>${h(r.transcript)}</code><div class="muted">${h(r.title)}</div></td><td>${badge(s)}</td><td>${r.rules.map((x) => `<code>${h(x)}</code>`).join(" ")}</td><td class="n">${r.requests}</td><td class="n">${r.durationMs} ms</td><td>${
    firstFailure >= 0
      ? `<a href="#failure-${firstFailure + 1}">${r.failures.length} failure${r.failures.length === 1 ? "" : "s"}</a>`
      : h(r.reason ?? "")
  }</td></tr>`;
}

/** An area's transcripts as a table under the area's name and status. */
function transcriptSection(report: RunReport, a: AreaRow): string {
  const rows = report.details.filter((d) => areaOf(d.transcript) === a.area);
  return `<section class="area" id="area-${slug(a.area)}">
  <h3>${h(a.area)} ${badge(a.status)}</h3>
  <table class="transcripts">
    <thead><tr><th>transcript</th><th>status</th><th>rules</th><th>requests</th><th>time</th><th>note</th></tr></thead>
    <tbody>
${rows.map((r) => transcriptRow(report, r)).join("\n")}
    </tbody>
  </table>
</section>`;
}

/** The page's own style sheet: the page loads no file. */
const STYLE = `<style>
  :root { --pass: #1a7f37; --fail: #cf222e; --skip: #9a6700; --na: #6e7781; --line: #d0d7de; --soft: #f6f8fa; }
  * { box-sizing: border-box; }
  body { font: 14px/1.5 system-ui, "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #1f2328; margin: 0; padding: 24px 32px 64px; max-width: 1280px; }
  h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 36px 0 12px; border-bottom: 1px solid var(--line); padding-bottom: 6px; }
  h3 { font-size: 16px; margin: 20px 0 8px; } h4 { margin: 0 0 6px; font-size: 13px; }
  .muted { color: #656d76; font-weight: normal; }
  code, pre { font-family: "DejaVu Sans Mono", "Liberation Mono", Menlo, monospace; font-size: 12.5px; }
  pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 10px; overflow: auto; max-height: 420px; margin: 0; white-space: pre-wrap; word-break: break-word; }
  table { border-collapse: collapse; width: 100%; margin: 8px 0; }
  th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { background: var(--soft); font-weight: 600; } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
  .badge { display: inline-block; min-width: 64px; text-align: center; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; }
  .badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); } .badge.skipped { background: var(--skip); } .badge.na { background: var(--na); }
  .verdict { display: inline-block; margin: 12px 0; padding: 8px 16px; border-radius: 6px; font-size: 18px; font-weight: 700; color: #fff; }
  .verdict.ok { background: var(--pass); } .verdict.bad { background: var(--fail); }
  .summary { display: flex; gap: 12px; flex-wrap: wrap; margin: 8px 0 4px; }
  .summary .tile { border: 1px solid var(--line); border-radius: 6px; padding: 8px 16px; min-width: 120px; }
  .summary .tile b { display: block; font-size: 22px; }
  .tile.pass b { color: var(--pass); } .tile.fail b { color: var(--fail); } .tile.skipped b { color: var(--skip); } .tile.na b { color: var(--na); }
  .meters { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 16px; }
  .meter-bar { height: 10px; background: var(--soft); border: 1px solid var(--line); border-radius: 5px; overflow: hidden; margin-top: 4px; }
  .meter-bar div { height: 100%; background: var(--pass); }
  .missing code { display: inline-block; margin: 2px; }
  .failure { border: 1px solid var(--line); border-left: 4px solid var(--fail); border-radius: 6px; padding: 4px 16px 16px; margin: 16px 0; }
  .failure .message { color: var(--fail); font-weight: 600; }
  .failure dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; } .failure dt { color: #656d76; }
  .failure .num { display: inline-block; background: var(--fail); color: #fff; border-radius: 50%; width: 22px; height: 22px; text-align: center; font-size: 12px; line-height: 22px; }
  .panes { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 12px; }
  @media (max-width: 900px) { .panes { grid-template-columns: 1fr; } }
  .meta { color: #656d76; }
  .counts span { margin-right: 6px; }
  footer { margin-top: 48px; color: #656d76; font-size: 12px; }
</style>`;

/** The verdict's words: no failures, how many failed, or nothing ran. */
function verdictText(report: RunReport, verdict: boolean): string {
  if (verdict) return "No failures: every transcript that ran passed";
  if (report.failed > 0) return `Not conformant: ${report.failed} transcript${report.failed === 1 ? "" : "s"} failed`;
  return "Nothing ran";
}

/** The title, the run's facts, the verdict and the count of each status. */
function pageHeader(report: RunReport, options: HtmlReportOptions, title: string): string {
  const totals: Record<Status, number> = { pass: 0, fail: 0, skipped: 0, "not-implemented": 0 };
  for (const s of report.details.map(statusOf)) totals[s]++;
  const verdict = report.failed === 0 && report.passed > 0;
  const date = options.date ?? new Date();
  return `<header>
  <h1>${h(title)}</h1>
  <div class="meta">Profile <strong>${h(report.profile)}</strong>${options.baseUrl ? ` against <code>${h(options.baseUrl)}</code>` : ""} · contract ${h(report.contractVersion)} · run <code>${h(report.runId)}</code> · ${h(date.toISOString().replace("T", " ").slice(0, 19))} UTC · ${(report.durationMs / 1000).toFixed(1)} s · ${report.requests} requests</div>
  <div class="verdict ${verdict ? "ok" : "bad"}" id="verdict">${verdictText(report, verdict)}</div>
  <div class="summary" id="summary">
    <div class="tile pass"><b>${totals.pass}</b>passed</div>
    <div class="tile fail"><b>${totals.fail}</b>failed</div>
    <div class="tile skipped"><b>${totals.skipped}</b>skipped</div>
    <div class="tile na"><b>${totals["not-implemented"]}</b>not implemented</div>
  </div>
  <p class="muted">Skipped and not implemented never count as passed. <em>Not implemented</em>: the transcript calls an operation outside the profile's <code>implements</code>; <em>skipped</em>: the profile lacks a value the transcript requires (an optional feature, a kind of account), a setup it uses failed or was skipped, or the run stopped first.</p>
</header>`;
}

/** The four coverage meters: operations, status codes, error codes, rules. */
function coverageMeters(cov: RunReport["coverage"]): string {
  return `<div class="meters">
  ${meter("operations", cov.operations.touched, cov.operations.total, "", cov.operations.missing)}
  ${meter("status codes", cov.statusCodes.touched, cov.statusCodes.total, "operation × status pairs", cov.statusCodes.missing)}
  ${meter("error codes", cov.errorCodes.touched, cov.errorCodes.total, "", cov.errorCodes.missing)}
  ${meter("rules", cov.rules.touched, cov.rules.total, `${cov.rules.passed} passed`, cov.rules.missing)}
</div>`;
}

function areaTableRow(a: AreaRow): string {
  return `    <tr data-area="${h(a.area)}" data-status="${a.status}"><td><a href="#area-${slug(a.area)}">${h(a.area)}</a></td><td>${badge(a.status)}</td><td class="n">${a.counts.pass}</td><td class="n">${a.counts.fail}</td><td class="n">${a.counts.skipped}</td><td class="n">${a.counts["not-implemented"]}</td><td class="n">${a.counts.pass + a.counts.fail + a.counts.skipped + a.counts["not-implemented"]}</td></tr>`;
}

function ruleTableRow(r: RuleRow): string {
  return `    <tr data-rule="${h(r.id)}" data-status="${r.status}"><td><code>${h(r.id)}</code></td><td>${badge(r.status)}</td><td>${h(r.text)}${r.source ? ` <span class="muted">(${h(r.source)})</span>` : ""}</td><td>${
    r.transcripts.length
      ? r.transcripts.map((t) => `<a href="#t-${slug(t.id)}" class="${cls(t.status)}">${h(t.id)}</a>`).join(", ")
      : '<span class="muted">no transcript in this run</span>'
  }</td></tr>`;
}

export function htmlReport(report: RunReport, options: HtmlReportOptions = {}): string {
  const areas = areaRows(report);
  const rules = ruleRows(report, options.rules);
  const title = options.title ?? `Conformance report: ${report.profile}`;
  const failureBlocks = report.failures.map((f, i) => failureBlock(report, options, f, i)).join("\n");

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h(title)}</title>
${STYLE}
</head>
<body>
${pageHeader(report, options, title)}

<h2 id="coverage">Coverage of the interface document</h2>
${coverageMeters(report.coverage)}

<h2 id="by-area">Compatibility by area</h2>
<table class="areas">
  <thead><tr><th>area</th><th>status</th><th class="n">pass</th><th class="n">fail</th><th class="n">skipped</th><th class="n">not implemented</th><th class="n">transcripts</th></tr></thead>
  <tbody>
${areas.map(areaTableRow).join("\n")}
  </tbody>
</table>

<h2 id="by-rule">Compatibility by rule</h2>
<table class="rules">
  <thead><tr><th>rule</th><th>status</th><th>what it says</th><th>proved by</th></tr></thead>
  <tbody>
${rules.map(ruleTableRow).join("\n")}
  </tbody>
</table>

${leftSection(options.leftLines ?? [])}
<h2 id="failures">Failures (${report.failures.length})</h2>
${report.failures.length ? failureBlocks : '<p class="muted">None.</p>'}

<h2 id="transcripts">Transcripts</h2>
${areas.map((a) => transcriptSection(report, a)).join("\n")}

<footer>Written by <code>conformance run --html</code> of the inference-toolkit CLI from the kit's run report. Self-contained: no scripts, no external files.</footer>
</body>
</html>
`;
}

/** What the run left (only what the service still showed after the cleanup, and trained models), and a time limit reached. */
function leftSection(lines: string[]): string {
  if (!lines.length) return "";
  return `<h2 id="left">What the run left</h2>
<ul class="left">
${lines.map((line) => `  <li>${h(line.trim())}</li>`).join("\n")}
</ul>
`;
}
