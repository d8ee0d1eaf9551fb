/**
 * The stateless engine: requests for every operation the profile implements, drawn by
 * fast-check from the contract's schemas (requests.ts: valid, boundary and invalid values,
 * hostile headers and bodies, wrong content types, huge and deeply nested JSON, invalid
 * UTF-8, slow, cut and aborted clients), sent byte for byte (wire.ts) to any base URL, each
 * answer checked (check.ts), and after each one a plain request to see the server still
 * serves. Fixtures are made over the API in the profile's primary account (account.ts) and
 * removed at the end.
 *
 * Seeded and bounded by a count and a time limit. By default it stops at the first finding
 * and shrinks it to the smallest request that still fails (within `shrinkMs`; every try is
 * a real request); `keepGoing` records every finding instead (a survey, no shrinking).
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { implementedOperations } from "../capabilities.ts";
import { Contract as KitContract } from "../contract.ts";
import type { Profile } from "../profile.ts";
import { AccountClient, cleanUp, makeFixtures, retryAfterMs, type Made } from "./account.ts";
import { ResponseChecker, type Problem } from "./check.ts";
import { curlCommand } from "./curl.ts";
import type { EngineTally, Finding } from "./findings.ts";
import { parseJson } from "./json.ts";
import { loadContract, type FuzzContract } from "./operations.ts";
import { caseArbitrary, describeCase, describeDelivery, toWire, type FuzzCase, type FuzzFixtures } from "./requests.ts";
import { sendRaw, type WireRequest, type WireResult, type WireTarget } from "./wire.ts";

export interface StatelessOptions {
  profile: Profile;
  /** Most fuzz requests (fast-check runs). */
  runs: number;
  seed: number;
  /** Stop drawing new requests after this long. */
  timeLimitMs?: number;
  /** fast-check's replay path of a failure. */
  path?: string;
  /** Megabyte values, 100k-level nesting and 1 MB headers as well (long runs). */
  huge?: boolean;
  /** Longest wait for an answer, in ms (then it is a hang; default 15 000). */
  timeoutMs?: number;
  /** Longest an answer to a request sent at full speed may take, in ms (default 10 000). */
  slowMs?: number;
  /** Only well-formed HTTP sent whole: for a server behind a proxy that answers malformed requests itself. */
  wellFormed?: boolean;
  /** Record every finding and go on, instead of stopping at the first and shrinking it. */
  keepGoing?: boolean;
  /** How long shrinking may go on after the first finding (default 60 s). */
  shrinkMs?: number;
  /** What the fuzzer's ids start with (default `fz-<seed>`). */
  idPrefix?: string;
  /** The largest JSON body the service accepts (default: the profile's settings.maxRequestBytes, else 8 MiB). */
  maxBodyBytes?: number;
  maxUploadBytes?: number;
  /** Milliseconds of Retry-After the run may honour in all (default the profile's rateLimitWaitMs). */
  retryAfterBudget?: { ms: number };
  signal?: AbortSignal;
  onProgress?: (report: StatelessReport) => void;
  progressEvery?: number;
  /** Each answer's operation, status and parsed body (for coverage). */
  onAnswer?: (operationId: string, status: number, json: unknown) => void;
  /** A reference hook: what the server under test logged during each request, for the findings. */
  serverLog?: { clear(): void; lines(): string[] };
}

export interface StatelessReport {
  seed: number;
  tally: EngineTally;
  healthChecks: number;
  /** Status (or `aborted`, `closed`, `timeout`) → count, per operation. */
  outcomes: Map<string, Record<string, number>>;
  /** Cases by the kind of hostility (body kind, delivery, …). */
  kinds: Map<string, number>;
  findings: Finding[];
  /** What the server logged on cases that passed (a reference hook): distinct first lines, at most 20. */
  serverLog: string[];
  made: { datasets: number; jobs: number };
  leftBehind: string[];
  /** A fast-check failure that was not a finding (the engine broke), with its message. */
  error?: string;
}

export async function fuzzStateless(options: StatelessOptions): Promise<StatelessReport> {
  const started = performance.now();
  const contract = loadContract();
  const kit = KitContract.load();
  const implemented = implementedOperations(kit, options.profile.implements);
  const operations = contract.operations.filter((op) => implemented?.has(op.operationId) ?? true);
  const report: StatelessReport = {
    seed: options.seed,
    tally: { tried: new Map(operations.map((op) => [op.operationId, 0])), requests: 0, durationMs: 0 },
    healthChecks: 0,
    outcomes: new Map(),
    kinds: new Map(),
    findings: [],
    serverLog: [],
    made: { datasets: 0, jobs: 0 },
    leftBehind: [],
  };
  const budget = options.retryAfterBudget ?? { ms: options.profile.timeouts.rateLimitWaitMs };
  const client = new AccountClient(options.profile, budget);
  // Unique per run, not per seed: a deleted dataset's id stays taken.
  const idPrefix = options.idPrefix ?? `fz-${options.seed.toString(36)}-${randomBytes(2).toString("hex")}`;
  const made: Made = { datasets: new Set(), jobs: new Set() };
  const has = (id: string) => operations.some((op) => op.operationId === id);
  const needs = {
    datasets: has("createDataset") && has("uploadDataset") && has("validateDatasetUpload") && has("getDataset"),
    sft: has("createSupervisedFineTuningJob"),
    dpo: has("createDpoJob"),
  };
  try {
    const fixtures = await makeFixtures(client, idPrefix, needs, made);
    const url = new URL(options.profile.baseUrl);
    const target: WireTarget = {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
      tls: url.protocol === "https:",
    };
    const checker = new ResponseChecker(contract, { basePath: fixtures.basePath, kit });
    const sub: FuzzContract = { ...contract, operations };
    const health = has("listModels") ? healthRequest(fixtures) : undefined;
    const timeoutMs = options.timeoutMs ?? 15_000;
    const maxBodyBytes = options.maxBodyBytes ?? Number(options.profile.settings.maxRequestBytes ?? 8 * 1024 * 1024);
    let shrinkUntil = Infinity;
    let lastFailure: Finding | undefined;
    const property = fc.asyncProperty(
      caseArbitrary(sub, fixtures, {
        huge: options.huge === true,
        maxBodyBytes,
        maxUploadBytes: options.maxUploadBytes ?? 1024 * 1024,
        wellFormed: options.wellFormed === true,
      }),
      async (c: FuzzCase) => {
        // Past the shrinking budget every further try is skipped, which ends shrinking at the smallest failure so far.
        fc.pre(Date.now() < shrinkUntil);
        if (options.signal?.aborted) return;
        options.serverLog?.clear();
        const result = await sendRaw(target, toWire(c), timeoutMs);
        record(report, c, result);
        if (result.response && options.onAnswer)
          options.onAnswer(c.operationId, result.response.status, parseJson(result.response.body.toString("utf8")));
        remember(made, c, result, fixtures);
        await honourRetryAfter(result, budget);
        const problem =
          checker.check(c, result, options.slowMs ?? 10_000) ??
          (health ? await stillServes(target, health, timeoutMs, report) : undefined);
        if (problem) {
          const finding = toFinding(c, result, problem, options.profile.origin, target, options.serverLog?.lines());
          if (options.keepGoing) {
            if (!report.findings.some((f) => f.rule === finding.rule && f.operationId === finding.operationId))
              report.findings.push(finding);
          } else {
            if (shrinkUntil === Infinity) shrinkUntil = Date.now() + (options.shrinkMs ?? 60_000);
            lastFailure = finding;
            const error = new Error(finding.message);
            error.stack = finding.message;
            throw error;
          }
        }
        for (const line of options.serverLog?.lines() ?? []) {
          const first = logKey(line);
          if (report.serverLog.length < 20 && !report.serverLog.includes(first)) report.serverLog.push(first);
        }
        if (options.onProgress && report.tally.requests % (options.progressEvery ?? 500) === 0)
          options.onProgress(report);
      },
    );
    try {
      await fc.assert(property, {
        seed: options.seed,
        numRuns: options.runs,
        path: options.path,
        endOnFailure: options.keepGoing === true,
        verbose: 0,
        includeErrorInReport: true,
        ...(options.timeLimitMs ? { interruptAfterTimeLimit: options.timeLimitMs, markInterruptAsFailure: false } : {}),
      });
    } catch (error) {
      const message = (error as Error).message;
      const path = /path: "([^"]*)"/.exec(message)?.[1];
      if (lastFailure) {
        lastFailure.replay = `seed ${options.seed}${path ? `, path ${path}` : ""}`;
        report.findings.push(lastFailure);
      } else report.error = message;
    }
  } finally {
    report.made = { datasets: made.datasets.size, jobs: made.jobs.size };
    report.leftBehind = await cleanUp(client, idPrefix, made, has("listDatasets")).catch((e: Error) => [
      `cleanup failed: ${e.message}`,
    ]);
    report.tally.durationMs = performance.now() - started;
  }
  return report;
}

function record(report: StatelessReport, c: FuzzCase, result: WireResult): void {
  report.tally.requests++;
  report.tally.tried.set(c.operationId, (report.tally.tried.get(c.operationId) ?? 0) + 1);
  const outcome = result.response && result.outcome !== "aborted" ? String(result.response.status) : result.outcome;
  const counts = report.outcomes.get(c.operationId) ?? {};
  counts[outcome] = (counts[outcome] ?? 0) + 1;
  report.outcomes.set(c.operationId, counts);
  for (const note of c.notes) {
    const kind = note
      .replace(/^(structural|delivery|content-type|content-encoding|multipart)\b.*$/, "$1")
      .replace(/^(\w+)=.*/, "$1=…")
      .replace(/ raw .*/, " raw")
      .slice(0, 50);
    report.kinds.set(kind, (report.kinds.get(kind) ?? 0) + 1);
  }
}

/** Datasets and jobs a fuzzed request made, so that the cleanup removes them. */
function remember(made: Made, c: FuzzCase, result: WireResult, fixtures: FuzzFixtures): void {
  const status = result.response?.status;
  if (status !== 200 && status !== 201) return;
  let body: { name?: unknown } | undefined;
  try {
    body = JSON.parse(result.response?.body.toString("utf8") ?? "");
  } catch {
    return;
  }
  const name = typeof body?.name === "string" ? body.name : "";
  const own = `accounts/${fixtures.account}/`;
  if (!name.startsWith(own)) return;
  const [collection, id] = name.slice(own.length).split("/");
  if (collection === "datasets" && id && c.method === "POST") made.datasets.add(id);
  if ((collection === "supervisedFineTuningJobs" || collection === "dpoJobs") && id && status === 201)
    made.jobs.add(`${collection}/${id}`);
}

async function honourRetryAfter(result: WireResult, budget: { ms: number }): Promise<void> {
  const response = result.response;
  if (!response || response.status !== 429) return;
  if (!response.body.toString("utf8").includes("TENANT_RATE_LIMITED")) return;
  const wait = retryAfterMs(429, response.headers["retry-after"] ?? null) ?? 0;
  if (wait > budget.ms) return;
  budget.ms -= wait;
  await new Promise((resolve) => setTimeout(resolve, wait));
}

async function stillServes(
  target: WireTarget,
  health: WireRequest,
  timeoutMs: number,
  report: StatelessReport,
): Promise<Problem | undefined> {
  const after = await sendRaw(target, health, timeoutMs);
  report.healthChecks++;
  const status = after.response?.status;
  if (status === 200 && after.response?.complete) return undefined;
  if (status === 429) return undefined; // a rate limit is an answer; honoured on the next request
  return {
    rule: "errors.malformed-request",
    message: `the server did not serve GET /models afterwards: ${after.outcome} ${status ?? ""} ${after.response?.body.toString("utf8").slice(0, 200) ?? ""}`,
  };
}

function healthRequest(fixtures: FuzzFixtures): WireRequest {
  const head = `GET ${fixtures.basePath}/models HTTP/1.1\r\nHost: ${fixtures.host}\r\nAuthorization: Bearer ${fixtures.keys[fixtures.account]}\r\nConnection: close\r\n\r\n`;
  return { head: Buffer.from(head), body: Buffer.alloc(0), delivery: { kind: "whole" }, isHead: false };
}

function toFinding(
  c: FuzzCase,
  result: WireResult,
  problem: Problem,
  origin: string,
  target: WireTarget,
  serverLog: string[] = [],
): Finding {
  const response = result.response;
  const caveat =
    c.delivery.kind === "whole"
      ? undefined
      : `the fuzzer sent this ${describeDelivery(c.delivery)}; curl sends it whole`;
  const scheme = target.tls ? "https" : "http";
  return {
    engine: "stateless",
    rule: problem.rule,
    operationId: c.operationId,
    message: `${problem.message}${serverLog.length ? `\nserver log:\n${serverLog.slice(0, 10).join("\n")}` : ""}`,
    method: c.method,
    url: c.target.startsWith("/") ? `${origin}${c.target}` : c.target,
    request: `${describeCase(c)} (outcome ${result.outcome} after ${Math.round(result.elapsedMs)} ms${result.socketError ? `, ${result.socketError}` : ""})`,
    curl: curlCommand({
      method: c.method,
      origin: origin.startsWith("http") ? origin : `${scheme}://${target.host}:${target.port}`,
      target: c.target,
      headers: c.headers.filter(([n]) => !/^(host|content-length|transfer-encoding)$/i.test(n)),
      body: c.headers.some(([n]) => /^transfer-encoding$/i.test(n)) ? Buffer.from(c.bodyPreview) : c.body,
      ...(caveat ? { caveat } : {}),
    }),
    ...(response
      ? {
          response: {
            status: response.status,
            headers: response.headers,
            body: response.body.toString("utf8").slice(0, 2000),
          },
        }
      : {}),
    ...(response?.headers["x-request-id"] ? { requestId: response.headers["x-request-id"] } : {}),
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

/** The report as text: totals, per operation counts and outcomes, kinds of hostility. */
export function formatStateless(report: StatelessReport): string {
  const out: string[] = [];
  out.push(
    `stateless, seed ${report.seed}: ${report.tally.requests} fuzz requests (+${report.healthChecks} health checks) in ${(report.tally.durationMs / 1000).toFixed(1)} s, ${report.findings.length} finding(s)`,
  );
  const width = Math.max(0, ...[...report.tally.tried.keys()].map((k) => k.length));
  for (const [id, tried] of report.tally.tried) {
    const outcomes = Object.entries(report.outcomes.get(id) ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}×${v}`)
      .join(" ");
    out.push(`  ${id.padEnd(width)} ${String(tried).padStart(6)}  ${outcomes}`);
  }
  const kinds = [...report.kinds.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40);
  out.push(`  hostile parts: ${kinds.map(([k, v]) => `${k} ×${v}`).join(", ")}`);
  if (report.serverLog.length) out.push(`  server log:\n    ${report.serverLog.join("\n    ")}`);
  if (report.error) out.push(`  the engine failed: ${report.error}`);
  return out.join("\n");
}
