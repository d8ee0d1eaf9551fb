/**
 * LoRA adapters for the local model. An adapter maps base matrix names to low-rank
 * factors; the forward pass runs on `W + (alpha/rank)·B·A` for each of them, with
 * B [out, rank] starting at zero (so a fresh adapter changes nothing) and A [rank, in]
 * random. Merging once per request or training step costs out·in·rank, far less than
 * a forward pass, and lets forward/backward stay adapter-agnostic: the backward pass
 * returns the gradient G of the merged matrix, and the chain rule gives
 * dB = s·G·Aᵀ and dA = s·Bᵀ·G (s = alpha/rank).
 */
import { createRng, gaussian, matmul } from "./math.ts";
import { layerName, parameterShapes, type Gradients, type Weights } from "./model.ts";
import type { LocalModel } from "./local-model.ts";
import { readTensorFile, writeTensorFile } from "./tensor-file.ts";

export interface LoraMatrix {
  /** [rank, in] */
  A: Float32Array;
  /** [out, rank] */
  B: Float32Array;
  rank: number;
  alpha: number;
}

/** Base matrix name → its low-rank update. */
export type Adapter = Record<string, LoraMatrix>;

/** The usual choice: attention query and value projections of every layer, plus the output projection. */
export function defaultLoraTargets(model: LocalModel): string[] {
  const names: string[] = [];
  for (let l = 0; l < model.config.nLayers; l++) names.push(layerName(l, "wq"), layerName(l, "wv"));
  names.push("out");
  return names;
}

export interface AdapterOptions {
  /** Scale numerator; the update is (alpha/rank)·B·A. Defaults to 2·rank. */
  alpha?: number;
  targets?: string[];
}

export function createAdapter(model: LocalModel, rank: number, seed: number, options: AdapterOptions = {}): Adapter {
  const shapes = parameterShapes(model.config);
  const rng = createRng(seed);
  const alpha = options.alpha ?? 2 * rank;
  const adapter: Adapter = {};
  for (const name of options.targets ?? defaultLoraTargets(model)) {
    const shape = shapes.get(name);
    if (shape === undefined || shape[0] === 1) throw new Error(`cannot adapt ${name}: not a matrix of this model`);
    const [rows, cols] = shape;
    const A = new Float32Array(rank * cols);
    for (let i = 0; i < A.length; i++) A[i] = gaussian(rng) / Math.sqrt(cols);
    adapter[name] = { A, B: new Float32Array(rows * rank), rank, alpha };
  }
  return adapter;
}

/** Weights the forward pass should use: base weights with every adapted matrix merged. */
export function withAdapter(model: LocalModel, adapter: Adapter | null): Weights {
  if (adapter === null) return model.weights;
  const shapes = parameterShapes(model.config);
  const merged: Weights = { ...model.weights };
  for (const [name, m] of Object.entries(adapter)) {
    const [rows, cols] = shapes.get(name)!;
    const delta = new Float32Array(rows * cols);
    matmul(delta, m.B, m.A, rows, m.rank, cols, m.alpha / m.rank);
    const base = model.weights[name]!;
    for (let i = 0; i < delta.length; i++) delta[i]! += base[i]!;
    merged[name] = delta;
  }
  return merged;
}

/** Zeroed gradient buffers for the merged matrices an adapter touches (the base stays frozen). */
export function mergedGradientBuffers(model: LocalModel, adapter: Adapter): Gradients {
  const grads: Gradients = {};
  for (const name of Object.keys(adapter)) grads[name] = new Float32Array(model.weights[name]!.length);
  return grads;
}

/** Flat parameter record of an adapter (`name.A`, `name.B`), as the optimizer sees it. */
export function adapterParameters(adapter: Adapter): Weights {
  const params: Weights = {};
  for (const [name, m] of Object.entries(adapter)) {
    params[`${name}.A`] = m.A;
    params[`${name}.B`] = m.B;
  }
  return params;
}

/** Chain rule from merged-matrix gradients G to factor gradients, keyed like adapterParameters. */
export function adapterGradients(model: LocalModel, adapter: Adapter, merged: Gradients): Weights {
  const shapes = parameterShapes(model.config);
  const grads: Weights = {};
  for (const [name, m] of Object.entries(adapter)) {
    const [rows, cols] = shapes.get(name)!;
    const g = merged[name]!;
    const s = m.alpha / m.rank;
    const dB = new Float32Array(rows * m.rank);
    matmul(dB, g, transpose(m.A, m.rank, cols), rows, cols, m.rank, s);
    const dA = new Float32Array(m.rank * cols);
    matmul(dA, transpose(m.B, rows, m.rank), g, m.rank, rows, cols, s);
    grads[`${name}.A`] = dA;
    grads[`${name}.B`] = dB;
  }
  return grads;
}

function transpose(a: Float32Array, rows: number, cols: number): Float32Array {
  const t = new Float32Array(a.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = a[r * cols + c]!;
  return t;
}

export function serializeAdapter(adapter: Adapter): Uint8Array {
  const tensors = new Map<string, Float32Array>();
  const matrices: Record<string, { rank: number; alpha: number }> = {};
  for (const [name, m] of Object.entries(adapter)) {
    tensors.set(`${name}.A`, m.A);
    tensors.set(`${name}.B`, m.B);
    matrices[name] = { rank: m.rank, alpha: m.alpha };
  }
  return writeTensorFile({ kind: "lora", matrices }, tensors);
}

export function loadAdapter(bytes: Uint8Array): Adapter {
  const { meta, tensors } = readTensorFile(bytes);
  if (meta.kind !== "lora") throw new Error("not a LoRA adapter file");
  const adapter: Adapter = {};
  for (const [name, { rank, alpha }] of Object.entries(meta.matrices as Record<string, { rank: number; alpha: number }>)) {
    const A = tensors.get(`${name}.A`);
    const B = tensors.get(`${name}.B`);
    if (A === undefined || B === undefined) throw new Error(`adapter file: missing factors of ${name}`);
    adapter[name] = { A, B, rank, alpha };
  }
  return adapter;
}

/** Checks an adapter against a model before serving or training it. */
export function assertAdapterFits(model: LocalModel, adapter: Adapter): void {
  const shapes = parameterShapes(model.config);
  for (const [name, m] of Object.entries(adapter)) {
    const shape = shapes.get(name);
    if (shape === undefined) throw new Error(`adapter targets unknown matrix ${name}`);
    if (m.A.length !== m.rank * shape[1] || m.B.length !== shape[0] * m.rank) throw new Error(`adapter shape mismatch for ${name}`);
  }
}
