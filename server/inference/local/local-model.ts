/**
 * A loaded local model (configuration, vocabulary, weights) and its weights file:
 * the committed `weights/tiny-chat.bin`, written by scripts/train-local-model.ts
 * and read once at server start.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parameterShapes, type ModelConfig, type Weights } from "./model.ts";
import { readTensorFile, writeTensorFile } from "./tensor-file.ts";
import { Vocabulary } from "./vocab.ts";
import { ENCODING_NAME } from "../tokenizer.ts";

export interface LocalModel {
  config: ModelConfig;
  vocab: Vocabulary;
  weights: Weights;
}

export const DEFAULT_WEIGHTS_PATH = fileURLToPath(new URL("./weights/tiny-chat.bin", import.meta.url));

/** Serializes a model; `info` (training metadata) is stored in the header for provenance. */
export function serializeModel(model: LocalModel, info: Record<string, unknown> = {}): Uint8Array {
  const tensors = new Map<string, Float32Array>();
  for (const name of parameterShapes(model.config).keys()) tensors.set(name, model.weights[name]!);
  return writeTensorFile(
    { kind: "model", encoding: ENCODING_NAME, config: model.config, bpeIds: model.vocab.bpeIds, info },
    tensors,
  );
}

export function deserializeModel(bytes: Uint8Array): LocalModel {
  const { meta, tensors } = readTensorFile(bytes);
  if (meta.kind !== "model" || meta.encoding !== ENCODING_NAME)
    throw new Error("not a local model file for this tokenizer");
  const config = meta.config as ModelConfig;
  const weights: Weights = {};
  for (const [name, [rows, cols]] of parameterShapes(config)) {
    const t = tensors.get(name);
    if (t === undefined || t.length !== rows * cols) throw new Error(`model file: bad or missing tensor ${name}`);
    weights[name] = t;
  }
  return { config, vocab: new Vocabulary(meta.bpeIds as number[]), weights };
}

export function saveModel(model: LocalModel, path: string, info: Record<string, unknown> = {}): void {
  writeFileSync(path, serializeModel(model, info));
}

export function loadModel(path: string = DEFAULT_WEIGHTS_PATH): LocalModel {
  return deserializeModel(readFileSync(path));
}

/** Training metadata stored with the weights (final loss, steps, time). */
export function modelInfo(path: string = DEFAULT_WEIGHTS_PATH): Record<string, unknown> {
  const { meta } = readTensorFile(readFileSync(path));
  return (meta.info ?? {}) as Record<string, unknown>;
}
