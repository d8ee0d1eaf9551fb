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
import { backward, createCache, forward, parameterShapes, type Gradients, type Weights } from "./model.ts";
import { adapterGradients, adapterParameters, mergedGradientBuffers, withAdapter, type Adapter } from "./lora.ts";
import type { LocalModel } from "./local-model.ts";
import { nextTokenLoss, targetCount } from "./loss.ts";
import { adamUpdate, createOptimizerState, type AdamOptions, type AdamState } from "./optimizer.ts";
import { renderTurns, type TemplateTurn } from "./template.ts";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatExample {
  messages: ChatMessage[];
}

/** A tokenized training sequence; targetMask[i] = 1 when tokens[i] is learned. */
export interface EncodedExample {
  tokens: number[];
  targetMask: number[];
}

/** Tokens of a chat example in the serving template, left-truncated to maxLength (the answer is at the end). */
export function encodeChatExample(model: LocalModel, example: ChatExample, maxLength = model.config.contextLength): EncodedExample {
  const turns: TemplateTurn[] = example.messages.map((m) => ({ role: m.role, text: m.content }));
  const { tokens, targetMask } = renderTurns(model.vocab, turns);
  const start = Math.max(0, tokens.length - Math.min(maxLength, model.config.contextLength));
  return { tokens: tokens.slice(start), targetMask: targetMask.slice(start) };
}

/** Zeroed gradient buffers for every base parameter. */
export function fullGradientBuffers(model: LocalModel): Weights {
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
  model: LocalModel, weights: Weights, batch: readonly EncodedExample[], grads: Gradients, scale: number,
): number {
  const v = model.config.vocabSize;
  let lossSum = 0;
  for (const example of batch) {
    if (targetCount(example) === 0) continue;
    const trace = forward(model.config, weights, example.tokens, createCache(model.config));
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
export function createTrainingState(model: LocalModel, adapter: Adapter | null, options: Partial<AdamOptions> = {}): AdamState {
  return createOptimizerState(adapter === null ? model.weights : adapterParameters(adapter), options);
}

/**
 * One optimizer step on a batch; returns the batch's mean loss per target token
 * (before the update). With an adapter, only its A/B factors change.
 */
export function trainStep(model: LocalModel, adapter: Adapter | null, batch: readonly EncodedExample[], state: AdamState, lr: number): number {
  const count = batchTargetCount(batch);
  if (count === 0) return 0;
  if (adapter === null) {
    const grads = fullGradientBuffers(model);
    const lossSum = accumulateGradients(model, model.weights, batch, grads, 1 / count);
    adamUpdate(model.weights, grads, state, lr);
    return lossSum / count;
  }
  const merged = mergedGradientBuffers(model, adapter);
  const lossSum = accumulateGradients(model, withAdapter(model, adapter), batch, merged, 1 / count);
  adamUpdate(adapterParameters(adapter), adapterGradients(model, adapter, merged), state, lr);
  return lossSum / count;
}

/** Mean loss per target token over examples, without updating anything. */
export function evaluateLoss(model: LocalModel, adapter: Adapter | null, examples: readonly EncodedExample[]): number {
  const weights = withAdapter(model, adapter);
  let lossSum = 0;
  for (const example of examples) {
    if (targetCount(example) === 0) continue;
    const trace = forward(model.config, weights, example.tokens, createCache(model.config));
    lossSum += nextTokenLoss(trace.logits, example, model.config.vocabSize, 1, null);
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
  const full = encodeChatExample(model, { messages: [...prompt, { role: "assistant", content: answer }] }, Infinity);
  const promptLength = encodeChatExample(model, { messages: prompt }, Infinity).tokens.length;
  full.targetMask.fill(0, 0, promptLength);
  const start = Math.max(0, full.tokens.length - Math.min(maxLength, model.config.contextLength));
  return { tokens: full.tokens.slice(start), targetMask: full.targetMask.slice(start) };
}

/** Σ log p of the example's targets under `weights`, with the trace when a gradient is needed. */
function answerLogProb(model: LocalModel, weights: Weights, example: EncodedExample) {
  const trace = forward(model.config, weights, example.tokens, createCache(model.config));
  return { logp: -nextTokenLoss(trace.logits, example, model.config.vocabSize, 1, null), trace };
}

/**
 * One DPO step on the adapter (the reference policy is the base model without it):
 * loss = −log σ(β·[(log π(chosen) − log π_ref(chosen)) − (log π(rejected) − log π_ref(rejected))]),
 * averaged over the pairs. Returns the mean loss before the update.
 */
export function dpoStep(
  model: LocalModel, adapter: Adapter, pairs: readonly PreferencePair[], state: AdamState, lr: number, beta: number,
  maxLength = model.config.contextLength,
): number {
  const policy = withAdapter(model, adapter);
  const merged = mergedGradientBuffers(model, adapter);
  let lossSum = 0;
  for (const pair of pairs) {
    const chosen = encodeAnswer(model, pair.prompt, pair.chosen, maxLength);
    const rejected = encodeAnswer(model, pair.prompt, pair.rejected, maxLength);
    const pc = answerLogProb(model, policy, chosen);
    const pr = answerLogProb(model, policy, rejected);
    const z = beta * ((pc.logp - answerLogProb(model, model.weights, chosen).logp) - (pr.logp - answerLogProb(model, model.weights, rejected).logp));
    lossSum += softplus(-z);
    // d loss/d log π(chosen) = −β·σ(−z); the gradient of −log π is (softmax − onehot).
    const coefficient = (beta * sigmoid(-z)) / pairs.length;
    backpropLogProb(model, policy, chosen, pc.trace, coefficient, merged);
    backpropLogProb(model, policy, rejected, pr.trace, -coefficient, merged);
  }
  adamUpdate(adapterParameters(adapter), adapterGradients(model, adapter, merged), state, lr);
  return lossSum / pairs.length;
}

/** Adds scale·∇(−log π(example)) into grads, reusing a forward trace. */
function backpropLogProb(model: LocalModel, weights: Weights, example: EncodedExample, trace: ReturnType<typeof forward>, scale: number, grads: Gradients): void {
  const dLogits = new Float32Array(trace.logits.length);
  nextTokenLoss(trace.logits, example, model.config.vocabSize, scale, dLogits);
  backward(model.config, weights, trace, dLogits, grads);
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
const softplus = (x: number): number => (x > 30 ? x : Math.log1p(Math.exp(x)));
