/**
 * A worker thread of the gradient pool (gradient-pool.ts): loads the base model a job
 * trains once, then answers each request with the gradient of a shard of a step's tasks
 * under the adapter the request carries. Holds no state between requests besides the
 * frozen base, so any worker can take any shard of any job.
 */
import { parentPort, workerData } from "node:worker_threads";
import { adapterTaskGradients, type Adapter, type GradientTask } from "../inference/local/index.ts";
import { trainableLocalModel } from "./trainer-data.ts";

export interface ShardRequest {
  id: number;
  adapter: Adapter;
  tasks: GradientTask[];
}

export type ShardReply =
  { id: number; grads: Record<string, Float32Array>; losses: number[] } | { id: number; error: string };

const model = trainableLocalModel((workerData as { baseModel: string }).baseModel);

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
