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
 * and the PG_* settings of store/open.ts. It prints a JSON line each time it takes a job
 * (`claimed`, with `resumed`) and lets one go (`released`: `done` or `stopped`).
 */
import { keepOwnersAlive } from "./datasets/owners.ts";
import { startFineTuning } from "./finetune/index.ts";
import { openStore, positiveInteger, storeConfigFromEnv } from "./store/open.ts";

const env = process.env;

try {
  const config = storeConfigFromEnv(env);
  const leaseMs = positiveInteger(env, "JOB_LEASE_MS");
  const store = await openStore(config);
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
    onRunnerEvent: (event) => console.log(JSON.stringify({ worker: process.pid, at: new Date().toISOString(), ...event })),
  });
  console.log(`Worker ${process.pid} is training jobs from ${config.databaseUrl ? "PostgreSQL" : `SQLite in ${config.dataDir}`}`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // A job cut short stays claimed until its lease runs out, then another worker resumes it.
    fineTuning
      .close()
      .then(() => owners.close())
      .then(() => store.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
} catch (error) {
  console.error(`Cannot start: ${(error as Error).message}`);
  process.exit(1);
}
