/**
 * The datasets side of the server: its routes and its background work (validation, and
 * settling the work of processes that died: recovery.ts). server.ts calls only this.
 */
import type { Store } from "../store/store.ts";
import { forget, keepOwnersAlive, newOwner } from "./owners.ts";
import { recoverDatasets } from "./recovery.ts";
import { registerDatasetRoutes } from "./routes.ts";
import { ValidationRunner } from "./validation-runner.ts";
import type { OperationHandlers } from "../http/operation-routes.ts";

export interface DatasetsOptions {
  store: Store;
  dataDir: string;
  /** The largest upload accepted, in bytes; larger is 413 MEDIA_TOO_LARGE. */
  maxUploadBytes: number;
  /** How long this process's dataset work stays its own after its last heartbeat (owners.ts). */
  ownerTtlMs?: number;
}

export interface DatasetsService {
  /** Registers the dataset operations' handlers. */
  register(handlers: OperationHandlers): void;
  /** Stops background work; resolves when it has stopped. */
  close(): Promise<void>;
}

/** How often work left by another server process that died is looked for. */
const SWEEP_INTERVAL_MS = 60_000;

export async function startDatasets(options: DatasetsOptions): Promise<DatasetsService> {
  const { store } = options;
  const owner = newOwner();
  const heartbeat = await keepOwnersAlive(store, options.ownerTtlMs);
  const runner = new ValidationRunner(store);
  await recoverDatasets(store, runner, owner);
  const sweep = setInterval(() => {
    recoverDatasets(store, runner, owner).catch((error: Error) =>
      console.error(`Dataset recovery failed: ${error.message}`),
    );
  }, SWEEP_INTERVAL_MS);
  sweep.unref();
  const uploads = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    uploads.add(work);
    const forget = () => uploads.delete(work);
    work.then(forget, forget);
    return work;
  };
  return {
    register: (handlers) =>
      registerDatasetRoutes(handlers, { store, runner, maxUploadBytes: options.maxUploadBytes, owner, track }),
    async close() {
      clearInterval(sweep);
      await runner.close();
      // Connections are closed before services stop; let cut-off uploads clean up first.
      await Promise.allSettled(uploads);
      await heartbeat.close();
      await forget(store, owner);
    },
  };
}
