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
 *
 * The arithmetic on weights alone (merging, gradients) is lora-merge.ts; this module adds
 * what needs the vocabulary and the tokenizer, and the adapter file.
 */
import type { JSONSchemaType } from "ajv";
import { compileCheck, CorruptDataError, requiredKeys } from "../../checked-json.ts";
import { createRng, gaussian } from "./math.ts";
import { layerName, parameterShapes, type Weights } from "./model.ts";
import { EMBEDDINGS, mergeAdapter, OUTPUTS, type AddedTokens, type Adapter, type LoraMatrix } from "./lora-merge.ts";
import type { LocalModel } from "./local-model.ts";
import { readTensorFile, writeTensorFile } from "./tensor-file.ts";
import { decode } from "../tokenizer.ts";
import { Vocabulary } from "./vocab.ts";

export {
  adapterGradients,
  adapterParameters,
  mergedGradientBuffers,
  type AddedTokens,
  type Adapter,
  type LoraMatrix,
} from "./lora-merge.ts";

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
  return { ...mergeAdapter(model, adapter), vocab: adaptedVocabulary(model, adapter) };
}

/** Weights the forward pass should use: base weights with every adapted matrix merged (and added rows). */
export function withAdapter(model: LocalModel, adapter: Adapter | null): Weights {
  return adaptModel(model, adapter).weights;
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

/** The adapted matrices by name: each factor pair's rank and scale numerator. */
export const adapterMatricesSchema: JSONSchemaType<AdapterMeta["matrices"]> = {
  type: "object",
  required: [],
  additionalProperties: {
    type: "object",
    required: requiredKeys<AdapterMeta["matrices"][string]>()(["rank", "alpha"]),
    properties: { rank: { type: "integer", minimum: 1 }, alpha: { type: "number" } },
  },
};

/** An adapter's header entry (in an adapter file, and spread into a trainer checkpoint's). */
export const adapterMetaSchema: JSONSchemaType<AdapterMeta> = {
  type: "object",
  required: requiredKeys<AdapterMeta>()(["matrices"]),
  properties: {
    matrices: adapterMatricesSchema,
    addedTokens: { type: "array", items: { type: "integer", minimum: 0 }, nullable: true },
  },
};

const checkAdapterMeta = compileCheck(adapterMetaSchema);

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
  source = "adapter",
): Adapter {
  const tensor = (name: string): Float32Array => {
    const t = tensors.get(`${prefix}${name}`);
    if (t === undefined) throw new CorruptDataError(source, "", `lacks the tensor ${prefix}${name}`);
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

/** The adapter serializeAdapter wrote; `source` (its file) is named by any error, with the field at fault. */
export function loadAdapter(bytes: Uint8Array, source = "adapter file"): Adapter {
  const { meta, tensors } = readTensorFile(bytes, source);
  if (meta.kind !== "lora") throw new CorruptDataError(source, "", "is not a LoRA adapter file (its kind is not lora)");
  return takeAdapterTensors(tensors, "", checkAdapterMeta(meta, source), source);
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
