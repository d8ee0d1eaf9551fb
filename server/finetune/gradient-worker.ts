/**
 * A worker thread of the gradient pool (gradient-pool.ts): gets the frozen base weights
 * once (workerData), then answers each request with the gradient of a shard of a step's
 * tasks under the adapter the request carries. Holds no state between requests besides
 * the base, so any worker can take any shard of any job.
 *
 * It imports the training arithmetic from its own files, not through the local model's
 * index, and never a vocabulary: those load the o200k tokenizer, some 70 MB a thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Adapter, BaseWeights } from "../inference/local/lora-merge.ts";
import { adapterTaskGradients, type GradientTask } from "../inference/local/train.ts";

export interface ShardRequest {
  id: number;
  adapter: Adapter;
  tasks: GradientTask[];
}

export type ShardReply =
  { id: number; grads: Record<string, Float32Array>; losses: number[] } | { id: number; error: string };

const model = workerData as BaseWeights;

parentPort!.on("message", (request: ShardRequest) => {
  let reply: ShardReply;
  const transfer: ArrayBuffer[] = [];
  try {
    const { grads, losses } = adapterTaskGradients(model, request.adapter, request.tasks);
    const buffers: Record<string, Float32Array> = {};
    for (const [name, g] of Object.entries(grads)) {
      buffers[name] = g!;
      transfer.push(g!.buffer as ArrayBuffer);
    }
    reply = { id: request.id, grads: buffers, losses };
  } catch (error) {
    reply = { id: request.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  parentPort!.postMessage(reply, transfer);
});
