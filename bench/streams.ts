/**
 * 1,000 concurrent streamed /v1/responses calls of 200 events each, through the server to
 * an upstream that sends a chunk every 10 ms: throughput, the server's memory per open
 * stream, and starvation (the slowest stream's events per second against the median's).
 * Baseline: the same streams read from the upstream directly, in the same run.
 *
 * Memory per open stream is what each further stream adds: the server first serves a tenth
 * of the streams, then all of them, and the difference of the two peaks is divided by the
 * streams added. Any load at all grows the process by a fixed amount (the V8 heap sized to
 * the allocation rate, compiled code, connection pools): 100 streams already added 85 MiB
 * over idle and 1 000 streams 142 MiB, so "peak over idle ÷ count" mostly measures that
 * fixed part, less the more streams there are. Both figures are printed.
 *
 *   node bench/streams.ts [--streams 1000] [--events 200] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import { ACME_KEY, startBenchServer } from "./support/server-process.ts";
import { startInstantUpstream } from "./support/upstream.ts";

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "1000" },
    events: { type: "string", default: "200" },
    json: { type: "string" },
  },
});
const STREAMS = Number(values.streams);
const EVENTS = Number(values.events);
const HEADERS = { "content-type": "application/json", authorization: `Bearer ${ACME_KEY}` };

interface StreamRun {
  seconds: number;
  events: number;
  perStream: number[];
  failed: number;
  peakRss?: number;
}

async function run(url: string, body: string, sampleRss?: () => number, count = STREAMS): Promise<StreamRun> {
  const dispatcher = new Agent({ connections: count, pipelining: 0 });
  const perStream: number[] = [];
  let failed = 0;
  let peakRss = 0;
  const sampler = sampleRss && setInterval(() => (peakRss = Math.max(peakRss, sampleRss())), 50);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: count }, async () => {
      const t0 = performance.now();
      try {
        const response = await request(url, {
          method: "POST",
          headers: HEADERS,
          body,
          dispatcher,
          bodyTimeout: 60_000,
        });
        let events = 0;
        for await (const chunk of response.body) events += (String(chunk).match(/^data: /gm) ?? []).length;
        perStream.push(events / ((performance.now() - t0) / 1000));
        if (response.statusCode !== 200) failed++;
      } catch {
        failed++;
      }
    }),
  );
  if (sampler) clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  await dispatcher.close();
  return { seconds, events: 0, perStream: perStream.sort((a, b) => a - b), failed, ...(sampleRss ? { peakRss } : {}) };
}

const upstream = await startInstantUpstream({ chunks: EVENTS, intervalMs: 10 });
const server = await startBenchServer(upstream.baseUrl, { VALIDATE_RESPONSES: "0" });
try {
  const chat = JSON.stringify({ model: "tiny-chat", stream: true, messages: [{ role: "user", content: "Hello!" }] });
  const responses = JSON.stringify({
    model: "tiny-chat",
    input: "Hello!",
    store: false,
    stream: true,
    max_output_tokens: EVENTS + 10,
  });
  const direct = await run(`${upstream.baseUrl}/chat/completions`, chat);
  const rssBefore = server.rss();
  // A tenth of the streams first, in the same process: the memory any load brings at once
  // (the heap grown to the allocation rate, compiled code, pools), whatever the count.
  const few = Math.max(1, Math.round(STREAMS / 10));
  const warm = await run(`${server.baseUrl}/responses`, responses, () => server.rss(), few);
  const through = await run(`${server.baseUrl}/responses`, responses, () => server.rss());
  const median = (xs: number[]) => xs[Math.floor(xs.length / 2)] ?? 0;
  // Per open stream: what the other nine tenths add to the peak (the target's figure), and,
  // as before, the whole peak over the idle process divided by the count (fixed costs included).
  const perStreamKiB = ((through.peakRss ?? 0) - (warm.peakRss ?? 0)) / (STREAMS - few) / 1024;
  const perStreamFromIdleKiB = ((through.peakRss ?? 0) - rssBefore) / STREAMS / 1024;
  const starvation = (through.perStream[0] ?? 0) / median(through.perStream);
  const report = {
    streams: STREAMS,
    eventsPerStream: EVENTS,
    direct: { seconds: direct.seconds, failed: direct.failed, medianEventsPerSecond: median(direct.perStream) },
    through: {
      seconds: through.seconds,
      failed: through.failed,
      medianEventsPerSecond: median(through.perStream),
      slowestEventsPerSecond: through.perStream[0],
    },
    wallTimeRatio: through.seconds / direct.seconds,
    memoryPerStreamKiB: perStreamKiB,
    memoryPerStreamFromIdleKiB: perStreamFromIdleKiB,
    warmPeakRssMiB: (warm.peakRss ?? 0) / 2 ** 20,
    slowestOverMedian: starvation,
    targets: [
      {
        name: "memory per open stream < 100 KB",
        met: perStreamKiB * 1024 < 100_000,
        figure: `${perStreamKiB.toFixed(1)} KiB`,
      },
    ],
  };
  console.log(`${STREAMS} concurrent streams of ${EVENTS} events (upstream sends one every 10 ms)`);
  console.log(
    `  direct:  ${direct.seconds.toFixed(2)} s, failed ${direct.failed}, median ${median(direct.perStream).toFixed(0)} events/s per stream`,
  );
  console.log(
    `  through: ${through.seconds.toFixed(2)} s (${report.wallTimeRatio.toFixed(2)}× direct), failed ${through.failed}, median ${median(through.perStream).toFixed(0)} events/s, slowest ${(through.perStream[0] ?? 0).toFixed(0)} (${(100 * starvation).toFixed(0)}% of median)`,
  );
  console.log(
    `  server memory: ${(rssBefore / 2 ** 20).toFixed(0)} MiB idle, ${((warm.peakRss ?? 0) / 2 ** 20).toFixed(0)} MiB peak with ${few} streams, ${((through.peakRss ?? 0) / 2 ** 20).toFixed(0)} MiB with ${STREAMS}: ${perStreamKiB.toFixed(1)} KiB per further open stream (${perStreamFromIdleKiB.toFixed(1)} KiB counting everything over idle)`,
  );
  for (const t of report.targets) console.log(`  target ${t.met ? "MET    " : "NOT MET"} ${t.name}: ${t.figure}`);
  if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
} finally {
  await server.close();
  await upstream.close();
}
