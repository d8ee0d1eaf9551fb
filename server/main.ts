/**
 * `npm start`: the reference server with its settings from the environment: every
 * variable it reads, its default and meaning, is a row of settings/table.ts (the README's
 * Configuration table is printed from it). A bad value refuses to start, in one line that
 * names the variable.
 *
 * SIGTERM or SIGINT drains (RunningServer.drain) for SHUTDOWN_GRACE_MS; a second one stops
 * at once (ops/shutdown.ts).
 */
import { useOwnerHost } from "./datasets/owners.ts";
import { setLogLevel } from "./log.ts";
import { stopOnSignals } from "./ops/shutdown.ts";
import { readSettings } from "./settings/environment.ts";
import type { SettingsOf } from "./settings/parse.ts";
import { DEV_CHECKPOINT_HOLD_MS } from "./dev/checkpoint-hold.ts";
import { storeConfig } from "./store/open.ts";
import { type ServerOptions, startServer } from "./server.ts";

function serverOptions(settings: SettingsOf<"server">): ServerOptions {
  return {
    ...storeConfig(settings),
    port: settings.PORT,
    host: settings.HOST,
    metricsPort: settings.METRICS_PORT,
    metricsHost: settings.METRICS_HOST,
    validateResponses: settings.VALIDATE_RESPONSES,
    devSeed: settings.DEV_SEED,
    // With the development seed only: the fault models the conformance kit's upstream transcripts call.
    devFaultModels: settings.DEV_SEED,
    routingFile: settings.ROUTING_FILE,
    catalogFile: settings.CATALOG_FILE,
    maxBodyBytes: settings.MAX_BODY_BYTES,
    maxUploadBytes: settings.MAX_UPLOAD_BYTES,
    fineTuning: {
      runJobs: settings.RUN_JOBS,
      leaseMs: settings.JOB_LEASE_MS,
      // With the development seed only: a job's first checkpoint lasts long enough for the
      // conformance kit's cancel-in-CHECKPOINTING transcript (profiles/reference.json).
      ...(settings.DEV_SEED ? { checkpointHoldMs: DEV_CHECKPOINT_HOLD_MS } : {}),
    },
  };
}

try {
  const settings = readSettings("server");
  setLogLevel(settings.LOG_LEVEL);
  useOwnerHost(settings.OWNER_HOST);
  const server = await startServer(serverOptions(settings));
  console.log(`Listening on ${server.origin} (API at ${server.baseUrl}, reference at ${server.origin}/docs)`);
  if (server.metricsOrigin) console.log(`Metrics at ${server.metricsOrigin}/metrics`);
  stopOnSignals("server", server, settings.SHUTDOWN_GRACE_MS);
} catch (error) {
  console.error(`Cannot start: ${(error as Error).message}`);
  process.exit(1);
}
