/**
 * One log line per request (`event: "request"`) and the HTTP metrics, written when the
 * answer ends: request id, operation id, account, method, path (never the query string),
 * status, error code, latency, bytes in and out (headers included), and for generations
 * the model, provider class and tokens.
 *
 * A client that hangs up first is the `request.cancelled` line of http/cancelled.ts (499,
 * REQUEST_CANCELLED); here it is only counted, with status 499.
 *
 * Called by the server's shared `close` listener (answer-end.ts), around the express app
 * rather than as one of its layers: it sees every request the app is handed, whatever
 * layer answers it, and when both the line and the metrics are off there is nothing to call.
 */
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Request, Response } from "express";
import { logRequest, logs } from "../log.ts";
import { httpErrors, httpRequestDuration, httpRequests } from "./metrics.ts";
import type { CounterSeries, HistogramSeries } from "./series-metrics.ts";

export interface AccessLogOptions {
  /** Write the `request` line (LOG_LEVEL info or lower). */
  log: boolean;
  /** Count and time requests (metrics on). */
  metrics: boolean;
}

/** Operation label of requests that matched no contract operation (a 404, a probe, the docs). */
const NO_OPERATION = "none";

/**
 * A connection's byte counts when its previous request ended. Node has read a request's
 * head (and often its whole body) before the request is handed over, so a request's bytes
 * are counted from the end of the one before it on the same connection, not from its start.
 */
const countedUntil = new WeakMap<Socket, { read: number; written: number }>();

function bytesOf(socket: Socket): { bytesIn: number; bytesOut: number } {
  const before = countedUntil.get(socket) ?? { read: 0, written: 0 };
  const now = { read: socket.bytesRead, written: socket.bytesWritten };
  countedUntil.set(socket, now);
  return { bytesIn: now.read - before.read, bytesOut: now.written - before.written };
}

/** The request counter's and latency histogram's series of one operation, method and status. */
interface RequestSeries {
  requests: CounterSeries;
  duration: HistogramSeries;
}

/**
 * Series by operation, method and status, each resolved once: the labels object and the
 * series keys are not built again for every request (a few hundred nanoseconds a request
 * on a path of some forty microseconds; bench/ops-overhead.ts).
 */
const seriesByOperation = new Map<string, Map<string, Map<number, RequestSeries>>>();

function requestSeries(operation: string, method: string, status: number): RequestSeries {
  let byMethod = seriesByOperation.get(operation);
  if (byMethod === undefined) seriesByOperation.set(operation, (byMethod = new Map()));
  let byStatus = byMethod.get(method);
  if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
  let series = byStatus.get(status);
  if (series === undefined) {
    const labels = { operation, method, status: String(status) };
    series = { requests: httpRequests.series(labels), duration: httpRequestDuration.series(labels) };
    byStatus.set(status, series);
  }
  return series;
}

/** Records one ended answer; `arrived` is performance.now() at its request's arrival. */
export type AccessRecord = (res: ServerResponse, arrived: number, cancelled: boolean) => void;

/** What each ended answer records (called by answer-end.ts); undefined when there is nothing to do. */
export function accessRecord(options: AccessLogOptions): AccessRecord | undefined {
  const writeLine = options.log && logs("info");
  if (!writeLine && !options.metrics) return undefined;
  return (res, arrived, cancelled) => {
    const req = res.req;
    const locals = (res as Response).locals ?? {};
    const status = cancelled ? 499 : res.statusCode;
    const seconds = (performance.now() - arrived) / 1000;
    const operation = locals.pathMatch?.operation?.operationId ?? NO_OPERATION;
    const code = cancelled ? "REQUEST_CANCELLED" : locals.errorCode;
    if (options.metrics) {
      const series = requestSeries(operation, req.method ?? "", status);
      series.requests.inc();
      series.duration.observe(seconds);
      if (code !== undefined) httpErrors.series({ operation, code }).inc();
    }
    if (!writeLine || cancelled) return;
    const generation = locals.generation;
    const { bytesIn, bytesOut } = bytesOf(req.socket);
    logRequest(status >= 500 ? "error" : "info", {
      requestId: locals.requestId,
      operation: operation === NO_OPERATION ? undefined : operation,
      account: locals.caller?.account.id,
      method: req.method,
      // The path only: a query string may carry page tokens and filters.
      path: ((req as Request).originalUrl ?? req.url ?? "").split("?")[0]!,
      status,
      code,
      durationMs: Math.round(seconds * 1000 * 10) / 10,
      bytesIn,
      bytesOut,
      model: generation?.model,
      providerClass: generation?.providerClass,
      inputTokens: generation?.inputTokens,
      outputTokens: generation?.outputTokens,
    });
  };
}
