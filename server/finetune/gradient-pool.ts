/**
 * Worker threads that compute a fine-tuning step's gradient, and the log-probabilities
 * that evaluation and DPO's reference policy need (gradient-worker.ts), so that training
 * neither holds the server's event loop (a step of eight examples and four
 * rehearsal dialogues is a few hundred milliseconds of arithmetic) nor leaves the
 * machine's other core idle.
 *
 * A step's tasks are cut into SHARDS contiguous shards of about equal size; a worker
 * computes each shard's gradient, and the shards are added in order. The cut depends on
 * the tasks alone, not on how many threads there are, so a job makes the same adapter on
 * one core as on eight (and a resumed job the same as one never stopped). One pool per
 * process and base model, made on first use; its threads do not keep the process alive.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { Adapter, Gradients, LocalModel } from "../inference/local/index.ts";
import type { EncodedExample, GradientTask } from "./local/index.ts";
import type { ShardReply, ShardRequest } from "./gradient-worker.ts";
import { trainableLocalModel } from "./trainer-data.ts";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Shards per step: the two cores of the machines this runs on. */
const SHARDS = 2;

type Answer = Exclude<ShardReply, { error: string }>;

interface Pending {
  resolve(reply: Answer): void;
  reject(error: Error): void;
}

export class GradientPool {
  readonly #workers: Worker[] = [];
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #broken: Error | null = null;

  /** `model`'s config and weights are copied to each thread once. */
  constructor(model: LocalModel, threads = Math.min(SHARDS, availableParallelism())) {
    const base = { config: model.config, weights: model.weights };
    for (let i = 0; i < threads; i++) {
      const worker = new Worker(new URL("./gradient-worker.ts", import.meta.url), { workerData: base });
      worker.on("message", (reply: ShardReply) => this.#settle(reply));
      worker.on("error", (error) => this.#break(error));
      worker.on("exit", (code) => this.#break(new Error(`a gradient worker exited with code ${code}`)));
      // Idle threads do not keep the process alive; #send refs them while a shard is out.
      // (After the listeners: adding a message listener refs a worker again.)
      worker.unref();
      this.#workers.push(worker);
    }
  }

  /** Whether a worker has failed; a broken pool fails every request and is replaced. */
  get broken(): boolean {
    return this.#broken !== null;
  }

  /** The summed gradient of `tasks` (shard by shard, in order) and each task's loss, in order. */
  async gradients(adapter: Adapter, tasks: readonly GradientTask[]): Promise<{ grads: Gradients; losses: number[] }> {
    if (tasks.length === 0) throw new Error("a gradient of no tasks");
    const shards = cutShards(tasks, SHARDS);
    const replies = await Promise.all(
      shards.map((shard, i) =>
        shard.length === 0 ? null : this.#send(i % this.#workers.length, { adapter, tasks: shard }),
      ),
    );
    let grads: Record<string, Float32Array> | null = null;
    const losses: number[] = [];
    for (const reply of replies) {
      if (reply === null || !("grads" in reply)) continue;
      losses.push(...reply.losses);
      if (grads === null) grads = reply.grads;
      else addInto(grads, reply.grads);
    }
    return { grads: grads!, losses };
  }

  /**
   * Σ log p of each sequence's targets under the base with `adapter` merged, in order
   * (evaluation, and DPO's reference policy). A sequence's value does not depend on the
   * others, so the threads simply share the list.
   */
  async logProbs(adapter: Adapter, sequences: readonly EncodedExample[]): Promise<number[]> {
    const threads = this.#workers.length;
    const per = Math.ceil(sequences.length / threads);
    const replies = await Promise.all(
      Array.from({ length: threads }, (_, i) => sequences.slice(i * per, (i + 1) * per))
        .filter((part) => part.length > 0)
        .map((part, i) => this.#send(i, { adapter, sequences: part })),
    );
    return replies.flatMap((reply) => ("logProbs" in reply ? reply.logProbs : []));
  }

  /** Stops the threads (tests; a server process simply exits). */
  async close(): Promise<void> {
    this.#broken ??= new Error("the gradient pool is closed");
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }

  #send(worker: number, request: DistributiveOmit<ShardRequest, "id">): Promise<Answer> {
    if (this.#broken !== null) return Promise.reject(this.#broken);
    const id = this.#nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#workers[worker]!.ref();
      this.#workers[worker]!.postMessage({ id, ...request } satisfies ShardRequest);
    });
  }

  #settle(reply: ShardReply): void {
    const pending = this.#pending.get(reply.id);
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) for (const w of this.#workers) w.unref();
    if (pending === undefined) return;
    if ("error" in reply) pending.reject(new Error(`gradient worker: ${reply.error}`));
    else pending.resolve(reply);
  }

  /** A thread failed or ended: every request fails, and the other threads stop (gradientPool makes a new pool). */
  #break(error: Error): void {
    if (this.#broken === null) for (const w of this.#workers) void w.terminate();
    this.#broken ??= error;
    for (const pending of this.#pending.values()) pending.reject(this.#broken);
    this.#pending.clear();
  }
}

/** A task's size: the tokens its forward and backward passes run over. */
function taskTokens(task: GradientTask): number {
  return task.kind === "crossEntropy"
    ? task.example.tokens.length
    : task.pair.chosen.tokens.length + task.pair.rejected.tokens.length;
}

/** Contiguous shards of about equal tokens: a task goes to the shard its midpoint falls in. */
export function cutShards(tasks: readonly GradientTask[], count: number): GradientTask[][] {
  const sizes = tasks.map(taskTokens);
  const total = sizes.reduce((a, b) => a + b, 0);
  const shards: GradientTask[][] = Array.from({ length: count }, () => []);
  let before = 0;
  tasks.forEach((task, i) => {
    const shard = Math.min(count - 1, Math.floor((count * (before + sizes[i]! / 2)) / total));
    shards[shard]!.push(task);
    before += sizes[i]!;
  });
  return shards;
}

function addInto(into: Record<string, Float32Array>, other: Record<string, Float32Array>): void {
  for (const [name, g] of Object.entries(other)) {
    const target = into[name]!;
    for (let i = 0; i < g.length; i++) target[i]! += g[i]!;
  }
}

const pools = new Map<string, GradientPool>();

/** The process's pool for a base model (a new one when the last one broke). */
export function gradientPool(baseModel: string): GradientPool {
  let pool = pools.get(baseModel);
  if (pool === undefined || pool.broken) {
    pool = new GradientPool(trainableLocalModel(baseModel));
    pools.set(baseModel, pool);
  }
  return pool;
}
