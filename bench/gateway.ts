/**
 * Gateway overhead and the framework ceiling (issue 9). Everything is measured in this
 * run on this machine, against baselines measured in the same run:
 *
 *  - overhead: requests to an OpenAI-compatible upstream on loopback that answers at once,
 *    sent directly (baseline) and through the server's /v1/responses and
 *    /v1/chat/completions, evenly spaced at a fixed rate (open loop: support/open-loop.ts;
 *    autocannon's rate limit sends each second's quota in one burst); added p50/p99/p99.9
 *    latency; with response validation on (development) and off (production);
 *  - streaming: time to the first event and events per second, direct vs through;
 *  - ceiling: the most requests per second a bare node:http handler that parses the JSON
 *    body and answers can serve (baseline, a child process like the server:
 *    bench/support/baseline-server.ts) vs the full stack (target ≥ 0.25, issue 20).
 *
 * Latency is that of a server serving the rate steadily: each measured run follows a warm
 * run at the same rate on the same path (--warm seconds), and each server is started just
 * before its runs. Measured on 2026-11-27, a fresh server under 1 000 req/s of
 * POST /v1/responses in 5 s slices: p99 198, 11, 50 and 22 ms over the first 20 s, then
 * 4.1–6.2 ms from 20 s on (several runs); per-process probes showed V8 still optimising the
 * path (about 400 functions in 8 s after a 5 s warm-up of a path) and mark-compact
 * collections while the heap grows. That is a young process, not the added latency of a
 * gateway under a steady 1 000 req/s, which is what the target asks. Nor are the stalls of
 * the other processes: each measured run's load generator (support/open-loop-process.ts)
 * and each server's upstream are processes started for those runs, so that their own
 * mark-compacts, which in processes serving the whole benchmark came inside a window,
 * stay out of it.
 *
 *   node bench/gateway.ts [--seconds 10] [--warm 25] [--rate 1000] [--json out.json]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { Agent, request } from "undici";
import { startBaseline } from "./support/baseline-process.ts";
import { openLoopInChild } from "./support/open-loop-process.ts";
import { startUpstreamProcess, type InstantUpstream } from "./support/upstream.ts";
import { ACME_KEY, startBenchServer } from "./support/server-process.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    warm: { type: "string", default: "25" },
    rate: { type: "string", default: "1000" },
    json: { type: "string" },
  },
});
const SECONDS = Number(values.seconds);
const WARM_SECONDS = Number(values.warm);
const RATE = Number(values.rate);

const RESPONSES_BODY = JSON.stringify({ model: "tiny-chat", input: "Hello!", store: false, max_output_tokens: 16 });
const CHAT_BODY = JSON.stringify({
  model: "tiny-chat",
  messages: [{ role: "user", content: "Hello!" }],
  max_tokens: 16,
});
const HEADERS = { "content-type": "application/json", authorization: `Bearer ${ACME_KEY}` };

interface Load {
  rps: number;
  p50: number;
  p99: number;
  /** Open loop only. */
  p999?: number;
  errors: number;
  non2xx: number;
  /** Open loop only: how late the generator sent its requests, p99 ms (large: it did not keep up). */
  sendLateP99?: number;
}

/**
 * At `rate` requests a second, evenly spaced, after a warm run of WARM_SECONDS at the same
 * rate (latency at a steady rate), or at full tilt without one (the ceiling).
 */
async function load(url: string, body: string, rate?: number): Promise<Load> {
  if (rate !== undefined) {
    const { rps, p50, p99, p999, errors, sendLateP99 } = await openLoopInChild(
      { url, method: "POST", headers: HEADERS, body, rate, seconds: SECONDS },
      WARM_SECONDS,
    );
    return { rps, p50, p99, p999, errors, non2xx: 0, sendLateP99 };
  }
  const result = await autocannon({ url, method: "POST", headers: HEADERS, body, duration: SECONDS, connections: 32 });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** Time to the first SSE event and events per second over `n` sequential streamed calls. */
async function streamed(url: string, body: string, n: number): Promise<{ ttfbP50: number; eventsPerSecond: number }> {
  const dispatcher = new Agent({ connections: 1 });
  const firsts: number[] = [];
  let events = 0;
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const response = await request(url, { method: "POST", headers: HEADERS, body, dispatcher });
    let first = true;
    for await (const chunk of response.body) {
      if (first) {
        firsts.push(performance.now() - t0);
        first = false;
      }
      events += (String(chunk).match(/^data: /gm) ?? []).length;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  await dispatcher.close();
  firsts.sort((a, b) => a - b);
  return { ttfbP50: firsts[Math.floor(firsts.length / 2)] as number, eventsPerSecond: events / seconds };
}

/**
 * The platform's ceiling: parse the JSON body and answer, nothing else. A child process, as
 * the server is: in this process it would share its core with the load generator.
 */
async function startBareServer(): Promise<{ url: string; close(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-gateway-"));
  writeFileSync(path.join(dir, "models.json"), "{}");
  const bare = await startBaseline("bare", path.join(dir, "models.json"));
  return {
    url: `${bare.origin}/v1/responses`,
    close: async () => {
      bare.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Servers are started when their runs come (see the header), and all stopped at the end.
const started: { close(): Promise<void> }[] = [];

/** A child process (server, upstream, baseline) to stop at the end if its runs have not. */
function track<T extends { close(): Promise<void> }>(child: T): T {
  started.push(child);
  return child;
}

/**
 * An upstream in a process of its own (the load generator must not also serve it), one for
 * each server's runs and one for the direct baseline's: a process that lives for a few runs
 * has not reached its first mark-compact, which in an upstream serving the whole benchmark
 * came about 105 s in, inside a measured window (7 ms, measured on 2026-11-27).
 */
async function freshUpstream(): Promise<InstantUpstream> {
  return track(await startUpstreamProcess({ chunks: 5 }));
}

async function stop(child: { close(): Promise<void> }): Promise<void> {
  started.splice(started.indexOf(child), 1);
  await child.close();
}
const report: Record<string, unknown> = {
  machine: { cpus: (await import("node:os")).cpus().length, node: process.version },
  seconds: SECONDS,
  warmSeconds: WARM_SECONDS,
  rate: RATE,
};
try {
  const directUpstream = await freshUpstream();
  const direct = await load(`${directUpstream.baseUrl}/chat/completions`, CHAT_BODY, RATE);
  await stop(directUpstream);
  const validatedUpstream = await freshUpstream();
  const validated = track(await startBenchServer(validatedUpstream.baseUrl, { VALIDATE_RESPONSES: "1" }));
  const responsesValidated = await load(`${validated.baseUrl}/responses`, RESPONSES_BODY, RATE);
  await stop(validated);
  await stop(validatedUpstream);
  const upstream = await freshUpstream();
  const production = track(await startBenchServer(upstream.baseUrl, { VALIDATE_RESPONSES: "0" }));
  const through = {
    responsesValidated,
    responsesProduction: await load(`${production.baseUrl}/responses`, RESPONSES_BODY, RATE),
    chatProduction: await load(`${production.baseUrl}/chat/completions`, CHAT_BODY, RATE),
  };
  const streamDirect = await streamed(
    `${upstream.baseUrl}/chat/completions`,
    JSON.stringify({ ...JSON.parse(CHAT_BODY), stream: true }),
    300,
  );
  const streamThrough = await streamed(
    `${production.baseUrl}/responses`,
    JSON.stringify({ ...JSON.parse(RESPONSES_BODY), stream: true }),
    300,
  );
  const bare = track(await startBareServer());
  const ceilingBare = await load(bare.url, RESPONSES_BODY);
  const ceilingStack = await load(`${production.baseUrl}/responses`, RESPONSES_BODY);

  const added = (l: Load) => ({
    p50: l.p50 - direct.p50,
    p99: l.p99 - direct.p99,
    throughputRatio: l.rps / direct.rps,
    errors: l.errors + l.non2xx,
  });
  Object.assign(report, {
    direct,
    through,
    addedLatencyMs: Object.fromEntries(Object.entries(through).map(([k, v]) => [k, added(v)])),
    streaming: {
      direct: streamDirect,
      through: streamThrough,
      addedTtfbMs: streamThrough.ttfbP50 - streamDirect.ttfbP50,
    },
    ceiling: { bareRps: ceilingBare.rps, stackRps: ceilingStack.rps, ratio: ceilingStack.rps / ceilingBare.rps },
  });
  const p = added(through.responsesProduction);
  const targets = [
    [`added p50 ≤ 1 ms at ${RATE} req/s (production)`, p.p50 <= 1, `${p.p50.toFixed(2)} ms`],
    [`added p99 ≤ 3 ms at ${RATE} req/s (production)`, p.p99 <= 3, `${p.p99.toFixed(2)} ms`],
    [
      "full stack ≥ 25% of the bare node:http ceiling",
      ceilingStack.rps / ceilingBare.rps >= 0.25,
      `${((100 * ceilingStack.rps) / ceilingBare.rps).toFixed(1)}% (${ceilingStack.rps.toFixed(0)} vs ${ceilingBare.rps.toFixed(0)} req/s)`,
    ],
  ] as const;
  report.targets = targets.map(([name, met, figure]) => ({ name, met, figure }));

  console.log(
    `gateway overhead, ${SECONDS} s per run at ${RATE} req/s after ${WARM_SECONDS} s at that rate (upstream on loopback answers at once)`,
  );
  console.log(
    `  direct to upstream          p50 ${direct.p50.toFixed(2)} ms  p99 ${direct.p99.toFixed(2)} ms  p99.9 ${direct.p999?.toFixed(2)} ms  ${direct.rps.toFixed(0)} req/s  (sent up to ${direct.sendLateP99?.toFixed(2)} ms late, p99)`,
  );
  for (const [name, l] of Object.entries(through)) {
    const a = added(l);
    console.log(
      `  ${name.padEnd(26)}  p50 ${l.p50.toFixed(2)} ms  p99 ${l.p99.toFixed(2)} ms  p99.9 ${l.p999?.toFixed(2)} ms  ${l.rps.toFixed(0)} req/s  added p50 ${a.p50.toFixed(2)} ms, p99 ${a.p99.toFixed(2)} ms, errors ${a.errors}  (sent up to ${l.sendLateP99?.toFixed(2)} ms late)`,
    );
  }
  console.log(
    `  streaming: first event ${streamDirect.ttfbP50.toFixed(2)} ms direct, ${streamThrough.ttfbP50.toFixed(2)} ms through; ${streamThrough.eventsPerSecond.toFixed(0)} events/s through vs ${streamDirect.eventsPerSecond.toFixed(0)} direct`,
  );
  console.log(
    `  ceiling: bare node:http ${ceilingBare.rps.toFixed(0)} req/s, full stack ${ceilingStack.rps.toFixed(0)} req/s (${((100 * ceilingStack.rps) / ceilingBare.rps).toFixed(1)}%)`,
  );
  for (const t of report.targets as { name: string; met: boolean; figure: string }[])
    console.log(`  target ${t.met ? "MET    " : "NOT MET"} ${t.name}: ${t.figure}`);
  if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
} finally {
  await Promise.all(started.map((child) => child.close()));
}
