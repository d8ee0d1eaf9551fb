/**
 * The request path against its baselines (issue 20), all measured in this run on this
 * machine, most requests per second each can serve (autocannon, 16 connections):
 *
 *  - `GET /v1/models` through the server (response validation off, as production runs)
 *    against express + express-openapi-validator alone on the same document with its
 *    route patterns cached (target ≥ 0.95: the server's own work costs next to nothing),
 *    and against bare node:http answering the same bytes (target ≥ 0.40);
 *  - `POST /v1/responses` through the server to an OpenAI-compatible upstream on loopback
 *    that answers at once, against bare node:http parsing the same body (target ≥ 0.25:
 *    the server also makes the upstream call).
 *
 * Two more baselines place the responses figure: bare node:http, and express + the
 * validator, each also making the same upstream call over undici before answering
 * (`bare-gateway`, `express-validator-gateway`). The first is what any gateway on
 * node:http costs before it does anything of its own: measured so (2026-11-27) it is
 * itself 0.26–0.33 of bare node:http (0.25 through undici's `request(url)`), so the ≥ 0.25
 * target leaves next to nothing for express, the validator or the server's own work. The bench therefore also prints the server against
 * express + validator + the upstream call, the counterpart of the first target above.
 *
 * Each baseline is a child process like the server (bench/support/baseline-server.ts); the
 * load generator (with the upstream) runs here. Where the machine allows it, the server and
 * the baselines run on one core and this process on the other (bench/support/cores.ts), so
 * that each server measured has the same core to itself. The machine is shared, so the
 * measurements are taken in `--rounds` interleaved rounds, each ratio is taken within a
 * round (its two runs seconds apart, under the same load from elsewhere), and the median of
 * the rounds' ratios is used.
 *
 *   node bench/request-path.ts [--seconds 5] [--rounds 3] [--json out.json]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { ACME_KEY, startBenchServer } from "./support/server-process.ts";
import { startBaseline } from "./support/baseline-process.ts";
import { startInstantUpstream } from "./support/upstream.ts";
import { GENERATOR_CORE, MEASURED_CORE, pin } from "./support/cores.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    json: { type: "string" },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const HEADERS = { "content-type": "application/json", authorization: `Bearer ${ACME_KEY}` };
const RESPONSES_BODY = JSON.stringify({ model: "tiny-chat", input: "Hello!", store: false, max_output_tokens: 16 });

interface Target {
  name: string;
  get: boolean;
  url: string;
}

async function rps(target: Target, seconds: number): Promise<number> {
  const result = await autocannon({
    url: target.url,
    connections: 16,
    duration: seconds,
    headers: HEADERS,
    ...(target.get ? {} : { method: "POST", body: RESPONSES_BODY }),
  });
  const failed = result.errors + result.timeouts + result.non2xx;
  if (failed > 0) throw new Error(`${target.name}: ${failed} of ${result.requests.total} requests failed`);
  return result.requests.average;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

pin(process.pid, GENERATOR_CORE);
const dir = mkdtempSync(path.join(os.tmpdir(), "bench-request-path-"));
const upstream = await startInstantUpstream({ chunks: 5 });
const server = await startBenchServer(upstream.baseUrl, { VALIDATE_RESPONSES: "0" });
const modelsFile = path.join(dir, "models.json");
writeFileSync(modelsFile, await (await fetch(`${server.baseUrl}/models`, { headers: HEADERS })).text());
const bare = await startBaseline("bare", modelsFile);
const validator = await startBaseline("express-validator", modelsFile);
const bareGateway = await startBaseline("bare-gateway", modelsFile, upstream.baseUrl);
const validatorGateway = await startBaseline("express-validator-gateway", modelsFile, upstream.baseUrl);
const baselines = [bare, validator, bareGateway, validatorGateway];
for (const measured of [server, ...baselines]) pin(measured.pid, MEASURED_CORE);
try {
  const targets: Target[] = [
    { name: "models: bare node:http", get: true, url: `${bare.origin}/v1/models` },
    { name: "models: express + validator", get: true, url: `${validator.origin}/v1/models` },
    { name: "models: this server", get: true, url: `${server.baseUrl}/models` },
    { name: "responses: bare node:http", get: false, url: `${bare.origin}/v1/responses` },
    { name: "responses: bare + upstream call", get: false, url: `${bareGateway.origin}/v1/responses` },
    {
      name: "responses: express + validator + upstream call",
      get: false,
      url: `${validatorGateway.origin}/v1/responses`,
    },
    { name: "responses: this server", get: false, url: `${server.baseUrl}/responses` },
  ];
  for (const target of targets) await rps(target, 1); // warm up: JIT, the validator's compiled schemas, connections
  const runs = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of targets) runs.get(target.name)?.push(await rps(target, SECONDS));
  }
  const rate = (name: string) => median(runs.get(name) ?? []);
  const figures = Object.fromEntries(targets.map((t) => [t.name, rate(t.name)]));
  /** The median over rounds of a/b within each round. */
  const ratio = (a: string, b: string) =>
    median((runs.get(a) ?? []).map((r, i) => r / ((runs.get(b) ?? [])[i] as number)));
  const targetsMet = [
    {
      name: "GET /v1/models ≥ 0.95 of express + express-openapi-validator alone",
      ratio: ratio("models: this server", "models: express + validator"),
      least: 0.95,
    },
    {
      name: "GET /v1/models ≥ 0.40 of bare node:http",
      ratio: ratio("models: this server", "models: bare node:http"),
      least: 0.4,
    },
    {
      name: "POST /v1/responses (instant upstream) ≥ 0.25 of bare node:http",
      ratio: ratio("responses: this server", "responses: bare node:http"),
      least: 0.25,
    },
  ].map((t) => ({ ...t, met: t.ratio >= t.least }));
  console.log(
    `request path, most req/s (autocannon, 16 connections), median of ${ROUNDS} interleaved rounds of ${SECONDS} s`,
  );
  for (const t of targets)
    console.log(
      `  ${t.name.padEnd(48)} ${rate(t.name).toFixed(0).padStart(6)} req/s   rounds: ${(runs.get(t.name) ?? []).map((r) => r.toFixed(0)).join(", ")}`,
    );
  const of = (a: string, b: string) => `${ratio(a, b).toFixed(2)}`;
  console.log(
    `  express + validator alone is ${of("models: express + validator", "models: bare node:http")} of bare node:http on GET /v1/models`,
  );
  // Where POST /v1/responses goes: the upstream call alone, the framework with it, and this server's own work.
  console.log(
    `  POST /v1/responses: bare node:http + the upstream call is ${of("responses: bare + upstream call", "responses: bare node:http")} of bare node:http; ` +
      `express + validator + the upstream call ${of("responses: express + validator + upstream call", "responses: bare node:http")}; ` +
      `this server is ${of("responses: this server", "responses: express + validator + upstream call")} of express + validator + the upstream call`,
  );
  for (const t of targetsMet) console.log(`  target ${t.met ? "MET    " : "NOT MET"} ${t.name}: ${t.ratio.toFixed(2)}`);
  if (values.json)
    writeFileSync(
      values.json,
      JSON.stringify(
        {
          machine: { cpus: os.cpus().length, node: process.version },
          seconds: SECONDS,
          rounds: Object.fromEntries(runs),
          rps: figures,
          targets: targetsMet,
          responses: {
            upstreamCallOfBare: ratio("responses: bare + upstream call", "responses: bare node:http"),
            frameworkAndUpstreamCallOfBare: ratio(
              "responses: express + validator + upstream call",
              "responses: bare node:http",
            ),
            serverOfFrameworkAndUpstreamCall: ratio(
              "responses: this server",
              "responses: express + validator + upstream call",
            ),
          },
        },
        null,
        2,
      ),
    );
} finally {
  for (const baseline of baselines) baseline.close();
  await server.close();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
}
