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
 *   DATABASE_URL  the shared PostgreSQL (without it, the SQLite file in DATA_DIR: one host)
 *   DATA_DIR      the shared directory of dataset files, checkpoints and adapters
 *   JOB_LEASE_MS  how long a job stays claimed by a worker that stopped renewing it (default 30000)
 *   JOB_POLL_MS   how often an idle worker looks for a queued job (default 1000)
 *   SHUTDOWN_GRACE_MS  on SIGTERM, how long a job in training gets to reach its next checkpoint
 *                 (the end of its epoch) before it stops (default 25000); either way its lease is
 *                 released, so another worker resumes it at once
 *   METRICS_PORT  serve Prometheus metrics (jobs, store, process) at /metrics on this port (unset: none)
 *   METRICS_HOST  the metrics listener's address (default 127.0.0.1)
 *   CATALOG_FILE  the model catalogue, as for the server: which trainer each base model uses
 *   LOG_LEVEL     as for the server (server/log.ts)
 * and the PG_* settings of store/open.ts. It prints a JSON line on stdout each time it takes a
 * job (`claimed`, with `resumed`) and lets one go (`released`: `done` or `stopped`); its log
 * (job events, failures) goes to stderr.
 */
import { keepOwnersAlive } from "./datasets/owners.ts";
import { startFineTuning } from "./finetune/index.ts";
import { installCatalog } from "./inference/catalog.ts";
import { loadCatalogFile } from "./inference/catalog-file.ts";
import { isLogLevel, log, logs } from "./log.ts";
import { instrumentStore } from "./ops/instrumented-store.ts";
import { startMetricsServer } from "./ops/metrics-server.ts";
import { openStore, positiveInteger, storeConfigFromEnv } from "./store/open.ts";

const env = process.env;

try {
  if (env.LOG_LEVEL && !isLogLevel(env.LOG_LEVEL))
    throw new Error(`LOG_LEVEL must be debug, info, warn, error or silent, not "${env.LOG_LEVEL}"`);
  const config = storeConfigFromEnv(env);
  // The catalogue says which trainer (here, or upstream) each base model's jobs go to.
  installCatalog(loadCatalogFile(env.CATALOG_FILE || undefined));
  const leaseMs = positiveInteger(env, "JOB_LEASE_MS");
  const graceMs = env.SHUTDOWN_GRACE_MS ? Number(env.SHUTDOWN_GRACE_MS) : 25_000;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0)
    throw new Error(
      `SHUTDOWN_GRACE_MS must be a whole number of milliseconds, 0 or more, not "${env.SHUTDOWN_GRACE_MS}"`,
    );
  const metricsPort = env.METRICS_PORT ? Number(env.METRICS_PORT) : undefined;
  const opened = await openStore(config);
  const store =
    metricsPort !== undefined || logs("info") ? instrumentStore(opened, { timed: metricsPort !== undefined }) : opened;
  const metrics =
    metricsPort === undefined
      ? undefined
      : await startMetricsServer({ port: metricsPort, host: env.METRICS_HOST || "127.0.0.1" });
  // Derived datasets (evaluation carve-outs, job outputs) are written under this process's
  // owner; its heartbeat tells servers on other hosts that the work is not abandoned.
  const owners = await keepOwnersAlive(store, leaseMs);
  const fineTuning = await startFineTuning({
    store,
    dataDir: config.dataDir,
    leaseMs,
    pollMs: positiveInteger(env, "JOB_POLL_MS"),
    runJobs: true,
    // One line per job taken and let go, for operators (and the multi-process tests).
    onRunnerEvent: (event) =>
      console.log(JSON.stringify({ worker: process.pid, at: new Date().toISOString(), ...event })),
  });
  console.log(
    `Worker ${process.pid} is training jobs from ${config.databaseUrl ? "PostgreSQL" : `SQLite in ${config.dataDir}`}`,
  );
  if (metrics) console.log(`Metrics at ${metrics.origin}/metrics`);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second signal: the job stops where it is now; its lease is released all the same.
      log("warn", "worker.stopping_now", { signal });
      void fineTuning.close(0);
      return;
    }
    stopping = true;
    log("info", "worker.draining", { signal, graceMs });
    fineTuning
      .close(graceMs)
      .then(() => metrics?.close())
      .then(() => owners.close())
      .then(() => store.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
} catch (error) {
  console.error(`Cannot start: ${(error as Error).message}`);
  process.exit(1);
}
