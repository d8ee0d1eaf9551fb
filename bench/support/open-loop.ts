/**
 * Open-loop load at a steady rate, for latency at a given request rate: request i is due
 * at start + i / rate and is sent when it is due, whatever the answers before it did, and
 * its latency counts from when it was due, so a stall of the server shows as latency of
 * the requests it delayed instead of as requests never sent (no coordinated omission).
 *
 * Why not autocannon's `overallRate`: it is a quota per connection per second that each
 * connection spends at full speed and then waits out (autocannon/lib/httpClient.js), so at
 * "1 000 req/s" over 32 connections the server gets 32 concurrent requests back to back for
 * the first part of every second and nothing for the rest, and the latencies measured are
 * those of a saturated server's queue; they are also whole milliseconds, too coarse for a
 * 1 ms target. wrk2 does this properly but is not an npm package; this is the small part
 * of it the benchmarks need, over undici.
 */
import { Pool } from "undici";

export interface OpenLoopOptions {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** Requests per second, evenly spaced. */
  rate: number;
  seconds: number;
  /** At most this many requests in flight; more wait for a connection (and their wait counts). */
  connections?: number;
}

export interface OpenLoopResult {
  /** Requests per second actually completed over the run. */
  rps: number;
  /** Milliseconds from when each request was due to its answer's end. */
  p50: number;
  p99: number;
  p999: number;
  /** How late the generator itself sent requests (its own event loop), p99 in ms: large means it did not keep up. */
  sendLateP99: number;
  errors: number;
}

export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const url = new URL(options.url);
  const pool = new Pool(url.origin, { connections: options.connections ?? 64, keepAliveTimeout: 60_000 });
  const total = Math.round(options.rate * options.seconds);
  const interval = 1000 / options.rate;
  const latencies: number[] = [];
  const late: number[] = [];
  let errors = 0;
  const inFlight = new Set<Promise<void>>();

  const send = (due: number) => {
    late.push(performance.now() - due);
    const done = pool
      .request({
        path: url.pathname + url.search,
        method: options.method,
        headers: options.headers,
        ...(options.body === undefined ? {} : { body: options.body }),
      })
      .then(async (response) => {
        await response.body.dump();
        if (response.statusCode >= 400) errors++;
        else latencies.push(performance.now() - due);
      })
      .catch(() => {
        errors++;
      })
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
  };

  const start = performance.now();
  let next = 0;
  while (next < total) {
    const now = performance.now();
    for (; next < total && start + next * interval <= now; next++) send(start + next * interval);
    // Sleep until the next request is due (timers have millisecond resolution; each
    // request's latency still counts from its exact due time).
    if (next < total) await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + next * interval - now)));
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - start) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  late.sort((a, b) => a - b);
  const at = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? Number.NaN;
  return {
    rps: latencies.length / seconds,
    p50: at(latencies, 0.5),
    p99: at(latencies, 0.99),
    p999: at(latencies, 0.999),
    sendLateP99: at(late, 0.99),
    errors,
  };
}
