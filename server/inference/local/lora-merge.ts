/**
 * The arithmetic of a LoRA adapter on the weights alone: the merged matrices
 * `W + (alpha/rank)·B·A` (and the added tokens' rows appended), the gradient buffers of
 * a training step, and the chain rule from the merged matrices' gradient to the factors'.
 * No vocabulary and so no tokenizer: the fine-tuning worker threads use this module and
 * stay small (the o200k tables are some 70 MB a thread). lora.ts builds on it.
 */
import { matmul } from "./math.ts";
import { parameterShapes, type Gradients, type ModelConfig, type Weights } from "./model.ts";

export interface LoraMatrix {
  /** [rank, in] */
  A: Float32Array;
  /** [out, rank] */
  B: Float32Array;
  rank: number;
  alpha: number;
}

/** Tokens an adapter adds after the base vocabulary, with their trainable rows. */
export interface AddedTokens {
  /** o200k ids, none of them in the base vocabulary; dense id = base vocabulary size + index. */
  bpeIds: number[];
  /** [bpeIds.length, dModel] rows appended to `tok_emb`. */
  embeddings: Float32Array;
  /** [bpeIds.length, dModel] rows appended to `out`. */
  outputs: Float32Array;
}

export interface Adapter {
  /** Base matrix name → its low-rank update. */
  matrices: Record<string, LoraMatrix>;
  tokens: AddedTokens;
}

/** Base weights: what merging and training need of a model (no vocabulary). */
export interface BaseWeights {
  config: ModelConfig;
  weights: Weights;
}

/**
 * The weights an adapter makes: every adapted matrix merged, the added tokens' rows
 * appended to the embedding and output matrices, vocabSize counting them. A fresh copy
 * each call (training changes the adapter between calls).
 */
export function mergeAdapter(model: BaseWeights, adapter: Adapter): BaseWeights {
  const shapes = parameterShapes(model.config);
  const weights: Weights = { ...model.weights };
  for (const [name, m] of Object.entries(adapter.matrices)) {
    const [rows, cols] = shapes.get(name)!;
    const delta = new Float32Array(rows * cols);
    matmul(delta, m.B, m.A, rows, m.rank, cols, m.alpha / m.rank);
    const base = model.weights[name]!;
    for (let i = 0; i < delta.length; i++) delta[i]! += base[i]!;
    weights[name] = delta;
  }
  const added = adapter.tokens.bpeIds.length;
  if (added === 0) return { config: model.config, weights };
  weights.tok_emb = concatRows(weights.tok_emb!, adapter.tokens.embeddings);
  weights.out = concatRows(weights.out!, adapter.tokens.outputs);
  return { config: { ...model.config, vocabSize: model.config.vocabSize + added }, weights };
}

function concatRows(a: Float32Array, b: Float32Array): Float32Array {
  const joined = new Float32Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

/**
 * Zeroed gradient buffers for the merged matrices an adapter touches (the base stays
 * frozen), plus the added tokens' rows of the embedding and output matrices when it adds
 * tokens (buffers of those rows only: backward then computes nothing for the base rows);
 * `adapted` is adaptModel's result, whose shapes they take.
 */
export function mergedGradientBuffers(adapted: BaseWeights, adapter: Adapter): Gradients {
  const grads: Gradients = {};
  for (const name of Object.keys(adapter.matrices)) grads[name] = new Float32Array(adapted.weights[name]!.length);
  if (adapter.tokens.bpeIds.length > 0) {
    grads.tok_emb = new Float32Array(adapter.tokens.embeddings.length);
    grads.out = new Float32Array(adapter.tokens.outputs.length);
  }
  return grads;
}

/** Parameter names of the added tokens' rows (adapterParameters, and the adapter file's tensors). */
export const EMBEDDINGS = "tokens.embeddings";
export const OUTPUTS = "tokens.outputs";

/** Flat parameter record of an adapter (`name.A`, `name.B`, added rows), as the optimizer sees it. */
export function adapterParameters(adapter: Adapter): Weights {
  const params: Weights = {};
  for (const [name, m] of Object.entries(adapter.matrices)) {
    params[`${name}.A`] = m.A;
    params[`${name}.B`] = m.B;
  }
  if (adapter.tokens.bpeIds.length > 0) {
    params[EMBEDDINGS] = adapter.tokens.embeddings;
    params[OUTPUTS] = adapter.tokens.outputs;
  }
  return params;
}

/** Chain rule from merged-matrix gradients G to factor gradients, keyed like adapterParameters. */
export function adapterGradients(model: BaseWeights, adapter: Adapter, merged: Gradients): Weights {
  const shapes = parameterShapes(model.config);
  const grads: Weights = {};
  for (const [name, m] of Object.entries(adapter.matrices)) {
    const [rows, cols] = shapes.get(name)!;
    const g = merged[name]!.subarray(0, rows * cols);
    const s = m.alpha / m.rank;
    const dB = new Float32Array(rows * m.rank);
    matmul(dB, g, transpose(m.A, m.rank, cols), rows, cols, m.rank, s);
    const dA = new Float32Array(m.rank * cols);
    matmul(dA, transpose(m.B, rows, m.rank), g, m.rank, rows, cols, s);
    grads[`${name}.A`] = dA;
    grads[`${name}.B`] = dB;
  }
  if (adapter.tokens.bpeIds.length > 0) {
    grads[EMBEDDINGS] = merged.tok_emb!;
    grads[OUTPUTS] = merged.out!;
  }
  return grads;
}

function transpose(a: Float32Array, rows: number, cols: number): Float32Array {
  const t = new Float32Array(a.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = a[r * cols + c]!;
  return t;
}
