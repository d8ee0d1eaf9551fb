/**
 * `npm run bench`: every benchmark in turn, each in its own process, with its output as
 * it prints (each one reports its own ratios against a baseline measured in its own run),
 * then the wall time of the contract pipeline and of the conformance kit. Writes the
 * request-path, gateway and streams figures as JSON to bench/results/ for the README.
 *
 *   npm run bench [-- --quick]     --quick: shorter runs and a 256 MiB dataset
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const quick = process.argv.includes("--quick");
const root = fileURLToPath(new URL("..", import.meta.url));
const results = `${root}bench/results`;
mkdirSync(results, { recursive: true });

function step(title: string, args: string[]): number {
  console.log(`\n== ${title}`);
  const started = performance.now();
  const run = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  const seconds = (performance.now() - started) / 1000;
  console.log(`   (${seconds.toFixed(1)} s${run.status === 0 ? "" : `, exit ${run.status}`})`);
  return seconds;
}

const started = performance.now();
step(
  "request path: GET /v1/models and POST /v1/responses against express + validator and bare node:http, alone and making the upstream call",
  [
    "bench/request-path.ts",
    "--seconds",
    quick ? "2" : "5",
    "--rounds",
    quick ? "1" : "3",
    "--json",
    `${results}/request-path.json`,
  ],
);
step("gateway overhead and framework ceiling", [
  "bench/gateway.ts",
  "--seconds",
  quick ? "3" : "10",
  "--warm",
  quick ? "5" : "25",
  "--json",
  `${results}/gateway.json`,
]);
step("concurrent streams", [
  "bench/streams.ts",
  "--streams",
  quick ? "300" : "1000",
  "--json",
  `${results}/streams.json`,
]);
step("mixed load: one and two server processes", [
  "bench/load.ts",
  "--seconds",
  quick ? "4" : "10",
  "--json",
  `${results}/load.json`,
]);
step("operating cost: access log and metrics on vs off, same server", [
  "bench/ops-overhead.ts",
  "--seconds",
  quick ? "2" : "3",
  "--rounds",
  quick ? "4" : "8",
  "--json",
  `${results}/ops-overhead.json`,
]);
step("dataset validation", ["bench/dataset-validation.ts", quick ? "256MiB" : "1GiB"]);
step("training", ["bench/training.ts"]);
step("fine-tuning quality: small datasets, default config, held-out prompts", [
  "bench/tuning-quality.ts",
  "--json",
  `${results}/tuning-quality.json`,
]);
step("single-stream generation speed", ["bench/generation.ts"]);
const generate = step("contract pipeline: npm run generate (to a temp dir)", [
  "scripts/generate.ts",
  "--out",
  `${results}/generated-check`,
]);
if (existsSync(`${root}conformance/cli.ts`)) {
  step("conformance kit against the reference server", ["bench/conformance-time.ts"]);
}
console.log(
  `\ncontract pipeline ${generate.toFixed(1)} s; all benchmarks ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
