/**
 * Fine-tuning quality: does a job with the default config teach what a small dataset
 * shows, on prompts that were never in it, without breaking the model?
 *
 * For each dataset of bench/support/tuning-datasets.ts (20–40 rows: a voice, a persona,
 * an answer format, copying a number from the prompt, a DPO preference) it trains with
 * exactly the config a job that sends only `outputModelId` gets (the catalogue's
 * defaults, epochs from the dataset size), then asks the base and the tuned model the
 * held-out prompts and a set of unrelated prompts at temperature 0. Figures, base
 * against tuned in the same run:
 *   pattern     share of held-out answers that show the trained pattern (target 100 %)
 *   own answer  for a style around the model's own answer (DPO's "Sure!"): share of held-out
 *               answers that are the base's answer in that style, content unchanged
 *   degenerate  share of answers with a character 4+ times running or a looping word run (target 0)
 *   unrelated   share of unrelated prompts answered exactly as the base answers them, and degenerate ones
 *   corpus loss loss per token on 64 dialogues of the base corpus (fluency), base → tuned
 *   DPO margin  mean log p(preferred) − log p(rejected) on held-out pairs, base → tuned
 *   seconds     training time of the job (target under 30 s for 40 rows on 2 cores)
 *
 * Each case is trained with several seeds (the adapter's random factors, the shuffles and
 * the rehearsal's dialogues; a job always has seed 1). With 6–8 held-out prompts a case,
 * which of them pass moves with the draw as much as with any setting (2026-11-27, the
 * defaults over seeds 1–10: the voice 25–75 %, copy 67–100 %, DPO 67–100 %), so a setting
 * is judged on the mean over seeds, and a target is met when every seed meets it.
 *
 *   node bench/tuning-quality.ts [--json path] [--case name] [--seeds 3] [--verbose] [--config '{"learningRate": "0.003"}']
 *
 * --seeds N: seeds 1 to N (default 3).
 * --config: config fields sent with every job, as a caller would send them (for trying other defaults).
 */
import { writeFileSync } from "node:fs";
import type { ChatMessage } from "../server/datasets/rows.ts";
import { fillConfig, type TrainableModel } from "../server/finetune/plan.ts";
import { toTrainerConfig } from "../server/finetune/runner.ts";
import { train } from "../server/finetune/trainer.ts";
import { encodeRow, localBaseModel } from "../server/finetune/trainer-data.ts";
import { findPlatformModel } from "../server/inference/catalog.ts";
import type { GenerationRequest } from "../server/inference/engine.ts";
import {
  adaptModel,
  LocalProvider,
  loadAdapter,
  type Adapter,
  type LocalModel,
} from "../server/inference/local/index.ts";
import { corpusDialogues, evaluateLoss, sequenceLogProb } from "../server/finetune/local/index.ts";
import { renderTurns } from "../server/inference/local/template.ts";
import {
  isDegenerate,
  PREFERENCE_HELD_OUT_PAIRS,
  TUNING_CASES,
  UNRELATED_PROMPTS,
  type TuningCase,
} from "./support/tuning-datasets.ts";

const args = process.argv.slice(2);
const jsonPath = args.includes("--json") ? args[args.indexOf("--json") + 1] : undefined;
const only = args.includes("--case") ? args[args.indexOf("--case") + 1] : undefined;
const verbose = args.includes("--verbose");
const seeds = args.includes("--seeds") ? Number(args[args.indexOf("--seeds") + 1]) : 3;
if (!Number.isInteger(seeds) || seeds < 1) throw new Error(`--seeds takes a whole number from 1, not ${seeds}`);
const sent = args.includes("--config")
  ? (JSON.parse(args[args.indexOf("--config") + 1]!) as Record<string, unknown>)
  : {};

const BASE = findPlatformModel("tiny-chat") as TrainableModel;
const base = localBaseModel();

function request(messages: ChatMessage[], model: string): GenerationRequest {
  return {
    model,
    turns: messages.map((m) => ({ kind: "message" as const, role: m.role, text: m.content, media: [] })),
    tools: [],
    toolChoice: { mode: "auto" },
    temperature: 0,
    signal: new AbortController().signal,
  };
}

/** Temperature-0 answers through the provider that serves fine-tuned models. */
async function answers(prompts: ChatMessage[][], adapter: Adapter | null): Promise<string[]> {
  const provider = new LocalProvider({ adapterFor: (id) => (id === "ft:bench" ? adapter : null) });
  const out: string[] = [];
  for (const prompt of prompts) {
    let text = "";
    for await (const e of provider.generate(request(prompt, adapter === null ? "tiny-chat" : "ft:bench")))
      if (e.type === "text") text += e.delta;
    out.push(text);
  }
  return out;
}

const FLUENCY_SAMPLE = corpusDialogues()
  .slice(-64)
  .map((d) => renderTurns(base.vocab, d.turns));

/** Mean log p(preferred) − log p(rejected) of the held-out pairs. */
function preferenceMargin(model: LocalModel): number {
  let sum = 0;
  for (const row of PREFERENCE_HELD_OUT_PAIRS) {
    const e = encodeRow(model, row);
    if (e.format !== "PREFERENCE") continue;
    sum +=
      sequenceLogProb(model, model.weights, e.pair.chosen) - sequenceLogProb(model, model.weights, e.pair.rejected);
  }
  return sum / PREFERENCE_HELD_OUT_PAIRS.length;
}

const share = (flags: boolean[]): number => flags.filter(Boolean).length / flags.length;
const pct = (x: number): string => `${Math.round(100 * x)} %`;

interface CaseResult {
  name: string;
  seed: number;
  rows: number;
  epochs: number;
  steps: number;
  seconds: number;
  pattern: { base: number; tuned: number };
  degenerate: { base: number; tuned: number };
  unrelatedSameAsBase: number;
  unrelatedDegenerate: number;
  corpusLoss: { base: number; tuned: number };
  dpoMargin?: { base: number; tuned: number };
  ownAnswer?: number;
}

const unrelatedBase = await answers(UNRELATED_PROMPTS, null);
const corpusLossBase = evaluateLoss(base, null, FLUENCY_SAMPLE);

/** The base model's answers to each case's held-out prompts: the same for every seed. */
const baseAnswersOf = new Map<TuningCase, string[]>();

async function runCase(c: TuningCase, seed: number): Promise<CaseResult> {
  const jobType = c.kind === "SFT" ? "JOB_TYPE_SFT" : "JOB_TYPE_DPO";
  const config = toTrainerConfig(fillConfig(jobType, BASE, { ...sent, outputModelId: "bench" }, c.rows.length));
  let steps = 0;
  const started = performance.now();
  const result = await train({
    kind: c.kind,
    baseModel: "tiny-chat",
    config,
    train: c.rows,
    evaluation: [],
    signal: new AbortController().signal,
    onStep: () => void steps++,
    onEpochEnd: async () => undefined,
    seed,
  });
  const seconds = (performance.now() - started) / 1000;
  const keepsAnswer = c.keepsAnswer;
  const adapter = loadAdapter(result.adapter);
  const tunedModel = adaptModel(base, adapter);
  if (!baseAnswersOf.has(c)) baseAnswersOf.set(c, await answers(c.heldOut, null));
  const [baseAnswers, tunedAnswers, unrelatedTuned] = [
    baseAnswersOf.get(c)!,
    await answers(c.heldOut, adapter),
    await answers(UNRELATED_PROMPTS, adapter),
  ];
  if (verbose) {
    c.heldOut.forEach((p, i) =>
      console.log(
        `  ${JSON.stringify(p.at(-1)!.content)}\n    base:  ${JSON.stringify(baseAnswers[i])}\n    tuned: ${JSON.stringify(tunedAnswers[i])}`,
      ),
    );
    UNRELATED_PROMPTS.forEach((p, i) =>
      console.log(`  unrelated ${JSON.stringify(p.at(-1)!.content)} → ${JSON.stringify(unrelatedTuned[i])}`),
    );
  }
  return {
    name: c.name,
    seed,
    rows: c.rows.length,
    epochs: config.epochs,
    steps,
    seconds,
    pattern: { base: share(baseAnswers.map(c.shows)), tuned: share(tunedAnswers.map(c.shows)) },
    degenerate: { base: share(baseAnswers.map(isDegenerate)), tuned: share(tunedAnswers.map(isDegenerate)) },
    unrelatedSameAsBase: share(unrelatedTuned.map((a, i) => a === unrelatedBase[i])),
    unrelatedDegenerate: share(unrelatedTuned.map(isDegenerate)),
    corpusLoss: { base: corpusLossBase, tuned: evaluateLoss(base, adapter, FLUENCY_SAMPLE) },
    ...(keepsAnswer ? { ownAnswer: share(tunedAnswers.map((a, i) => keepsAnswer(a, baseAnswers[i] as string))) } : {}),
    ...(c.kind === "DPO" ? { dpoMargin: { base: preferenceMargin(base), tuned: preferenceMargin(tunedModel) } } : {}),
  };
}

// A name that matches no case would otherwise report every target met over nothing.
const matches = (c: (typeof TUNING_CASES)[number]) =>
  only === undefined || c.name === only || c.name.split(" ")[0] === only;
if (!TUNING_CASES.some(matches)) {
  console.error(
    `no case ${JSON.stringify(only)}; the cases: ${TUNING_CASES.map((c) => c.name.split(" ")[0]).join(", ")}`,
  );
  process.exit(2);
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The case over its seeds: the means, and each seed's pattern share. */
function summary(rs: CaseResult[]): string {
  const each = (f: (r: CaseResult) => number) => rs.map((r) => pct(f(r))).join(", ");
  const margins = rs.filter((r) => r.dpoMargin !== undefined).map((r) => r.dpoMargin!.tuned);
  const own = rs.filter((r) => r.ownAnswer !== undefined).map((r) => r.ownAnswer!);
  return (
    `  over ${rs.length} seeds: pattern ${pct(mean(rs.map((r) => r.pattern.tuned)))} (${each((r) => r.pattern.tuned)})` +
    ` | degenerate ${pct(mean(rs.map((r) => r.degenerate.tuned)))} (${each((r) => r.degenerate.tuned)})` +
    ` | unrelated: ${pct(mean(rs.map((r) => r.unrelatedSameAsBase)))} as base, ${pct(mean(rs.map((r) => r.unrelatedDegenerate)))} degenerate` +
    ` | corpus loss ${mean(rs.map((r) => r.corpusLoss.tuned)).toFixed(3)}` +
    (own.length > 0 ? ` | own answer in the style ${pct(mean(own))}` : "") +
    (margins.length > 0 ? ` | DPO margin ${mean(margins).toFixed(2)}` : "")
  );
}

const results: CaseResult[] = [];
for (const c of TUNING_CASES) {
  if (!matches(c)) continue;
  console.log(`${c.name}: ${c.rows.length} rows, teaches ${c.teaches}`);
  const ofCase: CaseResult[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const r = await runCase(c, seed);
    ofCase.push(r);
    printSeed(r);
  }
  results.push(...ofCase);
  if (seeds > 1) console.log(summary(ofCase));
}

function printSeed(r: CaseResult): void {
  console.log(
    `  seed ${r.seed}: ${r.epochs} epochs, ${r.steps} steps, ${r.seconds.toFixed(1)} s | pattern ${pct(r.pattern.base)} → ${pct(r.pattern.tuned)}` +
      ` | degenerate ${pct(r.degenerate.base)} → ${pct(r.degenerate.tuned)} | unrelated: ${pct(r.unrelatedSameAsBase)} as base,` +
      ` ${pct(r.unrelatedDegenerate)} degenerate | corpus loss ${r.corpusLoss.base.toFixed(3)} → ${r.corpusLoss.tuned.toFixed(3)}` +
      (r.ownAnswer !== undefined ? ` | own answer in the style ${pct(r.ownAnswer)}` : "") +
      (r.dpoMargin ? ` | DPO margin ${r.dpoMargin.base.toFixed(2)} → ${r.dpoMargin.tuned.toFixed(2)}` : ""),
  );
}

// Met only when every seed meets it: a user's dataset is one draw.
const held = results.every((r) => r.pattern.tuned === 1 && r.degenerate.tuned === 0 && r.unrelatedDegenerate === 0);
const fast = results.filter((r) => r.rows <= 40).every((r) => r.seconds < 30);
console.log(
  `\ntargets: 100 % pattern and 0 degenerate on held-out prompts: ${held ? "met" : "NOT met"}; under 30 s a job of ≤ 40 rows: ${fast ? "met" : "NOT met"}`,
);
if (jsonPath !== undefined)
  writeFileSync(jsonPath, JSON.stringify({ date: new Date().toISOString(), seeds, results }, null, 2));
