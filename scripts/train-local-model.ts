/**
 * Trains the base weights of the local model (tiny-chat / tiny-reasoner) and writes
 *   server/inference/local/corpus/dialogues.jsonl   the training corpus, composed from knowledge.ts
 *   server/inference/local/weights/tiny-chat.bin    the weights the server loads at start
 *
 * Deterministic: fixed seeds, fixed step count, and a fixed order of gradient
 * summation, so the same code gives the same weights. Uses two threads (this process
 * and one worker sharing the weights through a SharedArrayBuffer): each computes the
 * gradient of half of every batch; the main thread sums them and applies Adam.
 *
 * Resumable, so a run longer than one sitting (a larger model) can be spread over several:
 * every 500 steps, on SIGINT or SIGTERM (after the step in progress) and at --stop-after,
 * the whole training state (weights, Adam's moments, the step) goes to `<out>.train-state`;
 * `--resume` continues from it and gives the same weights as a run never stopped.
 *
 *   node scripts/train-local-model.ts [--steps N] [--out path] [--resume] [--stop-after N] [--corpus-out path]
 *     [--layers N] [--width N]
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs as parseCommandLine } from "node:util";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { composeDialogues } from "../server/inference/local/corpus/compose.ts";
import { DEFAULT_WEIGHTS_PATH, saveModel, type LocalModel } from "../server/inference/local/local-model.ts";
import { createRng } from "../server/inference/local/math.ts";
import { initWeights, parameterShapes, type ModelConfig, type Weights } from "../server/inference/local/model.ts";
import {
  adamUpdate,
  createOptimizerState,
  type AdamState,
  learningRateAt,
  type ScheduleOptions,
} from "../server/finetune/local/optimizer.ts";
import { DIALOGUES_PATH } from "../server/finetune/local/rehearsal.ts";
import { renderTurns } from "../server/inference/local/template.ts";
import { accumulateGradients, batchTargetCount, evaluateLoss } from "../server/finetune/local/train.ts";
import type { EncodedExample } from "../server/finetune/local/example.ts";
import { readTensorFile, writeTensorFile } from "../server/inference/local/tensor-file.ts";
import { compileCheck, requiredKeys } from "../server/checked-json.ts";
import { buildVocabulary, Vocabulary } from "../server/inference/local/vocab.ts";

const CORPUS_SEED = 7;
const INIT_SEED = 11;
const ORDER_SEED = 13;
/** Windows per step; half are computed by each thread. */
const BATCH_WINDOWS = 4;
/**
 * The model's size; --layers changes nLayers and --width dModel (with dFF four times it),
 * for a larger model to try (see docs/decisions.md).
 */
const HYPER = { dModel: 64, nLayers: 2, nHeads: 4, dFF: 256, contextLength: 256 };

interface Args {
  steps: number;
  out: string;
  /** Continue from `<out>.train-state`. */
  resume: boolean;
  /** Save the state and stop after this step (the schedule still runs to `steps`). */
  stopAfter: number;
  /** Where the composed corpus is written (rehearsal reads it from DIALOGUES_PATH). */
  corpusOut: string;
  layers: number;
  width: number;
}

function parseArgs(argv: string[]): Args {
  const { values } = parseCommandLine({
    args: argv,
    options: {
      // 5000 steps: at 2000 the model had not learned to copy a number or a name from the prompt.
      steps: { type: "string", default: "5000" },
      out: { type: "string", default: DEFAULT_WEIGHTS_PATH },
      resume: { type: "boolean", default: false },
      "stop-after": { type: "string" },
      "corpus-out": { type: "string", default: DIALOGUES_PATH },
      layers: { type: "string", default: String(HYPER.nLayers) },
      width: { type: "string", default: String(HYPER.dModel) },
    },
  });
  return {
    steps: positiveWhole("steps", values.steps),
    out: values.out,
    resume: values.resume,
    stopAfter: values["stop-after"] === undefined ? Infinity : positiveWhole("stop-after", values["stop-after"]),
    corpusOut: values["corpus-out"],
    layers: positiveWhole("layers", values.layers),
    width: positiveWhole("width", values.width),
  };
}

function positiveWhole(option: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${option} takes a positive whole number, not ${text}`);
  return n;
}

/** What a stopped run needs to go on exactly as if it had not stopped. */
interface TrainState {
  /** Steps done. */
  step: number;
  /** Training seconds of the runs so far. */
  seconds: number;
  totalSteps: number;
  adamStep: number;
  config: ModelConfig;
  bpeIds: readonly number[];
}

const count = { type: "integer", minimum: 0 } as const;
/** A saved state is checked before it is trusted (a half-written or hand-edited file names its field). */
const checkTrainState = compileCheck<TrainState & { kind: string }>({
  type: "object",
  required: requiredKeys<TrainState & { kind: string }>()([
    "kind",
    "step",
    "seconds",
    "totalSteps",
    "adamStep",
    "config",
    "bpeIds",
  ]),
  properties: {
    kind: { type: "string" },
    step: count,
    seconds: { type: "number" },
    totalSteps: count,
    adamStep: count,
    config: {
      type: "object",
      required: requiredKeys<ModelConfig>()(["vocabSize", "dModel", "nLayers", "nHeads", "dFF", "contextLength"]),
      properties: {
        vocabSize: count,
        dModel: count,
        nLayers: count,
        nHeads: count,
        dFF: count,
        contextLength: count,
      },
    },
    bpeIds: { type: "array", items: count },
  },
});

const statePath = (out: string): string => `${out}.train-state`;

function saveState(path: string, state: TrainState, weights: Weights, adam: AdamState): void {
  const tensors = new Map<string, Float32Array>();
  for (const [name, t] of Object.entries(weights)) {
    tensors.set(`weights.${name}`, t);
    tensors.set(`m.${name}`, adam.m[name]!);
    tensors.set(`v.${name}`, adam.v[name]!);
  }
  // Written beside and renamed: a run killed while saving keeps the previous state.
  writeFileSync(`${path}.partial`, writeTensorFile({ kind: "train-state", ...state }, tensors));
  renameSync(`${path}.partial`, path);
}

/** Loads a saved state into the weights and Adam's moments; refuses one from another corpus or size. */
function loadState(
  path: string,
  args: Args,
  config: ModelConfig,
  vocab: Vocabulary,
  weights: Weights,
  adam: AdamState,
): TrainState {
  if (!existsSync(path)) throw new Error(`--resume: no training state at ${path}`);
  const { meta, tensors } = readTensorFile(readFileSync(path), `--resume: ${path}`);
  const saved = checkTrainState(meta, `--resume: ${path}`);
  const same =
    saved.kind === "train-state" &&
    saved.totalSteps === args.steps &&
    JSON.stringify(saved.config) === JSON.stringify(config) &&
    JSON.stringify(saved.bpeIds) === JSON.stringify(vocab.bpeIds);
  if (!same) throw new Error(`--resume: ${path} is from another corpus, model size or --steps (${saved.totalSteps})`);
  for (const name of Object.keys(weights)) {
    weights[name]!.set(tensors.get(`weights.${name}`)!);
    adam.m[name]!.set(tensors.get(`m.${name}`)!);
    adam.v[name]!.set(tensors.get(`v.${name}`)!);
  }
  adam.step = saved.adamStep;
  return saved;
}

/** Weights as views over one flat buffer, so a SharedArrayBuffer can back them for both threads. */
function viewWeights(config: ModelConfig, flat: Float32Array): Weights {
  const weights: Weights = {};
  let offset = 0;
  for (const [name, [rows, cols]] of parameterShapes(config)) {
    weights[name] = flat.subarray(offset, offset + rows * cols);
    offset += rows * cols;
  }
  return weights;
}

function flatSize(config: ModelConfig): number {
  let n = 0;
  for (const [rows, cols] of parameterShapes(config).values()) n += rows * cols;
  return n;
}

/**
 * Base training sequences: every dialogue rendered in the chat template, concatenated in
 * a shuffled order per epoch and cut into full context windows. Targets are the tokens
 * the model writes (assistant, reasoning and call turns): predicting the users' questions
 * would spend the tiny model's capacity on text it never has to produce, and masked rows
 * also skip most of the output layer's backward work.
 */
function* windows(dialogues: EncodedExample[], length: number, seed: number): Generator<EncodedExample> {
  const rng = createRng(seed);
  for (;;) {
    const order = dialogues.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    let tokens: number[] = [];
    let targetMask: number[] = [];
    for (const i of order) {
      tokens.push(...dialogues[i]!.tokens);
      targetMask.push(...dialogues[i]!.targetMask);
      while (tokens.length >= length) {
        yield { tokens: tokens.slice(0, length), targetMask: targetMask.slice(0, length) };
        tokens = tokens.slice(length);
        targetMask = targetMask.slice(length);
      }
    }
  }
}

interface WorkerSetup {
  config: ModelConfig;
  bpeIds: number[];
  weights: SharedArrayBuffer;
  grads: SharedArrayBuffer;
}

/** The worker: computes the gradient of the windows it is sent into its shared gradient buffer. */
function runWorker(setup: WorkerSetup): void {
  const model: LocalModel = {
    config: setup.config,
    vocab: new Vocabulary(setup.bpeIds),
    weights: viewWeights(setup.config, new Float32Array(setup.weights)),
  };
  const flatGrads = new Float32Array(setup.grads);
  const grads = viewWeights(setup.config, flatGrads);
  parentPort!.on("message", (msg: { batch: EncodedExample[]; scale: number }) => {
    flatGrads.fill(0);
    const lossSum = accumulateGradients(model, model.weights, msg.batch, grads, msg.scale);
    parentPort!.postMessage({ lossSum });
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const dialogues = composeDialogues(CORPUS_SEED);
  mkdirSync(dirname(args.corpusOut), { recursive: true });
  writeFileSync(args.corpusOut, dialogues.map((d) => JSON.stringify(d)).join("\n") + "\n");
  const vocab = buildVocabulary(dialogues.flatMap((d) => d.turns.map((t) => t.text)));
  const config: ModelConfig = {
    vocabSize: vocab.size,
    ...HYPER,
    nLayers: args.layers,
    dModel: args.width,
    dFF: 4 * args.width,
  };
  const rendered = dialogues.map((d) => renderTurns(vocab, d.turns));
  const corpusTokens = rendered.reduce((n, r) => n + r.tokens.length, 0);

  const sharedWeights = new SharedArrayBuffer(flatSize(config) * 4);
  const flat = new Float32Array(sharedWeights);
  const weights = viewWeights(config, flat);
  for (const [name, t] of Object.entries(initWeights(config, INIT_SEED))) weights[name]!.set(t);
  const model: LocalModel = { config, vocab, weights };
  console.log(
    `corpus: ${dialogues.length} dialogues, ${corpusTokens} tokens; vocabulary ${vocab.size}; parameters ${flat.length}`,
  );

  const mainGradsFlat = new Float32Array(flat.length);
  const mainGrads = viewWeights(config, mainGradsFlat);
  const workerGrads = new SharedArrayBuffer(flat.length * 4);
  const workerGradsFlat = new Float32Array(workerGrads);
  const setup: WorkerSetup = { config, bpeIds: [...vocab.bpeIds], weights: sharedWeights, grads: workerGrads };
  const worker = new Worker(new URL(import.meta.url), { workerData: setup });
  worker.on("error", (error) => {
    // A failed gradient half would leave the step waiting forever: stop the run instead.
    console.error(error);
    process.exit(1);
  });

  const schedule: ScheduleOptions = {
    learningRate: 3e-3,
    warmupSteps: 100,
    totalSteps: args.steps,
    schedule: "cosine",
  };
  const state = createOptimizerState(weights, { clipNorm: 1 });
  const source = windows(rendered, config.contextLength, ORDER_SEED);
  const evalWindows = [...Array(4)].map(() => source.next().value as EncodedExample);
  const resumed = args.resume ? loadState(statePath(args.out), args, config, vocab, weights, state) : undefined;
  const firstStep = resumed?.step ?? 0;
  const earlierSeconds = resumed?.seconds ?? 0;
  const elapsed = (): number => earlierSeconds + (performance.now() - started) / 1000;
  // The window order is a pure function of the seed: skip what the saved steps consumed.
  for (let i = 0; i < firstStep * BATCH_WINDOWS; i++) source.next();
  if (firstStep > 0) console.log(`resumed at step ${firstStep}`);
  let stopRequested = false;
  const requestStop = (): void => void (stopRequested = true);
  process.once("SIGINT", requestStop).once("SIGTERM", requestStop);
  const checkpoint = (done: number): void =>
    saveState(
      statePath(args.out),
      { step: done, seconds: elapsed(), totalSteps: args.steps, adamStep: state.step, config, bpeIds: vocab.bpeIds },
      weights,
      state,
    );
  let recent = 0;
  for (let step = firstStep; step < args.steps; step++) {
    const batch = [...Array(BATCH_WINDOWS)].map(() => source.next().value as EncodedExample);
    const scale = 1 / batchTargetCount(batch);
    const half = BATCH_WINDOWS / 2;
    const fromWorker = new Promise<number>((resolve) =>
      worker.once("message", (m: { lossSum: number }) => resolve(m.lossSum)),
    );
    worker.postMessage({ batch: batch.slice(half), scale });
    mainGradsFlat.fill(0);
    const lossSum = accumulateGradients(model, weights, batch.slice(0, half), mainGrads, scale) + (await fromWorker);
    for (let i = 0; i < mainGradsFlat.length; i++) mainGradsFlat[i]! += workerGradsFlat[i]!;
    adamUpdate(weights, mainGrads, state, learningRateAt(step, schedule));
    recent += lossSum * scale;
    if ((step + 1) % 50 === 0) {
      const seconds = elapsed();
      console.log(
        `step ${step + 1}/${args.steps} loss ${(recent / 50).toFixed(3)} lr ${learningRateAt(step, schedule).toExponential(2)} ${seconds.toFixed(0)}s`,
      );
      recent = 0;
    }
    const stopping = stopRequested || step + 1 === args.stopAfter;
    if ((step + 1) % 500 === 0 || stopping || step + 1 === args.steps)
      saveModel(model, args.out, { step: step + 1, partial: step + 1 < args.steps });
    if (step + 1 < args.steps && ((step + 1) % 500 === 0 || stopping)) {
      checkpoint(step + 1);
      if (stopping) {
        await worker.terminate();
        console.log(`stopped after step ${step + 1}; continue with --resume (state in ${statePath(args.out)})`);
        return;
      }
    }
  }
  await worker.terminate();
  // The finished weights are the product; a state of a finished run has nothing to resume.
  rmSync(statePath(args.out), { force: true });
  const seconds = Math.round(elapsed());
  const finalLoss = evaluateLoss(model, null, evalWindows);
  const info = {
    steps: args.steps,
    batchWindows: BATCH_WINDOWS,
    schedule,
    trainingSeconds: seconds,
    finalLoss,
    corpusTokens,
    corpusDialogues: dialogues.length,
  };
  mkdirSync(dirname(args.out), { recursive: true });
  saveModel(model, args.out, info);
  console.log(`done in ${seconds}s; training loss on 4 corpus windows ${finalLoss.toFixed(3)}; wrote ${args.out}`);
}

if (isMainThread) await main();
else runWorker(workerData as WorkerSetup);
