/**
 * LoRA adapters for the local model. An adapter maps base matrix names to low-rank
 * factors; the forward pass runs on `W + (alpha/rank)·B·A` for each of them, with
 * B [out, rank] starting at zero (so a fresh adapter changes nothing) and A [rank, in]
 * random. Merging once per request or training step costs out·in·rank, far less than
 * a forward pass, and lets forward/backward stay adapter-agnostic: the backward pass
 * returns the gradient G of the merged matrix, and the chain rule gives
 * dB = s·G·Aᵀ and dA = s·Bᵀ·G (s = alpha/rank).
 *
 * An adapter may also add tokens to the vocabulary: o200k tokens of its training data
 * that the base vocabulary lacks (and would spell letter by letter), each with an
 * embedding row and an output row of its own, appended after the base rows. A two-layer
 * model learns a new word as one token in a few steps, where spelling it takes hundreds.
 */
import { createRng, gaussian, matmul } from "./math.ts";
import { layerName, parameterShapes, type Gradients, type Weights } from "./model.ts";
import type { LocalModel } from "./local-model.ts";
import { readTensorFile, writeTensorFile } from "./tensor-file.ts";
import { decode } from "../tokenizer.ts";
import { Vocabulary } from "./vocab.ts";

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

/** Every projection of every layer: the tiny model has little to spare, and attention alone cannot learn a new style. */
export function defaultLoraTargets(model: LocalModel): string[] {
  const names: string[] = [];
  for (let l = 0; l < model.config.nLayers; l++)
    for (const m of ["wq", "wk", "wv", "wo", "w1", "w2"]) names.push(layerName(l, m));
  return names;
}

export interface AdapterOptions {
  /** Scale numerator; the update is (alpha/rank)·B·A. Defaults to 2·rank. */
  alpha?: number;
  targets?: string[];
  /** o200k ids to add to the vocabulary (see chooseAddedTokens in the trainer). */
  addedTokens?: readonly number[];
}

export function createAdapter(model: LocalModel, rank: number, seed: number, options: AdapterOptions = {}): Adapter {
  const shapes = parameterShapes(model.config);
  const rng = createRng(seed);
  const alpha = options.alpha ?? 2 * rank;
  const matrices: Record<string, LoraMatrix> = {};
  for (const name of options.targets ?? defaultLoraTargets(model)) {
    const shape = shapes.get(name);
    if (shape === undefined || shape[0] === 1) throw new Error(`cannot adapt ${name}: not a matrix of this model`);
    const [rows, cols] = shape;
    const A = new Float32Array(rank * cols);
    for (let i = 0; i < A.length; i++) A[i] = gaussian(rng) / Math.sqrt(cols);
    matrices[name] = { A, B: new Float32Array(rows * rank), rank, alpha };
  }
  return { matrices, tokens: initialTokenRows(model, options.addedTokens ?? []) };
}

/**
 * Starting rows of added tokens. Embedding: the mean of the embeddings of the pieces the
 * base model spells the token with, so the model first reads it roughly as it read the
 * spelling. Output: the mean output row, an average token neither favoured nor excluded.
 */
function initialTokenRows(model: LocalModel, bpeIds: readonly number[]): AddedTokens {
  const d = model.config.dModel;
  const v = model.config.vocabSize;
  const tokEmb = model.weights.tok_emb!;
  const out = model.weights.out!;
  const meanOut = new Float32Array(d);
  for (let r = 0; r < v; r++) for (let i = 0; i < d; i++) meanOut[i]! += out[r * d + i]! / v;
  const embeddings = new Float32Array(bpeIds.length * d);
  const outputs = new Float32Array(bpeIds.length * d);
  bpeIds.forEach((id, k) => {
    const pieces = model.vocab.encode(decode([id]));
    for (const p of pieces) for (let i = 0; i < d; i++) embeddings[k * d + i]! += tokEmb[p * d + i]! / pieces.length;
    outputs.set(meanOut, k * d);
  });
  return { bpeIds: [...bpeIds], embeddings, outputs };
}

/** The base vocabulary with the adapter's tokens appended: what the adapted model reads and writes. */
export function adaptedVocabulary(model: LocalModel, adapter: Adapter): Vocabulary {
  return adapter.tokens.bpeIds.length === 0
    ? model.vocab
    : new Vocabulary([...model.vocab.bpeIds, ...adapter.tokens.bpeIds]);
}

/**
 * The model an adapter makes: every adapted matrix merged, the added tokens' rows
 * appended to the embedding and output matrices, the vocabulary extended to match.
 * A fresh copy each call (training changes the adapter between calls).
 */
export function adaptModel(model: LocalModel, adapter: Adapter | null): LocalModel {
  if (adapter === null) return model;
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
  if (added === 0) return { ...model, weights };
  weights.tok_emb = concatRows(weights.tok_emb!, adapter.tokens.embeddings);
  weights.out = concatRows(weights.out!, adapter.tokens.outputs);
  return {
    config: { ...model.config, vocabSize: model.config.vocabSize + added },
    vocab: adaptedVocabulary(model, adapter),
    weights,
  };
}

function concatRows(a: Float32Array, b: Float32Array): Float32Array {
  const joined = new Float32Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

/** Weights the forward pass should use: base weights with every adapted matrix merged (and added rows). */
export function withAdapter(model: LocalModel, adapter: Adapter | null): Weights {
  return adaptModel(model, adapter).weights;
}

/**
 * Zeroed gradient buffers for the merged matrices an adapter touches (the base stays
 * frozen), plus the added tokens' rows of the embedding and output matrices when it adds
 * tokens (buffers of those rows only: backward then computes nothing for the base rows);
 * `adapted` is adaptModel's result, whose shapes they take.
 */
export function mergedGradientBuffers(adapted: LocalModel, adapter: Adapter): Gradients {
  const grads: Gradients = {};
  for (const name of Object.keys(adapter.matrices)) grads[name] = new Float32Array(adapted.weights[name]!.length);
  if (adapter.tokens.bpeIds.length > 0) {
    grads.tok_emb = new Float32Array(adapter.tokens.embeddings.length);
    grads.out = new Float32Array(adapter.tokens.outputs.length);
  }
  return grads;
}

const EMBEDDINGS = "tokens.embeddings";
const OUTPUTS = "tokens.outputs";

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
export function adapterGradients(model: LocalModel, adapter: Adapter, merged: Gradients): Weights {
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

export function cloneAdapter(adapter: Adapter): Adapter {
  const matrices: Record<string, LoraMatrix> = {};
  for (const [name, m] of Object.entries(adapter.matrices)) matrices[name] = { ...m, A: m.A.slice(), B: m.B.slice() };
  const t = adapter.tokens;
  return { matrices, tokens: { bpeIds: [...t.bpeIds], embeddings: t.embeddings.slice(), outputs: t.outputs.slice() } };
}

/** What a tensor file's header says of an adapter; its tensors are named `{prefix}/…`. */
export interface AdapterMeta {
  matrices: Record<string, { rank: number; alpha: number }>;
  /** Added o200k ids; absent in adapters written before tokens could be added. */
  addedTokens?: number[];
}

/** Puts an adapter's tensors into `tensors` under `prefix` and returns its header entry. */
export function putAdapterTensors(tensors: Map<string, Float32Array>, prefix: string, adapter: Adapter): AdapterMeta {
  const matrices: AdapterMeta["matrices"] = {};
  for (const [name, m] of Object.entries(adapter.matrices)) {
    tensors.set(`${prefix}${name}.A`, m.A);
    tensors.set(`${prefix}${name}.B`, m.B);
    matrices[name] = { rank: m.rank, alpha: m.alpha };
  }
  tensors.set(`${prefix}${EMBEDDINGS}`, adapter.tokens.embeddings);
  tensors.set(`${prefix}${OUTPUTS}`, adapter.tokens.outputs);
  return { matrices, addedTokens: adapter.tokens.bpeIds };
}

/** The adapter putAdapterTensors wrote under `prefix`. */
export function takeAdapterTensors(
  tensors: ReadonlyMap<string, Float32Array>,
  prefix: string,
  meta: AdapterMeta,
): Adapter {
  const tensor = (name: string): Float32Array => {
    const t = tensors.get(`${prefix}${name}`);
    if (t === undefined) throw new Error(`adapter: missing tensor ${prefix}${name}`);
    return t;
  };
  const matrices: Record<string, LoraMatrix> = {};
  for (const [name, { rank, alpha }] of Object.entries(meta.matrices)) {
    matrices[name] = { A: tensor(`${name}.A`), B: tensor(`${name}.B`), rank, alpha };
  }
  const bpeIds = meta.addedTokens ?? [];
  const none = new Float32Array(0);
  return {
    matrices,
    tokens: {
      bpeIds,
      embeddings: bpeIds.length > 0 ? tensor(EMBEDDINGS) : none,
      outputs: bpeIds.length > 0 ? tensor(OUTPUTS) : none,
    },
  };
}

export function serializeAdapter(adapter: Adapter): Uint8Array {
  const tensors = new Map<string, Float32Array>();
  const meta = putAdapterTensors(tensors, "", adapter);
  return writeTensorFile({ kind: "lora", ...meta }, tensors);
}

export function loadAdapter(bytes: Uint8Array): Adapter {
  const { meta, tensors } = readTensorFile(bytes);
  if (meta.kind !== "lora") throw new Error("not a LoRA adapter file");
  return takeAdapterTensors(tensors, "", meta as unknown as AdapterMeta);
}

/** Checks an adapter against a model before serving or training it. */
export function assertAdapterFits(model: LocalModel, adapter: Adapter): void {
  const shapes = parameterShapes(model.config);
  for (const [name, m] of Object.entries(adapter.matrices)) {
    const shape = shapes.get(name);
    if (shape === undefined) throw new Error(`adapter targets unknown matrix ${name}`);
    if (m.A.length !== m.rank * shape[1] || m.B.length !== shape[0] * m.rank)
      throw new Error(`adapter shape mismatch for ${name}`);
  }
  const { bpeIds, embeddings, outputs } = adapter.tokens;
  const rows = bpeIds.length * model.config.dModel;
  if (embeddings.length !== rows || outputs.length !== rows)
    throw new Error("adapter: added token rows do not match the model");
  const known = new Set(model.vocab.bpeIds);
  if (bpeIds.some((id) => known.has(id))) throw new Error("adapter: adds a token the base vocabulary has");
}
