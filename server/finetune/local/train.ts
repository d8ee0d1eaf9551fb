/**
 * Training the local model: supervised steps on chat examples (loss on assistant
 * tokens only), evaluation, and DPO preference steps. The same trainStep trains the
 * base weights (adapter = null) or only a LoRA adapter with the base frozen: the
 * forward/backward code is shared, only the parameter set handed to Adam differs.
 *
 * Typical fine-tuning loop:
 *   const adapter = createAdapter(model, rank, seed);
 *   const state = createTrainingState(model, adapter);
 *   for (let step = 0; step < steps; step++)
 *     trainStep(model, adapter, batchOf(step), state, learningRateAt(step, schedule));
 */
import {
  backward,
  createCache,
  forward,
  parameterShapes,
  type Gradients,
  type Weights,
} from "../../inference/local/model.ts";
import {
  adapterGradients,
  adapterParameters,
  mergeAdapter,
  mergedGradientBuffers,
  type Adapter,
  type BaseWeights,
} from "../../inference/local/lora-merge.ts";
import type { LocalModel } from "../../inference/local/local-model.ts";
import type { ChatExample, ChatMessage, EncodedExample } from "./example.ts";
import { nextTokenLoss, targetCount } from "./loss.ts";
import { adamUpdate, createOptimizerState, type AdamOptions, type AdamState } from "./optimizer.ts";
import { renderTurns, type TemplateTurn } from "../../inference/local/template.ts";

/**
 * Tokens of a chat in the serving template, whole (never truncated): assistant messages
 * are targets unless their weight is 0. Callers check the length against the context.
 */
export function renderChat(model: LocalModel, messages: readonly ChatMessage[]): EncodedExample {
  const tokens: number[] = [];
  const targetMask: number[] = [];
  for (const m of messages) {
    // renderTurns of a conversation is the concatenation of its turns' renderings.
    const turn = renderTurns(model.vocab, [{ role: m.role, text: m.content } satisfies TemplateTurn]);
    if (m.weight === 0) turn.targetMask.fill(0);
    // A loop, not push(...spread): a row of 100k+ tokens would overflow the call stack.
    for (let i = 0; i < turn.tokens.length; i++) {
      tokens.push(turn.tokens[i]!);
      targetMask.push(turn.targetMask[i]!);
    }
  }
  return { tokens, targetMask };
}

/** Tokens of a chat example in the serving template, left-truncated to maxLength (the answer is at the end). */
export function encodeChatExample(
  model: LocalModel,
  example: ChatExample,
  maxLength = model.config.contextLength,
): EncodedExample {
  const { tokens, targetMask } = renderChat(model, example.messages);
  const start = Math.max(0, tokens.length - Math.min(maxLength, model.config.contextLength));
  return { tokens: tokens.slice(start), targetMask: targetMask.slice(start) };
}

/** Zeroed gradient buffers for every base parameter. */
export function fullGradientBuffers(model: BaseWeights): Weights {
  const grads: Weights = {};
  for (const [name, [rows, cols]] of parameterShapes(model.config)) grads[name] = new Float32Array(rows * cols);
  return grads;
}

/**
 * Forward + backward over a batch with the given (possibly merged) weights, adding
 * into `grads` the gradient of Σ(−log p)·scale. Returns Σ −log p over all targets.
 * The shared core of base training, LoRA training and the parallel trainer.
 */
export function accumulateGradients(
  model: BaseWeights,
  weights: Weights,
  batch: readonly EncodedExample[],
  grads: Gradients,
  scale: number,
): number {
  const v = model.config.vocabSize;
  let lossSum = 0;
  for (const example of batch) {
    if (targetCount(example) === 0) continue;
    const trace = forward(model.config, weights, example.tokens, createCache(model.config), example);
    const dLogits = new Float32Array(trace.logits.length);
    lossSum += nextTokenLoss(trace.logits, example, v, scale, dLogits);
    backward(model.config, weights, trace, dLogits, grads);
  }
  return lossSum;
}

export function batchTargetCount(batch: readonly EncodedExample[]): number {
  return batch.reduce((n, e) => n + targetCount(e), 0);
}

/** Optimizer state over the parameters a step will update: all base weights, or the adapter's factors. */
export function createTrainingState(
  model: LocalModel,
  adapter: Adapter | null,
  options: Partial<AdamOptions> = {},
): AdamState {
  return createOptimizerState(adapter === null ? model.weights : adapterParameters(adapter), options);
}

/**
 * One optimizer step on a batch; returns the batch's mean loss per target token
 * (before the update). With an adapter, only its A/B factors change.
 */
export function trainStep(
  model: BaseWeights,
  adapter: Adapter | null,
  batch: readonly EncodedExample[],
  state: AdamState,
  lr: number,
): number {
  const count = batchTargetCount(batch);
  if (count === 0) return 0;
  if (adapter === null) {
    const grads = fullGradientBuffers(model);
    const lossSum = accumulateGradients(model, model.weights, batch, grads, 1 / count);
    adamUpdate(model.weights, grads, state, lr);
    return lossSum / count;
  }
  const tasks = batch.map((example): GradientTask => ({ kind: "crossEntropy", example, scale: 1 / count }));
  const { grads, losses } = adapterTaskGradients(model, adapter, tasks);
  applyAdapterGradients(model, adapter, grads, state, lr);
  return losses.reduce((a, b) => a + b, 0) / count;
}

/**
 * One part of an adapter step's gradient: an example's cross-entropy (Σ −log p of its
 * targets, times scale), or a preference pair's DPO loss (times scale) plus chosenNll ×
 * the preferred answer's cross-entropy. A step is the sum of its tasks, so its tasks can
 * be computed apart (the fine-tuning trainer's worker threads) and their gradients added.
 */
export type GradientTask =
  | { kind: "crossEntropy"; example: EncodedExample; scale: number }
  | {
      kind: "preference";
      pair: EncodedPreference;
      reference: ReferenceLogProbs;
      beta: number;
      scale: number;
      chosenNll: number;
    };

/**
 * The summed gradient of `tasks` under the base with the adapter merged, with respect to
 * the merged matrices (and the added tokens' rows), and each task's loss: Σ −log p for a
 * cross-entropy, the DPO loss for a pair. applyAdapterGradients turns it into an update.
 */
export function adapterTaskGradients(
  model: BaseWeights,
  adapter: Adapter,
  tasks: readonly GradientTask[],
): { grads: Gradients; losses: number[] } {
  const adapted = mergeAdapter(model, adapter);
  const grads = mergedGradientBuffers(adapted, adapter);
  const losses = tasks.map((task) =>
    task.kind === "crossEntropy"
      ? accumulateGradients(adapted, adapted.weights, [task.example], grads, task.scale)
      : dpoPairLoss(adapted, adapted.weights, task.pair, task.reference, task.beta, grads, task.scale, task.chosenNll),
  );
  return { grads, losses };
}

/** The Adam update of the adapter's factors from a gradient of the merged matrices; returns the gradient's norm. */
export function applyAdapterGradients(
  model: BaseWeights,
  adapter: Adapter,
  merged: Gradients,
  state: AdamState,
  lr: number,
): number {
  return adamUpdate(adapterParameters(adapter), adapterGradients(model, adapter, merged), state, lr);
}

/** Mean loss per target token over examples, without updating anything. */
export function evaluateLoss(model: BaseWeights, adapter: Adapter | null, examples: readonly EncodedExample[]): number {
  const adapted = adapter === null ? model : mergeAdapter(model, adapter);
  let lossSum = 0;
  for (const example of examples) {
    if (targetCount(example) === 0) continue;
    const trace = forward(adapted.config, adapted.weights, example.tokens, createCache(adapted.config), example);
    lossSum += nextTokenLoss(trace.logits, example, adapted.config.vocabSize, 1, null);
  }
  const count = batchTargetCount(examples);
  return count === 0 ? 0 : lossSum / count;
}

/** A preference pair for DPO: the same prompt, a preferred and a non-preferred answer. */
export interface PreferencePair {
  prompt: ChatMessage[];
  chosen: string;
  rejected: string;
}

/** Prompt + answer, with only the answer's tokens as targets (earlier assistant turns are context). */
function encodeAnswer(model: LocalModel, prompt: ChatMessage[], answer: string, maxLength: number): EncodedExample {
  const full = encodeAnswerTurns(model, prompt, [{ role: "assistant", content: answer }]);
  const start = Math.max(0, full.tokens.length - Math.min(maxLength, model.config.contextLength));
  return { tokens: full.tokens.slice(start), targetMask: full.targetMask.slice(start) };
}

/** Prompt + answer messages, whole; the targets are exactly the answer's tokens. */
function encodeAnswerTurns(
  model: LocalModel,
  prompt: readonly ChatMessage[],
  answer: readonly ChatMessage[],
): EncodedExample {
  const context = renderChat(
    model,
    prompt.map((m) => ({ ...m, weight: 0 as const })),
  );
  const reply = renderChat(
    model,
    answer.map((m) => ({ ...m, weight: 1 as const })),
  );
  return { tokens: [...context.tokens, ...reply.tokens], targetMask: [...context.targetMask, ...reply.targetMask] };
}

/** A preference pair as whole token sequences (never truncated), for dpoPairLoss. */
export function encodePreference(
  model: LocalModel,
  prompt: readonly ChatMessage[],
  chosen: readonly ChatMessage[],
  rejected: readonly ChatMessage[],
): EncodedPreference {
  return { chosen: encodeAnswerTurns(model, prompt, chosen), rejected: encodeAnswerTurns(model, prompt, rejected) };
}

/** Σ log p of the example's targets under `weights`, with the trace when a gradient is needed. */
function answerLogProb(model: BaseWeights, weights: Weights, example: EncodedExample) {
  const trace = forward(model.config, weights, example.tokens, createCache(model.config), example);
  return { logp: -nextTokenLoss(trace.logits, example, model.config.vocabSize, 1, null), trace };
}

/** Σ log p of an example's targets under `weights` (e.g. the reference model's log π_ref). */
export function sequenceLogProb(model: BaseWeights, weights: Weights, example: EncodedExample): number {
  return answerLogProb(model, weights, example).logp;
}

/** A preference pair as token sequences: prompt + answer, only the answer's tokens as targets. */
export interface EncodedPreference {
  chosen: EncodedExample;
  rejected: EncodedExample;
}

/** log π_ref of both answers of a pair; constant during training, so callers may compute it once. */
export interface ReferenceLogProbs {
  chosen: number;
  rejected: number;
}

/** log π_ref of a pair under `model`'s own weights (the base, or an adapted model standing for it). */
export function referenceLogProbs(model: BaseWeights, pair: EncodedPreference): ReferenceLogProbs {
  return {
    chosen: sequenceLogProb(model, model.weights, pair.chosen),
    rejected: sequenceLogProb(model, model.weights, pair.rejected),
  };
}

/**
 * DPO loss of one pair under the policy weights:
 * −log σ(β·[(log π(chosen) − log π_ref(chosen)) − (log π(rejected) − log π_ref(rejected))]).
 * When grads is given, adds scale·∇loss (with respect to the merged matrices) into it, plus
 * chosenNll·∇(−log π(chosen)): a cross-entropy term on the preferred answer that shares the
 * chosen answer's forward pass.
 */
export function dpoPairLoss(
  model: BaseWeights,
  policy: Weights,
  pair: EncodedPreference,
  reference: ReferenceLogProbs,
  beta: number,
  grads: Gradients | null,
  scale = 1,
  chosenNll = 0,
): number {
  const pc = answerLogProb(model, policy, pair.chosen);
  const pr = answerLogProb(model, policy, pair.rejected);
  const z = dpoMargin({ chosen: pc.logp, rejected: pr.logp }, reference, beta);
  if (grads !== null) {
    // d loss/d log π(chosen) = −β·σ(−z); the gradient of −log π is (softmax − onehot).
    const coefficient = beta * sigmoid(-z) * scale;
    backpropLogProb(model, policy, pair.chosen, pc.trace, coefficient + chosenNll, grads);
    backpropLogProb(model, policy, pair.rejected, pr.trace, -coefficient, grads);
  }
  return softplus(-z);
}

/** β·[(log π(chosen) − log π_ref(chosen)) − (log π(rejected) − log π_ref(rejected))]. */
function dpoMargin(policy: ReferenceLogProbs, reference: ReferenceLogProbs, beta: number): number {
  return beta * (policy.chosen - reference.chosen - (policy.rejected - reference.rejected));
}

/** The DPO loss of a pair from its answers' log-probabilities under the policy and the reference. */
export function dpoLoss(policy: ReferenceLogProbs, reference: ReferenceLogProbs, beta: number): number {
  return softplus(-dpoMargin(policy, reference, beta));
}

/**
 * One DPO step on the adapter (the reference policy is the base model without it),
 * averaging dpoPairLoss over the pairs. Returns the mean loss before the update.
 */
export function dpoStep(
  model: LocalModel,
  adapter: Adapter,
  pairs: readonly PreferencePair[],
  state: AdamState,
  lr: number,
  beta: number,
  maxLength = model.config.contextLength,
): number {
  const tasks = pairs.map((p): GradientTask => {
    const pair = {
      chosen: encodeAnswer(model, p.prompt, p.chosen, maxLength),
      rejected: encodeAnswer(model, p.prompt, p.rejected, maxLength),
    };
    return {
      kind: "preference",
      pair,
      reference: referenceLogProbs(model, pair),
      beta,
      scale: 1 / pairs.length,
      chosenNll: 0,
    };
  });
  const { grads, losses } = adapterTaskGradients(model, adapter, tasks);
  applyAdapterGradients(model, adapter, grads, state, lr);
  return losses.reduce((a, b) => a + b, 0) / pairs.length;
}

/** Adds scale·∇(−log π(example)) into grads, reusing a forward trace. */
function backpropLogProb(
  model: BaseWeights,
  weights: Weights,
  example: EncodedExample,
  trace: ReturnType<typeof forward>,
  scale: number,
  grads: Gradients,
): void {
  const dLogits = new Float32Array(trace.logits.length);
  nextTokenLoss(trace.logits, example, model.config.vocabSize, scale, dLogits);
  backward(model.config, weights, trace, dLogits, grads);
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
const softplus = (x: number): number => (x > 30 ? x : Math.log1p(Math.exp(x)));
