/**
 * Mixed traffic at a fixed rate (autocannon) against one server process and against two
 * processes sharing one store: streamed and non-streamed /v1/responses (to an instant
 * upstream on loopback), job polling and dataset reads. Reports throughput, p50/p99
 * latency and errors of each, and the two-process figures as a ratio of the one-process
 * ones measured in the same run.
 *
 *   node bench/load.ts [--seconds 10] [--rate 600] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { startInstantUpstream } from "./support/upstream.ts";
import { ACME_KEY, startBenchServer, type BenchServer } from "./support/server-process.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    rate: { type: "string", default: "600" },
    json: { type: "string" },
  },
});
const SECONDS = Number(values.seconds);
const RATE = Number(values.rate);
const HEADERS = { "content-type": "application/json", authorization: `Bearer ${ACME_KEY}` };

interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** A dataset and a finished job to read while the load runs. */
async function prepare(server: BenchServer): Promise<{ dataset: string; job: string }> {
  const base = `${server.baseUrl}/accounts/acme`;
  const post = (path: string, body: string, type = "application/json") =>
    fetch(base + path, { method: "POST", headers: { ...HEADERS, "content-type": type }, body }).then(
      (r) => r.json() as Promise<any>,
    );
  await post("/datasets", JSON.stringify({ datasetId: "load", dataset: {} }));
  const row = JSON.stringify({
    messages: [
      { role: "user", content: "Hello!" },
      { role: "assistant", content: "Hi there." },
    ],
  });
  await post("/datasets/load:upload", Array(20).fill(row).join("\n"), "application/jsonl");
  await post("/datasets/load:validateUpload", "{}");
  for (let i = 0; i < 200; i++) {
    const dataset = (await fetch(`${base}/datasets/load`, { headers: HEADERS }).then((r) => r.json())) as {
      state: string;
    };
    if (dataset.state === "DATASET_STATE_READY") break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const job = await post(
    "/supervisedFineTuningJobs",
    JSON.stringify({
      baseModel: "tiny-chat",
      inputDatasetVersion: "accounts/acme/datasets/load",
      config: { outputModelId: "load" },
    }),
  );
  return { dataset: "load", job: job.jobId as string };
}

function traffic(ids: { dataset: string; job: string }) {
  const responses = { model: "tiny-chat", input: "Hello!", store: false, max_output_tokens: 16 };
  return [
    { method: "POST", path: "/v1/responses", headers: HEADERS, body: JSON.stringify(responses) },
    { method: "POST", path: "/v1/responses", headers: HEADERS, body: JSON.stringify({ ...responses, stream: true }) },
    { method: "GET", path: `/v1/accounts/acme/supervisedFineTuningJobs/${ids.job}`, headers: HEADERS },
    { method: "GET", path: `/v1/accounts/acme/datasets/${ids.dataset}`, headers: HEADERS },
  ];
}

async function drive(servers: BenchServer[], ids: { dataset: string; job: string }): Promise<Result> {
  const runs = await Promise.all(
    servers.map((s) =>
      autocannon({
        url: s.baseUrl.replace(/\/v1$/, ""),
        requests: traffic(ids),
        duration: SECONDS,
        connections: 16,
        overallRate: RATE / servers.length,
      } as never),
    ),
  );
  return {
    rps: runs.reduce((sum, r) => sum + r.requests.average, 0),
    p50: Math.max(...runs.map((r) => r.latency.p50)),
    p99: Math.max(...runs.map((r) => r.latency.p99)),
    errors: runs.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
  };
}

const upstream = await startInstantUpstream({ chunks: 5 });
const first = await startBenchServer(upstream.baseUrl, { VALIDATE_RESPONSES: "0" });
let second: BenchServer | undefined;
try {
  const ids = await prepare(first);
  const one = await drive([first], ids);
  second = await startBenchServer(upstream.baseUrl, { VALIDATE_RESPONSES: "0", RUN_JOBS: "0" }, first);
  const two = await drive([first, second], ids);
  const show = (name: string, r: Result) =>
    console.log(
      `  ${name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}, non-2xx ${r.non2xx}`,
    );
  console.log(
    `mixed traffic at ${RATE} req/s for ${SECONDS} s (responses, streamed responses, job polling, dataset reads)`,
  );
  show("one process ", one);
  show("two processes", two);
  console.log(
    `  two / one: throughput ${(two.rps / one.rps).toFixed(2)}×, p99 ${(two.p99 / Math.max(1, one.p99)).toFixed(2)}×`,
  );
  if (values.json) writeFileSync(values.json, JSON.stringify({ rate: RATE, seconds: SECONDS, one, two }, null, 2));
} finally {
  await second?.close();
  await first.close();
  await upstream.close();
}
