/**
 * `npm start`: the reference server with settings from the environment.
 *
 *   PORT      port to listen on (default 8080; 0 picks any free port)
 *   HOST      address to listen on (default 127.0.0.1)
 *   DATA_DIR  where the SQLite database and the files (datasets, checkpoints, adapters) live (default ./data)
 *   DATABASE_URL  postgres://…: keep records in PostgreSQL, shared by many processes (see store/open.ts
 *             for PG_POOL_SIZE, PG_CONNECT_TIMEOUT_MS, PG_STATEMENT_TIMEOUT_MS, MIGRATE_ON_START)
 *   NODE_ENV  `production` turns off response validation and does not load the development seed
 *   DEV_SEED  `1` loads server/dev-seed.json into an empty store and offers the fault models of
 *             server/dev/fault-models.ts (a built-in misbehaving upstream), `0` does not (default: 1
 *             unless production; NODE_ENV=production with DEV_SEED=1 refuses to start)
 *   ROUTING_FILE  the routing file (default server/routing.json)
 *   CATALOG_FILE  the model catalogue (default server/catalog.json; its schema: server/catalog.schema.json)
 *   VALIDATE_RESPONSES  `1` checks every response against the contract, `0` does not (default: 1 unless production)
 *   MAX_UPLOAD_BYTES  the largest dataset upload (default 4 GiB)
 *   RUN_JOBS  `0`: this process serves the API but trains no jobs (default 1)
 *   JOB_LEASE_MS  how long a dead process's job stays claimed before another resumes it (default 30000)
 *   LOG_LEVEL  debug, info, warn, error or silent (default info); pretty-printed when stderr is a terminal
 *   METRICS_PORT  serve Prometheus metrics at /metrics on this port (0: any free port; unset: no metrics)
 *   METRICS_HOST  the metrics listener's address (default: HOST)
 *   SHUTDOWN_GRACE_MS  on SIGTERM, how long requests, streams and a training job get to finish
 *             before streams end with an error event and the job stops at its last checkpoint (default 25000)
 *
 * SIGTERM or SIGINT drains (RunningServer.drain); a second one stops at once.
 */
import { isLogLevel, log, LOG_LEVELS } from "./log.ts";
import { positiveInteger, storeConfigFromEnv } from "./store/open.ts";
import { startServer } from "./server.ts";

const env = process.env;
const production = env.NODE_ENV === "production";

function portFromEnv(name: string, fallback: number): number;
function portFromEnv(name: string, fallback?: number): number | undefined;
function portFromEnv(name: string, fallback?: number): number | undefined {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${name} must be a port number from 0 to 65535, not "${value}"`);
  return port;
}

/** Kubernetes sends SIGKILL 30 s after SIGTERM by default: the drain ends before that. */
const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;

function shutdownGraceFromEnv(): number {
  const value = env.SHUTDOWN_GRACE_MS;
  if (value === undefined || value === "") return DEFAULT_SHUTDOWN_GRACE_MS;
  const ms = Number(value);
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw new Error(`SHUTDOWN_GRACE_MS must be a whole number of milliseconds, 0 or more, not "${value}"`);
  return ms;
}

function checkLogLevel(): void {
  const value = env.LOG_LEVEL;
  if (value !== undefined && value !== "" && !isLogLevel(value))
    throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, not "${value}"`);
}

try {
  checkLogLevel();
  const storeConfig = storeConfigFromEnv(env);
  const graceMs = shutdownGraceFromEnv();
  const devSeed = env.DEV_SEED ? env.DEV_SEED !== "0" : !production;
  const server = await startServer({
    ...storeConfig,
    port: portFromEnv("PORT", 8080),
    metricsPort: portFromEnv("METRICS_PORT"),
    metricsHost: env.METRICS_HOST || undefined,
    host: env.HOST || "127.0.0.1",
    validateResponses: env.VALIDATE_RESPONSES ? env.VALIDATE_RESPONSES !== "0" : !production,
    devSeed,
    // With the development seed only: the fault models the conformance kit's upstream transcripts call.
    devFaultModels: devSeed,
    routingFile: env.ROUTING_FILE || undefined,
    catalogFile: env.CATALOG_FILE || undefined,
    maxUploadBytes: positiveInteger(env, "MAX_UPLOAD_BYTES"),
    fineTuning: { runJobs: env.RUN_JOBS !== "0", leaseMs: positiveInteger(env, "JOB_LEASE_MS") },
  });
  console.log(`Listening on ${server.origin} (API at ${server.baseUrl}, reference at ${server.origin}/docs)`);
  if (server.metricsOrigin) console.log(`Metrics at ${server.metricsOrigin}/metrics`);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    const done = (code: number) => () => process.exit(code);
    if (stopping) {
      log("warn", "server.stopping_now", { signal });
      server.close().then(done(0), done(1));
      return;
    }
    stopping = true;
    server.drain(graceMs).then(done(0), done(1));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
} catch (error) {
  console.error(`Cannot start: ${(error as Error).message}`);
  process.exit(1);
}
