/**
 * `npm run worker`: a training worker. No HTTP: it only runs the job runner
 * (finetune/runner.ts) against the store, so training can be scaled apart from serving.
 * Start any number of them, on any machine that reaches the database and DATA_DIR; server
 * processes can then run with RUN_JOBS=0.
 *
 * Workers share the queue in the store: each claims the oldest waiting job under a lease
 * (PostgreSQL: FOR UPDATE SKIP LOCKED), renews the lease while it trains (heartbeat), and
 * checks the job's state at every progress write, so a cancel made through any server
 * stops it within a step or so. A worker that dies stops renewing; once its lease has run
 * out another worker resumes the job from its last checkpoint.
 *
 * Its settings (the store's, JOB_LEASE_MS, JOB_POLL_MS, SHUTDOWN_GRACE_MS, METRICS_PORT,
 * METRICS_HOST, CATALOG_FILE, LOG_LEVEL, OWNER_HOST) are rows of settings/table.ts read by
 * `worker`. On SIGTERM a job in training gets SHUTDOWN_GRACE_MS to reach its next checkpoint
 * (the end of its epoch) before it stops; either way its lease is released, so another
 * worker resumes it at once (ops/shutdown.ts: a second signal stops at once).
 *
 * It prints a JSON line on stdout each time it takes a job (`claimed`, with `resumed`) and
 * lets one go (`released`: `done` or `stopped`); its log (job events, failures) goes to stderr.
 */
import { keepOwnersAlive, useOwnerHost } from "./datasets/owners.ts";
import { startFineTuning } from "./finetune/index.ts";
import { installCatalog } from "./inference/catalog.ts";
import { loadCatalogFile } from "./inference/catalog-file.ts";
import { log, logs, setLogLevel } from "./log.ts";
import { instrumentStore } from "./ops/instrumented-store.ts";
import { startMetricsServer } from "./ops/metrics-server.ts";
import { ClosingOrder, type Stoppable, stopOnSignals } from "./ops/shutdown.ts";
import { readSettings } from "./settings/environment.ts";
import type { SettingsOf } from "./settings/parse.ts";
import { openStore, storeConfig } from "./store/open.ts";

/** Starts the worker's runner, with its store, metrics listener and owner heartbeat. */
async function startWorker(settings: SettingsOf<"worker">): Promise<Stoppable> {
  // The catalogue says which trainer (here, or upstream) each base model's jobs go to.
  installCatalog(loadCatalogFile(settings.CATALOG_FILE));
  const config = storeConfig(settings);
  const metricsOn = settings.METRICS_PORT !== undefined;
  const opened = await openStore(config);
  const store = metricsOn || logs("info") ? instrumentStore(opened, { timed: metricsOn }) : opened;
  // Closed last first: the store after everything that uses it.
  const closing = new ClosingOrder();
  closing.add(store);
  const metrics =
    settings.METRICS_PORT === undefined
      ? undefined
      : await startMetricsServer({ port: settings.METRICS_PORT, host: settings.METRICS_HOST ?? settings.HOST });
  if (metrics) closing.add(metrics);
  // Derived datasets (evaluation carve-outs, job outputs) are written under this process's
  // owner; its heartbeat tells servers on other hosts that the work is not abandoned.
  closing.add(await keepOwnersAlive(store, settings.JOB_LEASE_MS));
  const fineTuning = await startFineTuning({
    store,
    dataDir: config.dataDir,
    leaseMs: settings.JOB_LEASE_MS,
    pollMs: settings.JOB_POLL_MS,
    runJobs: true,
    // One line per job taken and let go, for operators (and the multi-process tests).
    onRunnerEvent: (event) =>
      console.log(JSON.stringify({ worker: process.pid, at: new Date().toISOString(), ...event })),
  });
  console.log(
    `Worker ${process.pid} is training jobs from ${config.databaseUrl ? "PostgreSQL" : `SQLite in ${config.dataDir}`}`,
  );
  if (metrics) console.log(`Metrics at ${metrics.origin}/metrics`);
  return {
    async drain(graceMs) {
      log("info", "worker.draining", { graceMs });
      await fineTuning.close(graceMs);
      await closing.close();
    },
    // The job stops where it is now; its lease is released all the same.
    async close() {
      await fineTuning.close(0);
      await closing.close();
    },
  };
}

try {
  const settings = readSettings("worker");
  setLogLevel(settings.LOG_LEVEL);
  useOwnerHost(settings.OWNER_HOST);
  stopOnSignals("worker", await startWorker(settings), settings.SHUTDOWN_GRACE_MS);
} catch (error) {
  console.error(`Cannot start: ${(error as Error).message}`);
  process.exit(1);
}
