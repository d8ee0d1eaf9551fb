/**
 * One fuzzing session against the real server: `startTestServer()` over a temp directory
 * with the dev seed (jobs are accepted but never trained: `runJobs: false`), fixtures made
 * over HTTP (READY SFT and DPO datasets, scratch datasets to delete, one queued job of each
 * kind), then fast-check drawing requests for every operation of the contract and checking
 * each answer (check.ts) and that the server still serves a normal request afterwards.
 *
 * Stops at the first finding (no shrinking: every run is a real request), with the seed
 * and path to replay it (`node scripts/fuzz.ts --seed S --path P`, with `--quick` for the
 * CI run's cases), the request, the answer and what the server logged meanwhile.
 */
import fc from "fast-check";
import { loadContract } from "./contract.ts";
import { ResponseChecker } from "./check.ts";
import { caseArbitrary, describeCase, operationIds, toWire, type FuzzCase, type FuzzFixtures } from "./requests.ts";
import { sendRaw, type WireRequest, type WireResult } from "./wire.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { ahoyPreferenceRows, ahoyRows, call, readyDataset, type Caller } from "../finetune/fixtures.ts";
import { tapLog } from "../../server/log.ts";

export interface FuzzOptions {
  runs: number;
  seed: number;
  /** fast-check's replay path of a failure. */
  path?: string;
  /** Megabyte values and 100k-level nesting as well (the long run). */
  huge?: boolean;
  /** Longest wait for an answer, in ms (then it is a hang). */
  timeoutMs?: number;
  /** Longest an answer to a request sent at full speed may take, in ms (default 10 000). */
  slowMs?: number;
  /** Progress lines (the long run prints one every `progressEvery` cases). */
  onProgress?: (done: number, report: FuzzReport) => void;
  progressEvery?: number;
  /** Record findings and go on instead of stopping at the first (a survey; no replay path). */
  keepGoing?: boolean;
}

export interface OperationCount {
  tried: number;
  /** Status (or `aborted`, `closed`) → count. */
  outcomes: Record<string, number>;
}

export interface FuzzReport {
  seed: number;
  runs: number;
  /** Fuzz requests sent. */
  requests: number;
  /** Normal requests sent after each fuzz request to see the server still serves. */
  healthChecks: number;
  perOperation: Map<string, OperationCount>;
  /** Cases by the kind of hostility (body kind, delivery, …). */
  kinds: Map<string, number>;
  slowest: { ms: number; description: string };
  durationMs: number;
  /** The fast-check failure message (seed, path, counterexample) and what was wrong. */
  failure?: string;
  /** With `keepGoing`: every finding, the request first. */
  findings: string[];
  /** What the server logged (console.error/warn) on cases that passed: first lines, distinct, at most 20. */
  serverLog: string[];
}

const MAX_UPLOAD_BYTES = 1024 * 1024;
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export async function fuzzServer(options: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const contract = loadContract();
  const checker = new ResponseChecker(contract);
  const report: FuzzReport = {
    seed: options.seed,
    runs: options.runs,
    requests: 0,
    healthChecks: 0,
    perOperation: new Map(operationIds(contract).map((id) => [id, { tried: 0, outcomes: {} }])),
    kinds: new Map(),
    slowest: { ms: 0, description: "" },
    durationMs: 0,
    findings: [],
    serverLog: [],
  };
  const logs = captureServerLog();
  let server: TestServer | undefined;
  try {
    server = await startTestServer({
      fineTuning: { runJobs: false },
      maxUploadBytes: MAX_UPLOAD_BYTES,
      maxBodyBytes: MAX_BODY_BYTES,
    });
    const fixtures = await makeFixtures(server);
    const url = new URL(server.origin);
    const target = { host: url.hostname, port: Number(url.port) };
    const timeoutMs = options.timeoutMs ?? 15_000;
    const health = healthRequest(fixtures);
    const property = fc.asyncProperty(
      caseArbitrary(contract, fixtures, {
        huge: options.huge === true,
        maxBodyBytes: MAX_BODY_BYTES,
        maxUploadBytes: MAX_UPLOAD_BYTES,
      }),
      async (c: FuzzCase) => {
        logs.clear();
        const result = await sendRaw(target, toWire(c), timeoutMs);
        record(report, c, result);
        const fail = (text: string) => {
          if (!options.keepGoing) {
            const error = new Error(text);
            error.stack = text; // the report is the request and the answer, not where the fuzzer noticed
            throw error;
          }
          report.findings.push(`${describeCase(c)}\n${text}`);
        };
        const problem = checker.check(c, result, options.slowMs ?? 10_000);
        if (problem) fail(failureText(problem, result, logs.lines()));
        const after = await sendRaw(target, health, timeoutMs);
        report.healthChecks++;
        if (after.response?.status !== 200 || !after.response.complete) {
          fail(
            failureText(
              `the server did not serve GET /v1/models afterwards: ${after.outcome} ${after.response?.status ?? ""} ${after.response?.body.toString("utf8").slice(0, 200) ?? ""}`,
              result,
              logs.lines(),
            ),
          );
        }
        for (const line of logs.lines()) {
          const first = logKey(line);
          if (report.serverLog.length < 20 && !report.serverLog.includes(first)) report.serverLog.push(first);
        }
        if (options.onProgress && report.requests % (options.progressEvery ?? 500) === 0)
          options.onProgress(report.requests, report);
      },
    );
    try {
      await fc.assert(property, {
        seed: options.seed,
        numRuns: options.runs,
        path: options.path,
        endOnFailure: true,
        verbose: 0,
        includeErrorInReport: true,
      });
    } catch (error) {
      report.failure = (error as Error).message;
    }
  } finally {
    logs.restore();
    await server?.close();
    report.durationMs = performance.now() - started;
  }
  return report;
}

function record(report: FuzzReport, c: FuzzCase, result: WireResult): void {
  report.requests++;
  const count = report.perOperation.get(c.operationId) as OperationCount;
  count.tried++;
  const outcome = result.response && result.outcome !== "aborted" ? String(result.response.status) : result.outcome;
  count.outcomes[outcome] = (count.outcomes[outcome] ?? 0) + 1;
  for (const note of c.notes) {
    const kind = note
      .replace(/^(structural|delivery|content-type|content-encoding|multipart)\b.*$/, "$1")
      .replace(/^(\w+)=.*/, "$1=…")
      .replace(/ raw .*/, " raw")
      .slice(0, 50);
    report.kinds.set(kind, (report.kinds.get(kind) ?? 0) + 1);
  }
  // Of the requests sent at full speed: how long the server itself took.
  if (c.delivery.kind === "whole" && result.outcome === "response" && result.elapsedMs > report.slowest.ms)
    report.slowest = { ms: result.elapsedMs, description: describeCase(c).slice(0, 300) };
}

function failureText(problem: string, result: WireResult, serverLog: string[]): string {
  const response = result.response;
  const head = response
    ? `${response.status} ${JSON.stringify(response.headers)}\n${response.body.toString("utf8").slice(0, 1000)}`
    : "(none)";
  return [
    `PROBLEM: ${problem}`,
    `OUTCOME: ${result.outcome} after ${Math.round(result.elapsedMs)} ms${result.socketError ? ` (${result.socketError})` : ""}`,
    `RESPONSE: ${head}`,
    `SERVER LOG:\n${serverLog.join("\n") || "(nothing)"}`,
  ].join("\n");
}

function healthRequest(fixtures: FuzzFixtures): WireRequest {
  const head = `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${fixtures.keys[fixtures.account]}\r\nConnection: close\r\n\r\n`;
  return { head: Buffer.from(head), body: Buffer.alloc(0), delivery: { kind: "whole" }, isHead: false };
}

/** Datasets and jobs for the fuzzer to name, made the way a user makes them. */
async function makeFixtures(server: TestServer): Promise<FuzzFixtures> {
  const account = "acme";
  // Unlimited requests and money for the fuzzed account: limits are tested elsewhere, and they would hide the handlers.
  await server.store.accounts.update(account, { requestsPerMinute: null, balanceMicros: 1e15, budgetMicros: null });
  const caller: Caller = { server, account, key: server.keys[account] as string };
  const sftVersion = await readyDataset(caller, "fz-sft", ahoyRows(12));
  const dpoVersion = await readyDataset(caller, "fz-dpo", ahoyPreferenceRows(12));
  // A row of about 200k tokens: estimates and jobs on it must count it as skipped (a 500 once, found by hand).
  const megabyteRow = {
    messages: [
      { role: "user", content: "word ".repeat(200_000) },
      { role: "assistant", content: "Ahoy." },
    ],
  };
  const hugeRowVersion = await readyDataset(caller, "fz-huge-row", [...ahoyRows(3), megabyteRow]);
  const scratch = ["fz-scratch-1", "fz-scratch-2", "fz-scratch-3"];
  for (const id of scratch) {
    const created = await call(caller, "POST", "/datasets", { datasetId: id, dataset: { displayName: id } });
    if (created.status !== 200) throw new Error(`fixture dataset ${id}: ${created.text}`);
  }
  const sft = await call(caller, "POST", "/supervisedFineTuningJobs", {
    baseModel: "accounts/maas/models/tiny-chat",
    inputDatasetVersion: sftVersion,
    config: { outputModelId: "fz-sft-model", epochs: 1 },
  });
  const dpo = await call(caller, "POST", "/dpoJobs", {
    baseModel: "accounts/maas/models/tiny-chat",
    inputDatasetVersion: dpoVersion,
    config: { outputModelId: "fz-dpo-model", epochs: 1 },
  });
  if (sft.status !== 201 || dpo.status !== 201) throw new Error(`fixture jobs: ${sft.text} ${dpo.text}`);
  const jobId = (name: string) => name.split("/").at(-1) as string;
  return {
    account,
    keys: server.keys,
    datasets: ["fz-sft", "fz-dpo", "fz-huge-row"],
    scratchDatasets: scratch,
    versions: [sftVersion, dpoVersion, hugeRowVersion],
    sftJobs: [jobId(sft.body.name)],
    dpoJobs: [jobId(dpo.body.name)],
    models: ["tiny-chat", "tiny-reasoner", "tiny-chat-community"],
  };
}

/** A server log line (one JSON object) without what differs on every request, so repeats show once. */
function logKey(line: string): string {
  try {
    const { time: _time, requestId: _id, durationMs: _ms, ...rest } = JSON.parse(line) as Record<string, unknown>;
    return JSON.stringify(rest);
  } catch {
    return line.split("\n")[0] ?? "";
  }
}

/**
 * The server logs failures on its log (server/log.ts, level warn and error) and a few with
 * console.error; keep what it says during each case for the report. Access lines (info)
 * are not kept: every request has one.
 */
function captureServerLog(): { clear(): void; lines(): string[]; restore(): void } {
  const original = { error: console.error, warn: console.warn };
  let lines: string[] = [];
  const keep = (...args: unknown[]) => {
    lines.push(args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : String(a))).join(" "));
    if (lines.length > 200) lines = lines.slice(-100);
  };
  console.error = keep;
  console.warn = keep;
  const untap = tapLog((line) => {
    if (!line.includes('"level":"info"') && !line.includes('"level":"debug"')) keep(line.replace(/\n$/, ""));
  });
  return {
    clear: () => (lines = []),
    lines: () => [...lines],
    restore: () => {
      untap();
      Object.assign(console, original);
    },
  };
}

/** A report as text: totals, per operation counts and outcomes, kinds of hostility. */
export function formatReport(report: FuzzReport): string {
  const out: string[] = [];
  out.push(
    `seed ${report.seed}: ${report.requests} fuzz requests (+${report.healthChecks} health checks) in ${(report.durationMs / 1000).toFixed(1)} s`,
  );
  const width = Math.max(...[...report.perOperation.keys()].map((k) => k.length));
  for (const [id, count] of report.perOperation) {
    const outcomes = Object.entries(count.outcomes)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}×${v}`)
      .join(" ");
    out.push(`  ${id.padEnd(width)} ${String(count.tried).padStart(6)}  ${outcomes}`);
  }
  const kinds = [...report.kinds.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40);
  out.push(`  hostile parts: ${kinds.map(([k, v]) => `${k} ×${v}`).join(", ")}`);
  out.push(
    `  slowest answer to a request sent whole: ${Math.round(report.slowest.ms)} ms — ${report.slowest.description}`,
  );
  out.push(`  server log: ${report.serverLog.length === 0 ? "nothing" : `\n    ${report.serverLog.join("\n    ")}`}`);
  return out.join("\n");
}
