/**
 * Assembles the reference server: the store, the development seed, the routing file and
 * its providers, the generation engine, and the HTTP app, listening on a port.
 * `server/main.ts` calls it with settings from the environment; tests call it directly.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Router } from "express";
import { startDatasets } from "./datasets/index.ts";
import { startDevFaultModels } from "./dev/fault-models.ts";
import { docsRouter } from "./docs/docs-page.ts";
import type { UpstreamModelProvider } from "./finetune/deployments.ts";
import { startFineTuning, type FineTuningOptions } from "./finetune/index.ts";
import { createApp } from "./http/app.ts";
import { answerClientError } from "./http/malformed.ts";
import { expressPrototypes } from "./http/prototypes.ts";
import type { Provider } from "./inference/engine.ts";
import { InferenceEngine, LOCAL_PROVIDER, type EngineSettings } from "./inference/generation.ts";
import { LocalProvider } from "./inference/local/provider.ts";
import { CatalogResolver, registerModelRoutes, unknownModelProblems } from "./inference/models.ts";
import { OpenAiUpstreamProvider } from "./inference/providers/openai-upstream.ts";
import { registerInferenceRoutes } from "./inference/routes.ts";
import { checkRoutedModels, loadRoutingConfig, unroutedModels, type RoutingConfig } from "./inference/routing.ts";
import { installCatalog } from "./inference/catalog.ts";
import { loadCatalogFile, trainersWithoutKey } from "./inference/catalog-file.ts";
import { isListed, requireReadable, storeTenant } from "./inference/store-tenant.ts";
import { log, logs } from "./log.ts";
import { accessRecord } from "./ops/access-log.ts";
import { watchAnswers } from "./ops/answer-end.ts";
import { drainHttp, InFlight, OpenStreams } from "./ops/drain.ts";
import { instrumentStore } from "./ops/instrumented-store.ts";
import { gaugeFromCallback } from "./ops/metrics.ts";
import { startMetricsServer } from "./ops/metrics-server.ts";
import { ClosingOrder } from "./ops/shutdown.ts";
import { probesRouter } from "./ops/probes.ts";
import { openStoreProbe } from "./ops/store-probe.ts";
import { assertDevSeedAllowed, loadDevSeed } from "./store/seed.ts";
import { openStore } from "./store/open.ts";
import { withCaches } from "./store/cache/cached-store.ts";
import type { PostgresStoreOptions } from "./store/postgres.ts";
import type { Store } from "./store/store.ts";
import { credential } from "./settings/environment.ts";
import { defaultOf } from "./settings/parse.ts";

export const DEFAULT_ROUTING_FILE = defaultOf("ROUTING_FILE");

export interface ServerOptions {
  /** Files (datasets, checkpoints, adapters), and the SQLite database when there is no `databaseUrl`. */
  dataDir: string;
  /** `postgres://…`: keep records in PostgreSQL, shared with other processes; unset: SQLite in `dataDir`. */
  databaseUrl?: string;
  postgres?: PostgresStoreOptions;
  port: number;
  host: string;
  /** Check every response against the contract (development and tests). */
  validateResponses: boolean;
  /** Load server/dev-seed.json into an empty store; refused when NODE_ENV=production. */
  devSeed: boolean;
  /**
   * Development only, with the seed: offer the fault models (dev/fault-models.ts) that the
   * conformance kit's upstream transcripts call, routed to a built-in misbehaving upstream.
   */
  devFaultModels?: boolean;
  routingFile?: string;
  /** The catalogue file: every platform model (default server/catalog.json). */
  catalogFile?: string;
  /** Largest JSON request body, in bytes (default MAX_BODY_BYTES's, 8 MiB). */
  maxBodyBytes?: number;
  /** Largest dataset upload, in bytes (default MAX_UPLOAD_BYTES's, 4 GiB). */
  maxUploadBytes?: number;
  engine?: Partial<EngineSettings>;
  /** Job runner settings (lease, poll interval, queue TTL, whether this process runs jobs). */
  fineTuning?: Omit<FineTuningOptions, "store" | "dataDir">;
  /** Extra providers by name, beside those the routing file configures (tests use this). */
  providers?: Record<string, Provider>;
  /** Serve Prometheus metrics at /metrics on this port (0: any free port); undefined: no metrics are kept. */
  metricsPort?: number;
  /** The address of the metrics listener (default: `host`). */
  metricsHost?: string;
  /** Write one log line per request (default true; LOG_LEVEL above info turns it off too). */
  accessLog?: boolean;
}

export interface RunningServer {
  /** `http://host:port`: the origin, the Anthropic SDK's base URL. */
  origin: string;
  /** `origin/v1`: the OpenAI SDK's base URL. */
  baseUrl: string;
  store: Store;
  /** `http://host:port` of the metrics listener, when metrics are on. */
  metricsOrigin?: string;
  /** Stops at once: connections are cut, a job in training stops where it is. */
  close(): Promise<void>;
  /**
   * Stops gracefully (SIGTERM): no new connections, /readyz 503, requests and streams get
   * `graceMs` to finish, then streams end with their error event; a job in training gets
   * the same time to reach its next checkpoint and releases its lease (ops/drain.ts).
   */
  drain(graceMs: number): Promise<void>;
}

/** The longest a request (an upload, in practice) may take to arrive. */
const UPLOAD_REQUEST_TIMEOUT_MS = 3_600_000;

export const ENGINE_DEFAULTS: EngineSettings = {
  deadlineMs: 120_000,
  stallTimeoutMs: 30_000,
  mediaMaxBytes: 4 * 1024 * 1024,
  mediaFetchAllowList: [],
  mediaFetchTimeoutMs: 5_000,
};

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  if (options.devSeed || options.devFaultModels) assertDevSeedAllowed();
  const catalog = loadCatalogFile(options.catalogFile);
  const routingFileName = options.routingFile ?? DEFAULT_ROUTING_FILE;
  const routingFile = loadRoutingConfig(routingFileName);
  checkRoutedModels(
    routingFile,
    catalog.map((m) => m.id),
    `routing file ${routingFileName}`,
  );
  for (const model of unroutedModels(
    routingFile,
    catalog.map((m) => m.id),
  ))
    log("warn", "catalog.unrouted", {
      model,
      detail: `not routed in ${routingFileName}: the embedded model serves it`,
    });
  for (const { model, keyEnv } of trainersWithoutKey(catalog))
    log("warn", "catalog.trainer_key_missing", {
      model,
      detail: `${keyEnv} is not set: jobs on this base will fail to authenticate with its trainer`,
    });
  installCatalog(catalog);
  // The development server's fault models are routed after the check: they are not the catalogue's.
  const devFaults = options.devFaultModels ? await startDevFaultModels(routingFile) : undefined;
  const routing = devFaults?.routing ?? routingFile;
  const settings = { ...ENGINE_DEFAULTS, ...options.engine };
  const providers = buildProviders(routing, settings, { ...devFaults?.providers, ...options.providers });
  const metricsOn = options.metricsPort !== undefined;
  const opened = await openStore({
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl,
    postgres: options.postgres,
  }).catch(async (error: unknown) => {
    await devFaults?.close();
    throw error;
  });
  // Keys, accounts and models from memory, charges in groups (store/cache/cached-store.ts), over
  // the database's own calls timed, and job and dataset events logged, unless nobody would see either.
  const store = withCaches(metricsOn || logs("info") ? instrumentStore(opened, { timed: metricsOn }) : opened);
  // Closed last first: the store after everything that uses it.
  const closing = new ClosingOrder();
  closing.add(store);
  const probe = openStoreProbe(options);
  closing.add(probe);
  if (devFaults) closing.add(devFaults);
  let metricsOrigin: string | undefined;
  try {
    if (options.devSeed) await loadDevSeed(store);
    const datasets = await startDatasets({
      store,
      dataDir: options.dataDir,
      maxUploadBytes: options.maxUploadBytes ?? defaultOf("MAX_UPLOAD_BYTES"),
      // One lease length for all work a dead process leaves: its jobs and its dataset work.
      ownerTtlMs: options.fineTuning?.leaseMs,
    });
    closing.add(datasets);
    const fineTuning = await startFineTuning({
      ...options.fineTuning,
      store,
      dataDir: options.dataDir,
      upstreamModelProvider: upstreamModelProviders(settings),
    });
    closing.add(fineTuning);
    const models = new CatalogResolver(fineTuning.models, devFaults?.models);
    const engine = new InferenceEngine(routing, providers, models, settings);
    const tenantFor = storeTenant.bind(null, store);
    const streams = new OpenStreams();
    let draining = false;
    const probes = probesRouter({ store, probe, draining: () => draining });
    const app = createApp({
      store,
      validateResponses: options.validateResponses,
      maxBodyBytes: options.maxBodyBytes ?? defaultOf("MAX_BODY_BYTES"),
      publicRoutes: publicRoutes(docsRouter(), probes),
      requestProblems: unknownModelProblems(models, tenantFor),
      registerRoutes: (handlers) => {
        registerInferenceRoutes(handlers, { engine, tenantFor, streams });
        registerModelRoutes(handlers, {
          models,
          tenantFor,
          isListed,
          requireReadable,
          configVersion: () => engine.configVersion,
        });
        datasets.register(handlers);
        fineTuning.register(handlers);
      },
    });
    // Requests and responses born with express's prototypes: express need not swap them, and
    // both listeners' objects keep one shape (http/prototypes.ts).
    const serverClasses = expressPrototypes(app);
    if (metricsOn) {
      gaugeFromCallback(
        "finetune_jobs",
        "Training jobs not yet ended, by state, across every process sharing the store (QUEUED is the queue depth).",
        ["state"],
        async (set) => {
          for (const [state, count] of Object.entries(await probe.liveJobCounts())) set({ state }, count);
        },
      );
      const metrics = await startMetricsServer({
        port: options.metricsPort as number,
        host: options.metricsHost ?? options.host,
        probes,
        serverClasses,
      });
      closing.add(metrics);
      metricsOrigin = metrics.origin;
    }
    const requests = new InFlight();
    const watch = watchAnswers(requests, accessRecord({ log: options.accessLog !== false, metrics: metricsOn }));
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
      watch(res);
      // While draining, every answer closes its connection: keep-alive clients reconnect elsewhere.
      if (draining) res.setHeader("connection", "close");
      app(req, res);
    };
    // Node's own answers to malformed requests have no body; these give the error envelope (http/malformed.ts).
    const server = http.createServer({ requireHostHeader: false, ...serverClasses }, handler);
    server.on("clientError", answerClientError);
    // An Expect other than 100-continue is ignored (RFC 9110 §10.1.1 allows it) instead of a bare 417.
    server.on("checkExpectation", handler);
    const running = await listen(server, options, store, () => closing.close());
    return {
      ...running,
      metricsOrigin,
      async drain(graceMs: number) {
        draining = true;
        // Jobs and HTTP share the deadline: both run out of time together.
        await Promise.all([drainHttp(server, requests, streams, graceMs), fineTuning.close(graceMs)]);
        await closing.close();
      },
    };
  } catch (error) {
    await closing.close();
    throw error;
  }
}

/**
 * Providers for the models upstream trainers tuned: the trainer's own OpenAI-compatible API
 * under the tuned model's upstream name, one (with its connection pool) per model.
 */
function upstreamModelProviders(settings: EngineSettings): UpstreamModelProvider {
  const made = new Map<string, Provider>();
  return (trainer, upstreamModel) => {
    const key = `${trainer.baseUrl}\n${trainer.apiKeyEnv ?? ""}\n${upstreamModel}`;
    let provider = made.get(key);
    if (provider === undefined) {
      provider = new OpenAiUpstreamProvider({
        name: "tuned-upstream",
        baseUrl: trainer.baseUrl,
        model: upstreamModel,
        apiKey: credential(trainer.apiKeyEnv),
        timeoutMs: trainer.timeoutMs ?? 30_000,
        stallTimeoutMs: settings.stallTimeoutMs,
      });
      made.set(key, provider);
    }
    return provider;
  };
}

function buildProviders(
  routing: RoutingConfig,
  settings: EngineSettings,
  extra: Record<string, Provider>,
): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  for (const [name, config] of Object.entries(routing.providers)) {
    if (config.type === "local") {
      providers.set(name, new LocalProvider());
    } else {
      const apiKey = credential(config.apiKeyEnv);
      const upstream = {
        name,
        baseUrl: config.baseUrl,
        model: config.model,
        apiKey,
        timeoutMs: config.timeoutMs ?? 30_000,
        stallTimeoutMs: settings.stallTimeoutMs,
      };
      providers.set(name, new OpenAiUpstreamProvider(upstream));
    }
  }
  for (const [name, provider] of Object.entries(extra)) providers.set(name, provider);
  // Fine-tuned models always run on the embedded model, whatever the routing file names.
  if (!providers.has(LOCAL_PROVIDER)) providers.set(LOCAL_PROVIDER, new LocalProvider());
  return providers;
}

/** Routes outside the versioned API, before authentication: the docs page and the probes. */
function publicRoutes(...routers: Router[]): Router {
  const router = express.Router({ caseSensitive: true });
  for (const r of routers) router.use(r);
  return router;
}

async function listen(
  server: http.Server,
  options: ServerOptions,
  store: Store,
  stop: () => Promise<void>,
): Promise<Omit<RunningServer, "drain">> {
  // Node's default of 300 s would cut off a multi-gigabyte dataset upload on a slow link.
  server.requestTimeout = UPLOAD_REQUEST_TIMEOUT_MS;
  server.listen(options.port, options.host);
  await Promise.race([once(server, "listening"), once(server, "error").then(([error]) => Promise.reject(error))]);
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const origin = `http://${host}:${port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    store,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
      await stop();
    },
  };
}
