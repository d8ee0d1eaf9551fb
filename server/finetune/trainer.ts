/**
 * The fine-tuning trainer: LoRA supervised fine-tuning (SFT) and DPO on the embedded
 * local model, the frozen base weights plus a rank-`loraRank` adapter optimised with
 * Adam. The job runner calls train() with the rows and config of a job; it gets a loss
 * for every optimisation step, an evaluation loss and a checkpoint at every epoch end,
 * and finally the adapter bytes LocalProvider serves the new model with.
 *
 * The arithmetic (each step's gradient, evaluation, DPO's reference log-probabilities)
 * runs on worker threads (gradient-pool.ts), so requests keep flowing while a job
 * trains; between steps the trainer yields to the event loop and checks the abort signal.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import {
  adaptModel,
  createAdapter,
  serializeAdapter,
  type Adapter,
  type LocalModel,
} from "../inference/local/index.ts";
import {
  applyAdapterGradients,
  createTrainingState,
  dpoLoss,
  learningRateAt,
  loadCorpusDialogues,
  rehearsalExamples,
  targetCount,
  type EncodedExample,
  type GradientTask,
  type LrSchedule,
} from "./local/index.ts";
import { createRng } from "../inference/local/math.ts";
import type { ParsedRow } from "../datasets/rows.ts";
import {
  chooseAddedTokens,
  exampleTokens as rowExampleTokens,
  fitsRow,
  localBaseModel,
  prepareRows,
  trainableLocalModel,
  type TrainingItem,
} from "./trainer-data.ts";
import { gradientPool } from "./gradient-pool.ts";
import { cloneAdapter, snapshot, type EarlyStopState, type TrainerCheckpoint } from "./trainer-checkpoint.ts";

export { loadCheckpoint, serializeCheckpoint, type TrainerCheckpoint } from "./trainer-checkpoint.ts";
export { TrainingDataError } from "./trainer-data.ts";

/** Training stopped because the loss diverged (NaN, infinite, or far above where it started): the job's settings are at fault. */
export class TrainingDivergedError extends Error {
  override name = "TrainingDivergedError";
}

export interface TrainerConfig {
  loraRank: number;
  learningRate: number;
  epochs: number;
  batchSize: number;
  maxContextLength: number;
  earlyStop: boolean;
  lrSchedule: LrSchedule;
  warmupSteps: number;
  /** Used by DPO only. */
  dpoBeta: number;
}

export interface StepPoint {
  /** From 1, counted across epochs. */
  step: number;
  /** From 1. */
  epoch: number;
  /** Mean loss of the step's batch before its update: per target token (SFT), per pair (DPO). */
  loss: number;
  learningRate: number;
  /** Cumulative o200k tokens of the examples trained on so far (the bill's count). */
  processedTokens: number;
  /** 0–100, share of all steps of all epochs. */
  percent: number;
}

export interface EpochEnd {
  epoch: number;
  /** Present when the run has evaluation rows that fit the context. */
  evaluationLoss?: number;
  checkpoint: TrainerCheckpoint;
}

export interface TrainingRun {
  kind: "SFT" | "DPO";
  /** Platform model id of the base, "tiny-chat". */
  baseModel: string;
  config: TrainerConfig;
  /** SFT rows for SFT, PREFERENCE rows for DPO, in dataset order. */
  train: ParsedRow[];
  /** May be empty. */
  evaluation: ParsedRow[];
  /** Abort stops training within one optimisation step; train() rejects with signal.reason. */
  signal: AbortSignal;
  /** Continue after this checkpoint's epoch (with the seed the checkpointed run had). */
  resume?: TrainerCheckpoint;
  /**
   * Seeds the random draws of a run: the adapter's A factors, each epoch's shuffle and the
   * rehearsal's dialogues (default 1, what every job uses). Benchmarks vary it to see how
   * much a result owes to the draw rather than to a setting (bench/tuning-quality.ts).
   */
  seed?: number;
  onStep(point: StepPoint): void | Promise<void>;
  /** Awaited: the runner persists the checkpoint before training goes on. */
  onEpochEnd(end: EpochEnd): Promise<void>;
}

export interface TrainerResult {
  /** serializeAdapter output; loadAdapter() turns it into what LocalProvider's adapterFor returns. */
  adapter: Uint8Array;
  examplesTrained: number;
  /** Training rows longer than the context, never trained on. */
  examplesSkipped: number;
  /** Evaluation rows evaluated (those that fit the context). */
  evalExamples: number;
  stoppedEarly: boolean;
}

/** o200k tokens of an example, as the dataset validator and the bill count them. */
export function exampleTokens(row: ParsedRow): number {
  return rowExampleTokens(row);
}

/** Whether the example fits maxContextLength in the local model's encoding: the rule train() skips by. */
export function fitsContext(row: ParsedRow, maxContextLength: number): boolean {
  return fitsRow(localBaseModel(), row, maxContextLength);
}

/**
 * The run's seeds: the adapter's random A factors, each epoch's shuffle and each step's
 * rehearsal, all fixed by the run's seed and the epoch or step number (so a resumed run
 * repeats them). Seed 1 gives the draws jobs have always had.
 */
const DEFAULT_SEED = 1;
const SHUFFLE_SEED = 0x5eed;

function seedOf(run: TrainingRun): number {
  return run.seed ?? DEFAULT_SEED;
}

/**
 * Rehearsal (local/rehearsal.ts): corpus dialogues per step and their weight against the
 * batch's own loss. Without it 40 ship rows turned answers to unrelated prompts into
 * their pattern; with 4 at weight 1 most stay the base model's (bench/tuning-quality.ts),
 * for about half again the time per step.
 */
const REHEARSAL_PER_STEP = 4;
const REHEARSAL_WEIGHT = 1;

/** Weight of the preferred answers' cross-entropy in a DPO step (see dpoStep). */
const CHOSEN_NLL_WEIGHT = 1;

/**
 * Divergence: a step whose loss is not finite, or above DIVERGENCE_FACTOR × the first
 * step's loss + DIVERGENCE_MARGIN, ends the job (a learning rate far too high does this
 * within a few steps). The margin keeps a noisy start from counting.
 */
const DIVERGENCE_FACTOR = 2;
const DIVERGENCE_MARGIN = 5;

/**
 * Early stopping (config.earlyStop with evaluation rows): an epoch improves when its
 * evaluation loss is below the best so far by more than MIN_IMPROVEMENT (relative).
 * Training stops after the first epoch that does not improve (a patience of one epoch),
 * and the result is the adapter of the epoch with the lowest evaluation loss, not the
 * last one. Without evaluation rows there is nothing to judge by: earlyStop does nothing.
 */
const MIN_IMPROVEMENT = 1e-3;

/** The live state of a run; a checkpoint is a snapshot of it. */
interface Progress {
  epoch: number;
  step: number;
  processedTokens: number;
  /** Loss of the run's first step, the divergence check's yardstick; null before it. */
  firstLoss: number | null;
  adapter: Adapter;
  optimizer: TrainerCheckpoint["optimizer"];
  earlyStop: EarlyStopState;
}

interface Context {
  run: TrainingRun;
  /** The frozen base model. */
  model: LocalModel;
  /** The adapter before any step: DPO's reference policy. */
  referenceAdapter: Adapter;
  /** The same adapter merged: its vocabulary is the one the job's sequences are in. */
  reference: LocalModel;
  items: TrainingItem[];
  evaluation: TrainingItem[];
  totalSteps: number;
  earlyStopping: boolean;
  progress: Progress;
}

export async function train(run: TrainingRun): Promise<TrainerResult> {
  run.signal.throwIfAborted();
  const model = trainableLocalModel(run.baseModel);
  const { config } = run;
  const format = run.kind === "SFT" ? "SFT" : "PREFERENCE";
  const progress = run.resume === undefined ? await freshProgress(model, run) : resumedProgress(run);
  // The adapter before any step: rows are encoded in its vocabulary, and it is DPO's reference policy.
  const referenceAdapter = startingAdapter(model, seedOf(run), config.loraRank, progress.adapter.tokens.bpeIds);
  const initial = adaptModel(model, referenceAdapter);
  const trainRows = await prepareRows(model, initial, run.train, format, config.maxContextLength, "training");
  const evalRows = await prepareRows(model, initial, run.evaluation, format, config.maxContextLength, "evaluation");
  const counts = {
    examplesTrained: trainRows.items.length,
    examplesSkipped: trainRows.skipped,
    evalExamples: evalRows.items.length,
  };
  if (trainRows.items.length === 0) {
    // Nothing fits: no step, no epoch; the runner reports it from examplesTrained = 0.
    return {
      ...counts,
      adapter: serializeAdapter(createAdapter(model, config.loraRank, seedOf(run))),
      stoppedEarly: false,
    };
  }
  const ctx: Context = {
    run,
    model,
    referenceAdapter,
    reference: initial,
    items: trainRows.items,
    evaluation: evalRows.items,
    totalSteps: Math.ceil(trainRows.items.length / config.batchSize) * config.epochs,
    earlyStopping: config.earlyStop && evalRows.items.length > 0,
    progress,
  };
  const p = ctx.progress;
  await loadCorpusDialogues(); // for the rehearsal, read without holding the event loop
  while (p.epoch < config.epochs && !p.earlyStop.stopped) await trainEpoch(ctx, p.epoch + 1);
  const final = ctx.earlyStopping && p.earlyStop.bestAdapter !== null ? p.earlyStop.bestAdapter : p.adapter;
  return { ...counts, adapter: serializeAdapter(final), stoppedEarly: p.earlyStop.stopped && p.epoch < config.epochs };
}

/** A new adapter: B at zero, added tokens at their starting rows; the same for the same tokens and rank. */
function startingAdapter(model: LocalModel, seed: number, rank: number, addedTokens: readonly number[]): Adapter {
  return createAdapter(model, rank, seed, { addedTokens });
}

async function freshProgress(model: LocalModel, run: TrainingRun): Promise<Progress> {
  const adapter = startingAdapter(model, seedOf(run), run.config.loraRank, await chooseAddedTokens(model, run.train));
  return {
    epoch: 0,
    step: 0,
    processedTokens: 0,
    firstLoss: null,
    adapter,
    optimizer: createTrainingState(model, adapter),
    earlyStop: { bestLoss: null, bestEpoch: 0, bestAdapter: null, stopped: false },
  };
}

/** The checkpoint's state, copied so that training does not change the caller's object. */
function resumedProgress(run: TrainingRun): Progress {
  const c = snapshot(run.resume!);
  if (c.kind !== run.kind) throw new Error(`cannot resume a ${run.kind} run from a ${c.kind} checkpoint`);
  const rank = Object.values(c.adapter.matrices)[0]?.rank;
  if (rank !== run.config.loraRank)
    throw new Error(`checkpoint adapter rank ${rank} differs from loraRank ${run.config.loraRank}`);
  const { kind: _kind, ...progress } = c;
  return progress;
}

/** Updates the early-stop state with an epoch's evaluation loss (rule: MIN_IMPROVEMENT). */
function judgeEpoch(p: Progress, epoch: number, loss: number): void {
  const s = p.earlyStop;
  if (s.bestLoss === null || loss < s.bestLoss * (1 - MIN_IMPROVEMENT)) {
    s.bestLoss = loss;
    s.bestEpoch = epoch;
    s.bestAdapter = cloneAdapter(p.adapter);
  } else {
    s.stopped = true;
  }
}

/** The epoch's example order: a shuffle seeded by the run's seed and the epoch number, so resuming repeats it. */
function epochOrder(count: number, epoch: number, seed: number): number[] {
  const rng = createRng(SHUFFLE_SEED + epoch * 7919 + (seed - DEFAULT_SEED) * 1_000_003);
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** One epoch: its steps, then evaluation, early-stop judgement and the checkpoint. */
async function trainEpoch(ctx: Context, epoch: number): Promise<void> {
  const { run, progress: p } = ctx;
  const order = epochOrder(ctx.items.length, epoch, seedOf(ctx.run));
  for (let start = 0; start < order.length; start += run.config.batchSize) {
    await trainBatch(
      ctx,
      epoch,
      order.slice(start, start + run.config.batchSize).map((i) => ctx.items[i]!),
    );
  }
  const evaluationLoss = ctx.evaluation.length > 0 ? await evaluate(ctx) : undefined;
  if (ctx.earlyStopping) judgeEpoch(p, epoch, evaluationLoss!);
  p.epoch = epoch;
  await run.onEpochEnd({
    epoch,
    ...(evaluationLoss !== undefined ? { evaluationLoss } : {}),
    checkpoint: snapshot({ kind: run.kind, ...p }),
  });
  run.signal.throwIfAborted();
}

/** One optimisation step on a batch, reported through onStep. */
async function trainBatch(ctx: Context, epoch: number, batch: TrainingItem[]): Promise<void> {
  const { run, progress: p } = ctx;
  const { config } = run;
  const learningRate = learningRateAt(p.step, {
    learningRate: config.learningRate,
    warmupSteps: config.warmupSteps,
    totalSteps: ctx.totalSteps,
    schedule: config.lrSchedule,
  });
  const loss = run.kind === "SFT" ? await sftStep(ctx, batch, learningRate) : await dpoStep(ctx, batch, learningRate);
  checkDivergence(p, loss);
  p.step++;
  p.processedTokens += batch.reduce((n, item) => n + item.tokens, 0);
  await run.onStep({
    step: p.step,
    epoch,
    loss,
    learningRate,
    processedTokens: p.processedTokens,
    percent: (100 * p.step) / ctx.totalSteps,
  });
  await pause(run.signal);
}

/** Throws TrainingDivergedError when the step's loss says the run has diverged (rule: DIVERGENCE_FACTOR). */
function checkDivergence(p: Progress, loss: number): void {
  const step = p.step + 1;
  if (!Number.isFinite(loss))
    throw new TrainingDivergedError(`The training loss became ${loss} at step ${step}; lower config.learningRate.`);
  // A batch without targets reports 0; the yardstick is the first real loss.
  if (loss > 0) p.firstLoss ??= loss;
  if (p.firstLoss === null) return;
  const ceiling = DIVERGENCE_FACTOR * p.firstLoss + DIVERGENCE_MARGIN;
  if (loss > ceiling) {
    throw new TrainingDivergedError(
      `The training loss diverged: ${loss.toFixed(3)} at step ${step}, from ${p.firstLoss.toFixed(3)} at the start; lower config.learningRate.`,
    );
  }
}

/** Lets the event loop run (requests, timers), then stops if the job was cancelled. */
async function pause(signal: AbortSignal): Promise<void> {
  await yieldToEventLoop();
  signal.throwIfAborted();
}

/** One SFT step: mean cross-entropy per target token of the batch (weight-0 messages are not targets). */
async function sftStep(ctx: Context, batch: TrainingItem[], learningRate: number): Promise<number> {
  const examples = batch.flatMap((item) => (item.encoded.format === "SFT" ? [item.encoded.example] : []));
  const count = examples.reduce((n, example) => n + targetCount(example), 0);
  // A batch without any target (every assistant message weight 0) teaches nothing: no update.
  if (count === 0) return 0;
  const tasks = examples.map((example): GradientTask => ({ kind: "crossEntropy", example, scale: 1 / count }));
  const losses = await step(ctx, tasks, learningRate);
  return losses.slice(0, examples.length).reduce((a, b) => a + b, 0) / count;
}

/**
 * The step's rehearsal dialogues as gradient tasks (their loss is not reported: it is
 * not the job's). They are in the adapted vocabulary, which the reference model has.
 */
function rehearsalTasks(ctx: Context): GradientTask[] {
  const examples: EncodedExample[] = rehearsalExamples(
    ctx.reference,
    ctx.progress.step,
    REHEARSAL_PER_STEP,
    seedOf(ctx.run),
  );
  const count = examples.reduce((n, e) => n + targetCount(e), 0);
  if (count === 0) return [];
  return examples.map((example) => ({ kind: "crossEntropy", example, scale: REHEARSAL_WEIGHT / count }));
}

/**
 * The step's gradient (the tasks and the rehearsal) from the worker threads, then the
 * optimizer update; returns the losses of `tasks`, in order. A gradient that is not
 * finite means the run has diverged.
 */
async function step(ctx: Context, tasks: GradientTask[], learningRate: number): Promise<number[]> {
  const p = ctx.progress;
  const { grads, losses } = await gradientPool(ctx.run.baseModel).gradients(p.adapter, [
    ...tasks,
    ...rehearsalTasks(ctx),
  ]);
  const norm = applyAdapterGradients(ctx.model, p.adapter, grads, p.optimizer, learningRate);
  if (!Number.isFinite(norm)) {
    throw new TrainingDivergedError(`The gradient became ${norm} at step ${p.step + 1}; lower config.learningRate.`);
  }
  return losses;
}

/**
 * One DPO step: mean DPO loss of the batch's pairs against the untrained adapter as
 * reference (the reported loss), plus CHOSEN_NLL_WEIGHT × the cross-entropy of the
 * preferred answers per token (as RPO does): DPO alone only moves the margin relative
 * to the reference, by about 30 nats at β 0.1, which leaves a style the base finds
 * unlikely still unlikely; the extra term makes the preferred answer one the model writes.
 */
async function dpoStep(ctx: Context, batch: TrainingItem[], learningRate: number): Promise<number> {
  const items = batch.flatMap((item) =>
    item.encoded.format === "PREFERENCE" ? [{ item, pair: item.encoded.pair }] : [],
  );
  if (items.length === 0) return 0;
  const chosenTargets = items.reduce((n, { pair }) => n + targetCount(pair.chosen), 0);
  const chosenNll = chosenTargets > 0 ? CHOSEN_NLL_WEIGHT / chosenTargets : 0;
  await computeReferences(
    ctx,
    items.map(({ item }) => item),
  );
  const tasks = items.map(({ item, pair }): GradientTask => ({
    kind: "preference",
    pair,
    reference: item.reference!,
    beta: ctx.run.config.dpoBeta,
    scale: 1 / batch.length,
    chosenNll,
  }));
  const losses = await step(ctx, tasks, learningRate);
  return losses.slice(0, tasks.length).reduce((a, b) => a + b, 0) / batch.length;
}

/** log π_ref of the answers of the items that lack it (it never changes: computed on first use). */
async function computeReferences(ctx: Context, items: readonly TrainingItem[]): Promise<void> {
  const missing = items.filter((item) => item.reference === undefined && item.encoded.format === "PREFERENCE");
  if (missing.length === 0) return;
  const logProbs = await logProbsOf(ctx, ctx.referenceAdapter, answersOf(missing));
  missing.forEach((item, i) => (item.reference = { chosen: logProbs[2 * i]!, rejected: logProbs[2 * i + 1]! }));
}

/**
 * Sequences scored between two checks of the abort signal: a large evaluation set is
 * scored in parts, so cancelling a job never waits for all of it.
 */
const SEQUENCES_PER_CALL = 64;

/** Σ log p of each sequence's targets under the base with `adapter` merged, in order (on the workers). */
async function logProbsOf(ctx: Context, adapter: Adapter, sequences: readonly EncodedExample[]): Promise<number[]> {
  const pool = gradientPool(ctx.run.baseModel);
  const out: number[] = [];
  for (let i = 0; i < sequences.length; i += SEQUENCES_PER_CALL) {
    for (const lp of await pool.logProbs(adapter, sequences.slice(i, i + SEQUENCES_PER_CALL))) out.push(lp);
    ctx.run.signal.throwIfAborted();
  }
  return out;
}

/** The chosen and the rejected answer of each preference item, in that order. */
function answersOf(items: readonly TrainingItem[]): EncodedExample[] {
  return items.flatMap((item) =>
    item.encoded.format === "PREFERENCE" ? [item.encoded.pair.chosen, item.encoded.pair.rejected] : [],
  );
}

/** Evaluation loss with the current adapter: per target token (SFT) or mean DPO loss per pair. */
async function evaluate(ctx: Context): Promise<number> {
  const adapter = ctx.progress.adapter;
  if (ctx.run.kind === "SFT") {
    const examples = ctx.evaluation.flatMap((item) =>
      item.encoded.format === "SFT" && targetCount(item.encoded.example) > 0 ? [item.encoded.example] : [],
    );
    const count = examples.reduce((n, e) => n + targetCount(e), 0);
    if (count === 0) return 0;
    const logProbs = await logProbsOf(ctx, adapter, examples);
    return -logProbs.reduce((a, b) => a + b, 0) / count;
  }
  const pairs = ctx.evaluation.filter((item) => item.encoded.format === "PREFERENCE");
  if (pairs.length === 0) return 0;
  await computeReferences(ctx, pairs);
  const logProbs = await logProbsOf(ctx, adapter, answersOf(pairs));
  const beta = ctx.run.config.dpoBeta;
  const losses = pairs.map((item, i) =>
    dpoLoss({ chosen: logProbs[2 * i]!, rejected: logProbs[2 * i + 1]! }, item.reference!, beta),
  );
  return losses.reduce((a, b) => a + b, 0) / pairs.length;
}
