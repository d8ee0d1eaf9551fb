/**
 * Validation in the background: versions moved to VALIDATING are checked one or two at a
 * time, each in a worker thread (validation-pool.ts), and their result recorded.
 *
 * A version whose validation is cut short by close() stays VALIDATING in the store;
 * startDatasets validates it again on the next start, so nothing stays stuck.
 */
import { versionName, WHOLE_FILE, type ValidationRecord, type VersionKey } from "../store/datasets.ts";
import type { Store } from "../store/store.ts";
import { ValidationPool } from "./validation-pool.ts";

/** Validations at once: each keeps a core busy, and the server has requests to answer too. */
const CONCURRENCY = 2;

export class ValidationRunner {
  readonly #store: Store;
  readonly #queue: VersionKey[] = [];
  /** Names of the versions queued or running, so a version is validated once at a time. */
  readonly #pending = new Set<string>();
  readonly #pool = new ValidationPool();
  readonly #running = new Set<Promise<void>>();
  #closed = false;

  constructor(store: Store) {
    this.#store = store;
  }

  /** Queues the version (already VALIDATING in the store); a version already queued is left alone. */
  schedule(key: VersionKey): void {
    const name = versionName(key);
    if (this.#closed || this.#pending.has(name)) return;
    this.#pending.add(name);
    this.#queue.push({ accountId: key.accountId, datasetId: key.datasetId, versionNo: key.versionNo });
    this.#pump();
  }

  /** Stops: queued versions are dropped and running workers terminated (both stay VALIDATING). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.length = 0;
    await this.#pool.close();
    await Promise.all(this.#running);
  }

  #pump(): void {
    while (!this.#closed && this.#running.size < CONCURRENCY && this.#queue.length > 0) {
      const key = this.#queue.shift() as VersionKey;
      const run = this.#validate(key).finally(() => {
        this.#running.delete(run);
        this.#pending.delete(versionName(key));
        this.#pump();
      });
      this.#running.add(run);
    }
  }

  async #validate(key: VersionKey): Promise<void> {
    const outcome = await this.#pool.check(this.#store.datasets.versionFile(key));
    if (this.#closed) return;
    const result: ValidationRecord = outcome.ok
      ? outcome.result
      : {
          totalLines: 0,
          validLines: 0,
          topLevelKeys: [],
          exampleCount: 0,
          estimatedTokenCount: 0,
          firstInvalidLine: { lineNumber: WHOLE_FILE, reason: outcome.message },
        };
    try {
      await this.#store.datasets.finishValidation(key, result, new Date());
    } catch (error) {
      // The version stays VALIDATING; validateUpload (or the next start) tries again.
      console.error(`Could not record the validation of ${versionName(key)}: ${(error as Error).message}`);
    }
  }
}
