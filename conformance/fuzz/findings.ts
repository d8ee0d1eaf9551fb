/**
 * What the fuzzer reports: each finding with the rule it breaks (rules.yaml, or
 * `contract:<operation>`), the operation, what was wrong, what was sent and a copy-paste
 * `curl`; and the whole run as the kit's RunReport, so that the terminal, JUnit and JSON
 * reports of `conformance run` (report.ts) serve `conformance fuzz` too: one "transcript"
 * per engine and operation (`fuzz/stateless/createResponse`), failed when it has findings.
 */
import type { CoverageSummary } from "../coverage.ts";
import type { RunReport, StepFailure, TranscriptResult } from "../index.ts";

export interface Finding {
  engine: "stateless" | "stateful";
  /** rules.yaml id, or `contract:<operationId>`. */
  rule: string;
  /** The operation of the request that showed it (`(unrouted)` outside the contract; a command name for stateful). */
  operationId: string;
  message: string;
  /** The request, described (method, target, headers, body preview, delivery). */
  request: string;
  /** Its method and URL (for the reports' "sent" line). */
  method: string;
  url: string;
  /** A copy-paste reproduction of the request that showed it. */
  curl: string;
  /** Status, headers and the start of the body, when an answer came. */
  response?: { status: number; headers: Record<string, string>; body: string };
  requestId?: string;
  /** Stateful: the shrunk command sequence that leads to it, in order. */
  sequence?: string[];
  /** How to replay it (seed, fast-check path). */
  replay?: string;
}

export interface EngineTally {
  /** Requests by operation id. */
  tried: Map<string, number>;
  requests: number;
  durationMs: number;
}

export function findingText(f: Finding): string {
  const lines = [`[${f.rule}] ${f.engine} ${f.operationId}: ${f.message}`];
  if (f.sequence?.length) lines.push(`  sequence:\n    ${f.sequence.join("\n    ")}`);
  lines.push(`  sent: ${f.request.slice(0, 1500)}`);
  if (f.response)
    lines.push(
      `  answer: ${f.response.status} ${JSON.stringify(f.response.headers).slice(0, 600)}\n    ${f.response.body.slice(0, 600)}`,
    );
  if (f.requestId) lines.push(`  request id: ${f.requestId}`);
  lines.push(`  reproduce:\n    ${f.curl.split("\n").join("\n    ")}`);
  if (f.replay) lines.push(`  replay: ${f.replay}`);
  return lines.join("\n");
}

/** The fuzz run as a RunReport: one result per engine and operation tried. */
export function toRunReport(options: {
  runId: string;
  profile: string;
  contractVersion: string;
  findings: Finding[];
  engines: { name: "stateless" | "stateful"; tally: EngineTally }[];
  coverage: CoverageSummary;
  durationMs: number;
  leftBehind: string[];
  modelsLeft: string[];
  made: { datasets: number; jobs: number };
  rateLimitWaitedMs: number;
  interrupted: boolean;
}): RunReport {
  const details: TranscriptResult[] = [];
  for (const { name, tally } of options.engines) {
    const ops = new Set([
      ...tally.tried.keys(),
      ...options.findings.filter((f) => f.engine === name).map((f) => f.operationId),
    ]);
    for (const op of [...ops].sort()) {
      const mine = options.findings.filter((f) => f.engine === name && f.operationId === op);
      const failures: StepFailure[] = mine.map((f) => toFailure(`fuzz/${name}/${op}`, f));
      details.push({
        transcript: `fuzz/${name}/${op}`,
        title: `${tally.tried.get(op) ?? 0} ${name === "stateful" ? "commands" : "requests"} of ${op}`,
        status: failures.length > 0 ? "failed" : "passed",
        durationMs: 0,
        rules: [...new Set(mine.map((f) => f.rule))],
        requests: tally.tried.get(op) ?? 0,
        failures,
      });
    }
  }
  const failed = details.filter((d) => d.status === "failed").length;
  return {
    passed: details.length - failed,
    failed,
    skipped: 0,
    notImplemented: 0,
    interrupted: options.interrupted,
    leftBehind: options.leftBehind,
    // A fuzz run's count and minutes are its bounds, not a limit it can fail.
    timedOut: false,
    inFlight: [],
    modelsLeft: options.modelsLeft,
    made: options.made,
    failures: details.flatMap((d) => d.failures),
    results: details.map((d) => ({ transcript: d.transcript, status: d.status, durationMs: d.durationMs })),
    coverage: options.coverage,
    durationMs: options.durationMs,
    details,
    profile: options.profile,
    contractVersion: options.contractVersion,
    runId: options.runId,
    requests: options.engines.reduce((n, e) => n + e.tally.requests, 0),
    rateLimitWaitedMs: options.rateLimitWaitedMs,
  };
}

function toFailure(transcript: string, f: Finding): StepFailure {
  return {
    transcript,
    step: f.sequence?.length ? `sequence of ${f.sequence.length}` : "request",
    rule: f.rule,
    message: f.message,
    details: [
      `reproduce: ${f.curl}`,
      ...(f.sequence ?? []).map((s) => `sequence: ${s}`),
      ...(f.replay ? [`replay: ${f.replay}`] : []),
    ],
    ...(f.requestId ? { requestId: f.requestId } : {}),
    exchange: {
      request: { method: f.method, url: f.url, headers: {}, body: f.request.slice(0, 2000) },
      response: f.response
        ? { status: f.response.status, headers: f.response.headers, body: f.response.body }
        : { status: 0, headers: {}, body: "" },
    },
  } as StepFailure;
}
