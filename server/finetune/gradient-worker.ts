/**
 * A worker thread of the gradient pool (gradient-pool.ts): gets the frozen base weights
 * once (workerData), then answers each request with the gradient of a shard of a step's
 * tasks, or the log-probabilities of a shard of sequences, under the adapter the request
 * carries. Holds no state between requests besides the base, so any worker can take any
 * shard of any job.
 *
 * It imports the training arithmetic from its own files, not through the local model's
 * index, and never a vocabulary: those load the o200k tokenizer, some 70 MB a thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import { mergeAdapter, type Adapter, type BaseWeights } from "../inference/local/lora-merge.ts";
import type { EncodedExample } from "./local/example.ts";
import { adapterTaskGradients, sequenceLogProb, type GradientTask } from "./local/train.ts";

/** The gradient of a shard of a step's tasks, or the log-probabilities of sequences (no gradient). */
export type ShardRequest =
  | { id: number; adapter: Adapter; tasks: GradientTask[] }
  | { id: number; adapter: Adapter; sequences: EncodedExample[] };

export type ShardReply =
  | { id: number; grads: Record<string, Float32Array>; losses: number[] }
  | { id: number; logProbs: number[] }
  | { id: number; error: string };

const model = workerData as BaseWeights;

function answer(request: ShardRequest): { reply: ShardReply; transfer: ArrayBuffer[] } {
  if ("sequences" in request) {
    const merged = mergeAdapter(model, request.adapter);
    const logProbs = request.sequences.map((s) => sequenceLogProb(merged, merged.weights, s));
    return { reply: { id: request.id, logProbs }, transfer: [] };
  }
  const { grads, losses } = adapterTaskGradients(model, request.adapter, request.tasks);
  const buffers: Record<string, Float32Array> = {};
  const transfer: ArrayBuffer[] = [];
  for (const [name, g] of Object.entries(grads)) {
    buffers[name] = g!;
    transfer.push(g!.buffer as ArrayBuffer);
  }
  return { reply: { id: request.id, grads: buffers, losses }, transfer };
}

parentPort!.on("message", (request: ShardRequest) => {
  try {
    const { reply, transfer } = answer(request);
    parentPort!.postMessage(reply, transfer);
  } catch (error) {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    parentPort!.postMessage({ id: request.id, error: detail } satisfies ShardReply);
  }
});
