/**
 * What operating costs (issue 18): throughput of the same server with its access log and
 * metrics on, against the same server with both off, measured in this run on this machine.
 *
 *  - off: LOG_LEVEL=silent and no METRICS_PORT (no access hook, no store wrapper, no metrics);
 *  - on:  LOG_LEVEL=info with stderr to a file (one JSON line per request, as a collector
 *         would tail it), METRICS_PORT set, and /metrics scraped every second (fifteen
 *         times as often as Prometheus' default).
 *
 * Both are sent `GET /healthz` every second, as a load balancer would: in one pinned run, a
 * /healthz a second cost a server with metrics off, answering 11 000 requests of one kind a
 * second, about 7 % more CPU per request, as much as a scrape; probed on one side only,
 * that share would be counted against the metrics.
 *
 * Both run with response validation off, as production does (the development seed is
 * loaded for the demo key). Both are `node server/main.ts` child processes with one routing
 * file (tiny-chat on an upstream on loopback that answers at once). Each round starts a
 * fresh pair (in alternating order) and loads them one at a time in short runs, so that a
 * machine whose load drifts (it is shared) shifts both alike; the ratio is the median of
 * the rounds' ratios. `--control` runs the same with both servers off: its ratio shows the
 * method's own error (an A/A test).
 *
 * The servers run on a core of their own and this process (the load generator and the
 * upstream) on the other (bench/support/cores.ts), when the machine allows it: unpinned,
 * two identical servers differed by up to 14 % in CPU per request (`--control`), pinned
 * by about 5 %.
 *
 * Two figures per kind of request: requests per second, and CPU time of the server process
 * per request (utime + stime from /proc). On a machine shared with other work, throughput
 * swings with whatever else runs (pairs measured seconds apart differ by 2×), while CPU
 * per request does not: its ratio (off ÷ on) is the throughput ratio a server that has its
 * core to itself would show, and it is what the target is checked on. Requests are
 * POST /v1/responses (a generation through the upstream: validation, auth, billing, the
 * store) and GET /v1/models (the shortest request path, where a fixed per-request cost
 * shows most). Target (decided 2026-11-28): logs and metrics add at most 15 µs of CPU to a
 * request (the median over rounds of on − off, each round's pair measured side by side);
 * the ratio off ÷ on is printed too.
 *
 *   node bench/ops-overhead.ts [--seconds 3] [--rounds 6] [--json out.json] [--cpu-prof DIR] [--control] [--part log|metrics|both]
 *
 * --part: what "on" turns on (default both, the target's case); log or metrics alone shows which part costs.
 *
 * --cpu-prof DIR writes each server's CPU profile there (node --cpu-prof), to see where the
 * difference goes.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { GENERATOR_CORE, MEASURED_CORE, pin, pinning } from "./support/cores.ts";
import { startInstantUpstream } from "./support/upstream.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "6" },
    json: { type: "string" },
    "cpu-prof": { type: "string" },
    control: { type: "boolean", default: false },
    part: { type: "string", default: "both" },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
/** The most CPU logs and metrics may add to a request, in microseconds. */
const TARGET_ADDED_US = 15;

/** What "on" turns on: both (the target's case), or one part alone to see which one costs. */
function onEnv(part: string | undefined): Record<string, string> {
  if (part === "log") return { LOG_LEVEL: "info" };
  if (part === "metrics") return { LOG_LEVEL: "silent", METRICS_PORT: "0" };
  if (part === "both") return { LOG_LEVEL: "info", METRICS_PORT: "0" };
  throw new Error(`--part is log, metrics or both, not ${part}`);
}

const ACME_KEY = "sk-dev-acme-00000000000000000000000000000000";
const ADMIN = fileURLToPath(new URL("../server/admin/cli.ts", import.meta.url));
const MAIN = fileURLToPath(new URL("../server/main.ts", import.meta.url));
const HEADERS = { "content-type": "application/json", authorization: `Bearer ${ACME_KEY}` };
const RESPONSES_BODY = JSON.stringify({ model: "tiny-chat", input: "Hello!", store: false, max_output_tokens: 16 });

interface Variant {
  name: "off" | "on";
  env: Record<string, string>;
}

interface Running {
  baseUrl: string;
  metricsUrl?: string;
  child: ChildProcess;
}

pin(process.pid, GENERATOR_CORE);
const dir = mkdtempSync(path.join(os.tmpdir(), "bench-ops-"));
const upstream = await startInstantUpstream({ chunks: 5 });
writeFileSync(
  path.join(dir, "routing.json"),
  JSON.stringify({
    version: "bench",
    providers: { upstream: { type: "openai-compatible", baseUrl: upstream.baseUrl, model: "m" } },
    models: { "tiny-chat": { primary: "upstream", standby: [] } },
    contentPolicy: { blockedInputTerms: [], blockedOutputTerms: [] },
  }),
);
const logFile = path.join(dir, "server.log");

async function start(variant: Variant): Promise<Running> {
  const dataDir = path.join(dir, `data-${variant.name}`);
  // Stderr to a file: the log's real cost (serialising and writing each line), not a terminal's.
  const stderr = openSync(variant.name === "on" ? logFile : "/dev/null", "a");
  const profile = values["cpu-prof"]
    ? ["--cpu-prof", "--cpu-prof-dir", values["cpu-prof"], "--cpu-prof-name", `${variant.name}.cpuprofile`]
    : [];
  const child = spawn(process.execPath, [...profile, MAIN], {
    env: {
      ...process.env,
      NODE_ENV: "",
      VALIDATE_RESPONSES: "0",
      DATA_DIR: dataDir,
      PORT: "0",
      HOST: "127.0.0.1",
      ROUTING_FILE: path.join(dir, "routing.json"),
      ...variant.env,
    },
    stdio: ["ignore", "pipe", stderr],
  });
  closeSync(stderr);
  pin(child.pid as number, MEASURED_CORE);
  try {
    return await ready(child, variant, dataDir);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}

async function ready(child: ChildProcess, variant: Variant, dataDir: string): Promise<Running> {
  const output = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout!.on("data", (data: Buffer) => {
      text += String(data);
      if (/Listening on/.test(text) && (variant.env.METRICS_PORT === undefined || /Metrics at/.test(text)))
        resolve(text);
    });
    child.once("exit", (code) => reject(new Error(`the server exited (${code}): ${text}`)));
  });
  // The demo account allows 600 requests a minute; a benchmark sends that many in a second.
  const env = { ...process.env, DATA_DIR: dataDir };
  execFileSync(process.execPath, [ADMIN, "limits", "set", "acme", "--rpm", "none", "--budget", "none"], {
    env,
    stdio: "ignore",
  });
  execFileSync(process.execPath, [ADMIN, "balance", "set", "acme", "1000000.00"], { env, stdio: "ignore" });
  const origin = /Listening on (http:\/\/\S+)/.exec(output)?.[1] as string;
  const metrics = /Metrics at (\S+)/.exec(output)?.[1];
  return { baseUrl: `${origin}/v1`, child, ...(metrics ? { metricsUrl: metrics } : {}) };
}

async function stop(running: Running): Promise<void> {
  const exited = once(running.child, "exit");
  // A profiled server must exit on its own to write its profile; SIGTERM drains (nothing is in flight).
  running.child.kill(values["cpu-prof"] ? "SIGTERM" : "SIGKILL");
  await exited;
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
    .replace(/^.*\) /, "")
    .split(" ");
  // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the command name; in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Run {
  rps: number;
  /** Server CPU microseconds per request. */
  cpuUs: number;
}

/** Reads `url`; a failure is left to the measurement (the load's own requests are checked). */
function poll(url: string): void {
  void fetch(url).then(
    (r) => r.text(),
    () => "",
  );
}

/**
 * Requests per second at full tilt and the server's CPU per request, meanwhile probing
 * /healthz every second, and scraping /metrics every second when there is one.
 */
async function throughput(running: Running, kind: "responses" | "models"): Promise<Run> {
  const timer = setInterval(() => probe(running), 1000);
  const cpuBefore = cpuSeconds(running.child.pid as number);
  try {
    const result = await autocannon({
      url: kind === "responses" ? `${running.baseUrl}/responses` : `${running.baseUrl}/models`,
      method: kind === "responses" ? "POST" : "GET",
      headers: HEADERS,
      ...(kind === "responses" ? { body: RESPONSES_BODY } : {}),
      duration: SECONDS,
      connections: 32,
    });
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`${kind}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
    return {
      rps: result.requests.average,
      cpuUs: ((cpuSeconds(running.child.pid as number) - cpuBefore) * 1e6) / result.requests.total,
    };
  } finally {
    clearInterval(timer);
  }
}

/** What a load balancer and a scraper send: `GET /healthz`, and `GET /metrics` when there is one. */
function probe(running: Running): void {
  poll(new URL("/healthz", running.baseUrl).href);
  if (running.metricsUrl) poll(running.metricsUrl);
}

async function warm(running: Running): Promise<void> {
  // The JIT, the connection pool to the upstream, the store's caches, and the probes and
  // scrapes the measurement sends too: the first scrape of a process deoptimises code that
  // had only seen one kind of request (--trace-deopt: about 60 functions), once in its
  // life; warmed without it, that one-time cost fell inside a measured window of a fresh
  // process (a scrape a second cost 0.84 in 3 s windows against 0.94 in 10 s windows).
  for (const kind of ["responses", "models"] as const) {
    probe(running);
    await autocannon({
      url: `${running.baseUrl}/${kind}`,
      method: kind === "responses" ? "POST" : "GET",
      headers: HEADERS,
      ...(kind === "responses" ? { body: RESPONSES_BODY } : {}),
      duration: 1,
      connections: 32,
    });
  }
}

function round3(value: number): number {
  return Number(value.toFixed(3));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const variants: Variant[] = [
  { name: "off", env: { LOG_LEVEL: "silent" } },
  { name: "on", env: values.control ? { LOG_LEVEL: "silent" } : onEnv(values.part) },
];
interface Figures {
  off: Run[];
  on: Run[];
  /** on ÷ off requests per second, per pair. */
  rpsRatios: number[];
  /** off ÷ on CPU per request, per pair. */
  cpuRatios: number[];
  /** on − off CPU per request in µs, per pair. */
  addedUs: number[];
}
const figures: Record<string, Figures> = {
  responses: { off: [], on: [], rpsRatios: [], cpuRatios: [], addedUs: [] },
  models: { off: [], on: [], rpsRatios: [], cpuRatios: [], addedUs: [] },
};
const servers: Record<string, Running> = {};
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Fresh processes each round, started in alternating order: measured with the same two
    // processes throughout, two identical servers differed by 25 % (whichever started second
    // was slower), a bias of the process and not of its settings.
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) servers[variant.name] = await start(variant);
    for (const variant of order) await warm(servers[variant.name] as Running);
    for (const kind of ["responses", "models"] as const) {
      const pair: Record<string, Run> = {};
      for (const variant of order) pair[variant.name] = await throughput(servers[variant.name] as Running, kind);
      const { off, on } = pair as { off: Run; on: Run };
      const f = figures[kind]!;
      f.off.push(off);
      f.on.push(on);
      f.rpsRatios.push(on.rps / off.rps);
      f.cpuRatios.push(off.cpuUs / on.cpuUs);
      f.addedUs.push(on.cpuUs - off.cpuUs);
    }
    for (const name of Object.keys(servers)) {
      await stop(servers[name] as Running);
      delete servers[name];
    }
  }
  const report: Record<string, unknown> = {
    pinned: pinning(),
    seconds: SECONDS,
    rounds: ROUNDS,
    targetAddedUs: TARGET_ADDED_US,
    logBytes: statSync(logFile).size,
  };
  console.log(
    pinning()
      ? `servers on core ${MEASURED_CORE}, load generator on core ${GENERATOR_CORE}`
      : "unpinned (no taskset or one core): expect a larger error",
  );
  let met = true;
  for (const kind of ["responses", "models"] as const) {
    const f = figures[kind]!;
    const offRps = median(f.off.map((r) => r.rps));
    const onRps = median(f.on.map((r) => r.rps));
    const offCpu = median(f.off.map((r) => r.cpuUs));
    const onCpu = median(f.on.map((r) => r.cpuUs));
    const rpsRatio = median(f.rpsRatios);
    const cpuRatio = median(f.cpuRatios);
    const addedUs = median(f.addedUs);
    met &&= addedUs <= TARGET_ADDED_US;
    report[kind] = {
      offRps: Math.round(offRps),
      onRps: Math.round(onRps),
      rpsRatio: round3(rpsRatio),
      offCpuUs: Math.round(offCpu),
      onCpuUs: Math.round(onCpu),
      cpuRatio: round3(cpuRatio),
      addedUs: round3(addedUs),
      pairs: f,
    };
    console.log(
      `${kind.padEnd(9)} req/s off ${offRps.toFixed(0).padStart(5)} on ${onRps.toFixed(0).padStart(5)} (on/off ${rpsRatio.toFixed(3)})   ` +
        `CPU per request off ${offCpu.toFixed(0)} µs on ${onCpu.toFixed(0)} µs: added ${addedUs.toFixed(1)} µs (target ≤ ${TARGET_ADDED_US}; off/on ${cpuRatio.toFixed(3)})`,
    );
  }
  console.log(
    `log written while on: ${(statSync(logFile).size / 1e6).toFixed(1)} MB; ${met ? "target met" : "TARGET MISSED"}`,
  );
  if (values.json) writeFileSync(values.json, JSON.stringify({ ...report, met }, null, 2));
  if (!met) process.exitCode = 1;
} finally {
  for (const running of Object.values(servers)) await stop(running);
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
}
