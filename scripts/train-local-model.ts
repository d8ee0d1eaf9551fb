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
 *   node scripts/train-local-model.ts [--steps N] [--out path]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { composeDialogues } from "../server/inference/local/corpus/compose.ts";
import { DEFAULT_WEIGHTS_PATH, saveModel, type LocalModel } from "../server/inference/local/local-model.ts";
import { createRng } from "../server/inference/local/math.ts";
import { initWeights, parameterShapes, type ModelConfig, type Weights } from "../server/inference/local/model.ts";
import {
  adamUpdate,
  createOptimizerState,
  learningRateAt,
  type ScheduleOptions,
} from "../server/inference/local/optimizer.ts";
import { DIALOGUES_PATH } from "../server/inference/local/rehearsal.ts";
import { renderTurns } from "../server/inference/local/template.ts";
import {
  accumulateGradients,
  batchTargetCount,
  evaluateLoss,
  type EncodedExample,
} from "../server/inference/local/train.ts";
import { buildVocabulary, Vocabulary } from "../server/inference/local/vocab.ts";

const CORPUS_SEED = 7;
const INIT_SEED = 11;
const ORDER_SEED = 13;
/** Windows per step; half are computed by each thread. */
const BATCH_WINDOWS = 4;
const HYPER = { dModel: 64, nLayers: 2, nHeads: 4, dFF: 256, contextLength: 256 };

interface Args {
  steps: number;
  out: string;
}

function parseArgs(argv: string[]): Args {
  // 5000 steps: at 2000 the model had not learned to copy a number or a name from the prompt.
  const args: Args = { steps: 5000, out: DEFAULT_WEIGHTS_PATH };
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === "--steps") args.steps = Number(argv[i + 1]);
    else if (argv[i] === "--out") args.out = argv[i + 1]!;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return args;
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
  mkdirSync(dirname(DIALOGUES_PATH), { recursive: true });
  writeFileSync(DIALOGUES_PATH, dialogues.map((d) => JSON.stringify(d)).join("\n") + "\n");
  const vocab = buildVocabulary(dialogues.flatMap((d) => d.turns.map((t) => t.text)));
  const config: ModelConfig = { vocabSize: vocab.size, ...HYPER };
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
  let recent = 0;
  for (let step = 0; step < args.steps; step++) {
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
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `step ${step + 1}/${args.steps} loss ${(recent / 50).toFixed(3)} lr ${learningRateAt(step, schedule).toExponential(2)} ${seconds.toFixed(0)}s`,
      );
      recent = 0;
    }
    if ((step + 1) % 500 === 0 || step + 1 === args.steps)
      saveModel(model, args.out, { step: step + 1, partial: step + 1 < args.steps });
  }
  await worker.terminate();
  const seconds = Math.round((performance.now() - started) / 1000);
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
