/**
 * Worker threads that validate files (validation-worker.ts), kept between files: starting a
 * worker loads the tokenizer (o200k ranks, about 0.5 s of CPU on an idle core and 136 MiB),
 * which was most of the time a small file's validation took. A worker that has had nothing
 * to do for IDLE_MS exits, giving the memory back.
 *
 * One file at a time per worker, as before: a file that crashes its worker (out of memory on
 * a huge row) fails alone, and the next file gets a fresh worker.
 */
import { Worker } from "node:worker_threads";
import type { ValidationRecord } from "../store/datasets.ts";

export interface ValidationTask {
  file: string;
}

export type WorkerOutcome = { ok: true; result: ValidationRecord } | { ok: false; message: string };

const WORKER = new URL("./validation-worker.ts", import.meta.url);

/** How long an idle worker is kept for the next file. */
export const IDLE_MS = 30_000;

interface PooledWorker {
  worker: Worker;
  idleTimer?: NodeJS.Timeout;
}

export class ValidationPool {
  readonly #idle: PooledWorker[] = [];
  readonly #all = new Set<Worker>();

  /** Checks one file in a worker; never rejects (a failure is an outcome). */
  async check(file: string): Promise<WorkerOutcome> {
    const pooled = this.#take();
    const outcome = await runTask(pooled.worker, { file });
    if (outcome.workerAlive) this.#release(pooled);
    return outcome.outcome;
  }

  /** Workers alive now, busy or idle. */
  get workerCount(): number {
    return this.#all.size;
  }

  /** Terminates every worker, busy or idle (a busy one's check resolves as stopped). */
  async close(): Promise<void> {
    for (const pooled of this.#idle) clearTimeout(pooled.idleTimer);
    this.#idle.length = 0;
    await Promise.all([...this.#all].map((worker) => worker.terminate()));
    this.#all.clear();
  }

  #take(): PooledWorker {
    const idle = this.#idle.pop();
    if (idle) {
      clearTimeout(idle.idleTimer);
      return idle;
    }
    const worker = new Worker(WORKER);
    const pooled: PooledWorker = { worker };
    this.#all.add(worker);
    // A busy worker's error is its task's outcome (runTask); an idle one's only ends it.
    worker.on("error", () => {});
    worker.once("exit", () => {
      this.#all.delete(worker);
      const at = this.#idle.indexOf(pooled);
      if (at >= 0) this.#idle.splice(at, 1);
    });
    return pooled;
  }

  #release(pooled: PooledWorker): void {
    // Leaves the pool on its exit event (#take).
    pooled.idleTimer = setTimeout(() => void pooled.worker.terminate(), IDLE_MS).unref();
    // An idle worker must not keep the process alive.
    pooled.worker.unref();
    this.#idle.push(pooled);
  }
}

/** Sends one task and waits for its answer, or for the worker to fail or exit. */
function runTask(worker: Worker, task: ValidationTask): Promise<{ outcome: WorkerOutcome; workerAlive: boolean }> {
  worker.ref();
  return new Promise((resolve) => {
    const done = (outcome: WorkerOutcome, workerAlive: boolean) => {
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
      resolve({ outcome, workerAlive });
    };
    const onMessage = (message: WorkerOutcome) =>
      done(
        message.ok
          ? message
          : { ok: false, message: `the stored file could not be read (${message.message}); upload it again` },
        true,
      );
    let error: Error | undefined;
    const onError = (e: Error) => {
      error = e;
    };
    const onExit = (code: number) =>
      done(
        {
          ok: false,
          message: error
            ? `validation stopped unexpectedly (${error.message}); call validateUpload again`
            : `validation stopped unexpectedly (exit code ${code}); call validateUpload again`,
        },
        false,
      );
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
    worker.postMessage(task);
  });
}
