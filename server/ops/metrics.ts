/**
 * The Prometheus metrics of a server or worker process (prom-client), on a registry of
 * its own, exposed by metrics-server.ts at `GET /metrics` on METRICS_PORT.
 *
 * Names follow the Prometheus conventions: a unit suffix (`_seconds`, `_bytes`),
 * `_total` on counters, base units, and labels with few values: an operation id, never a
 * path (which carries account and job names); a platform model, never an account's own.
 */
import client from "prom-client";
import { SeriesCounter, SeriesHistogram } from "./series-metrics.ts";

export const registry = new client.Registry();

/** HTTP latency: from a cached model list (milliseconds) to a long generation (minutes). */
const REQUEST_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Store calls: sub-millisecond SQLite reads to PostgreSQL waits on a busy pool. */
const STORE_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];
/** Training jobs, queued to done: seconds on the embedded model, hours on a real one. */
const JOB_SECONDS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600];

export const httpRequests = new SeriesCounter({
  name: "http_requests_total",
  help: "HTTP requests answered (499: the client hung up first), by contract operation id, method and status.",
  labelNames: ["operation", "method", "status"] as const,
  registers: [registry],
});

export const httpRequestDuration = new SeriesHistogram({
  name: "http_request_duration_seconds",
  help: "Time from the request's arrival to the end of its answer (a whole stream), by operation, method and status.",
  labelNames: ["operation", "method", "status"] as const,
  buckets: REQUEST_SECONDS,
  registers: [registry],
});

export const httpErrors = new SeriesCounter({
  name: "http_request_errors_total",
  help: "Error answers by operation and error code (the envelope's error.code; REQUEST_CANCELLED for a client that hung up).",
  labelNames: ["operation", "code"] as const,
  registers: [registry],
});

export const inputTokens = new SeriesCounter({
  name: "inference_input_tokens_total",
  help: "Input tokens of finished generations, by platform model (a fine-tuned model counts under its base).",
  labelNames: ["model"] as const,
  registers: [registry],
});

export const outputTokens = new SeriesCounter({
  name: "inference_output_tokens_total",
  help: "Output tokens of finished generations, by platform model (a fine-tuned model counts under its base).",
  labelNames: ["model"] as const,
  registers: [registry],
});

export const generations = new SeriesCounter({
  name: "inference_generations_total",
  help: "Generations started, by platform model and the class of provider that took them (primary, or fallback after the primary failed).",
  labelNames: ["model", "provider_class"] as const,
  registers: [registry],
});

export const upstreamRequests = new SeriesCounter({
  name: "upstream_requests_total",
  help: "Calls to OpenAI-compatible upstreams, by provider (routing file name) and outcome (2xx, 4xx, 429, 5xx, timeout, connection, aborted).",
  labelNames: ["provider", "outcome"] as const,
  registers: [registry],
});

export const upstreamDuration = new SeriesHistogram({
  name: "upstream_response_headers_seconds",
  help: "Time until an upstream's response headers (or its failure), by provider.",
  labelNames: ["provider"] as const,
  buckets: REQUEST_SECONDS,
  registers: [registry],
});

export const openStreams = new client.Gauge({
  name: "sse_streams_open",
  help: "Server-sent event streams open now.",
  registers: [registry],
});

export const jobDuration = new SeriesHistogram({
  name: "finetune_job_duration_seconds",
  help: "Training jobs from creation to their end, by job type and final state, observed by the process that ended them.",
  labelNames: ["type", "state"] as const,
  buckets: JOB_SECONDS,
  registers: [registry],
});

export const datasetValidations = new SeriesCounter({
  name: "dataset_validations_total",
  help: "Dataset versions validated, by result (ready, failed).",
  labelNames: ["result"] as const,
  registers: [registry],
});

export const datasetValidationBytes = new client.Counter({
  name: "dataset_validated_bytes_total",
  help: "Bytes of dataset files validated; its rate is the validation throughput.",
  registers: [registry],
});

export const datasetValidationLines = new client.Counter({
  name: "dataset_validated_lines_total",
  help: "Lines of dataset files validated.",
  registers: [registry],
});

export const storeDuration = new SeriesHistogram({
  name: "store_operation_duration_seconds",
  help: "Store calls (SQLite or PostgreSQL), by operation (area.method) and outcome (ok, error).",
  labelNames: ["operation", "outcome"] as const,
  buckets: STORE_SECONDS,
  registers: [registry],
});

export const storeErrors = new SeriesCounter({
  name: "store_errors_total",
  help: "Store calls that failed, by operation and error code (STORAGE_UNAVAILABLE, or the domain error: ALREADY_EXISTS, …).",
  labelNames: ["operation", "code"] as const,
  registers: [registry],
});

let defaultsOn = false;

/** Process metrics (CPU, memory, event-loop lag, handles), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  client.collectDefaultMetrics({ register: registry });
}

/** A gauge whose value is read at each scrape (queue depth from the store). */
export function gaugeFromCallback(
  name: string,
  help: string,
  labelNames: string[],
  read: (set: (labels: Record<string, string>, value: number) => void) => Promise<void>,
): void {
  if (registry.getSingleMetric(name)) registry.removeSingleMetric(name);
  new client.Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      await read((labels, value) => this.set(labels, value));
    },
  });
}

/** One upstream call reached its headers (or failed): `outcome` is 2xx, 4xx, 429, 5xx, timeout, connection or aborted. */
export function upstreamCalled(provider: string, startedMs: number, outcome: string): void {
  upstreamRequests.inc({ provider, outcome });
  upstreamDuration.observe({ provider }, (performance.now() - startedMs) / 1000);
}
