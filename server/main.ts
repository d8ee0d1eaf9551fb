/**
 * `npm start`: the reference server with settings from the environment.
 *
 *   PORT      port to listen on (default 8080; 0 picks any free port)
 *   HOST      address to listen on (default 127.0.0.1)
 *   DATA_DIR  where the database and dataset files live (default ./data)
 *   NODE_ENV  `production` turns off response validation and does not load the development seed
 *   DEV_SEED  `1` loads server/dev-seed.json into an empty store, `0` does not (default: 1
 *             unless production; NODE_ENV=production with DEV_SEED=1 refuses to start)
 *   ROUTING_FILE  the routing file (default server/routing.json)
 *   MAX_UPLOAD_BYTES  the largest dataset upload (default 4 GiB)
 *   RUN_JOBS  `0`: this process serves the API but trains no jobs (default 1)
 *   JOB_LEASE_MS  how long a dead process's job stays claimed before another resumes it (default 30000)
 */
import { dataDirFromEnv } from "./store/sqlite.ts";
import { startServer } from "./server.ts";

const env = process.env;
const production = env.NODE_ENV === "production";

function positiveIntegerFromEnv(name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === "") return undefined;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1) throw new Error(`${name} must be a whole number of at least 1, not "${value}"`);
  return number;
}

function portFromEnv(value: string | undefined): number {
  if (value === undefined || value === "") return 8080;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number from 0 to 65535, not "${value}"`);
  return port;
}

try {
  const server = await startServer({
    dataDir: dataDirFromEnv(env),
    port: portFromEnv(env.PORT),
    host: env.HOST || "127.0.0.1",
    validateResponses: !production,
    devSeed: env.DEV_SEED ? env.DEV_SEED !== "0" : !production,
    routingFile: env.ROUTING_FILE || undefined,
    maxUploadBytes: positiveIntegerFromEnv("MAX_UPLOAD_BYTES"),
    fineTuning: { runJobs: env.RUN_JOBS !== "0", leaseMs: positiveIntegerFromEnv("JOB_LEASE_MS") },
  });
  console.log(`Listening on ${server.origin} (API at ${server.baseUrl}, reference at ${server.origin}/docs)`);
  const stop = () => {
    server.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
} catch (error) {
  console.error(`Cannot start: ${(error as Error).message}`);
  process.exit(1);
}
