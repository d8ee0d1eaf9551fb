/**
 * Graceful drain (SIGTERM): the listener stops accepting at once, /readyz says 503,
 * requests in flight and open streams get until the deadline (SHUTDOWN_GRACE_MS) to
 * finish, and each response meanwhile closes its connection (`Connection: close`), so
 * keep-alive clients reconnect elsewhere. At the deadline every open stream is ended with
 * its format's error event (503 UPSTREAM_UNAVAILABLE: retry, another process answers),
 * and whatever still runs (an upload) is cut.
 */
import { once } from "node:events";
import type http from "node:http";
import { log } from "../log.ts";
import { openStreams as openStreamsGauge } from "./metrics.ts";

/** The streams open on one server, each with the way to end it for a shutdown. */
export class OpenStreams {
  readonly #ends = new Set<() => void>();

  /** `end` sends the stream's error event and ends it; returns the function to call when the stream ends on its own. */
  add(end: () => void): () => void {
    this.#ends.add(end);
    openStreamsGauge.inc();
    return () => {
      if (this.#ends.delete(end)) openStreamsGauge.dec();
    };
  }

  get size(): number {
    return this.#ends.size;
  }

  /** Ends every open stream; returns how many there were. */
  endAll(): number {
    const ends = [...this.#ends];
    for (const end of ends) end();
    return ends.length;
  }
}

/** Requests being answered, so that the drain knows when there are none left. */
export class InFlight {
  #count = 0;
  #idle: (() => void)[] = [];

  /** A request arrived (answer-end.ts calls `ended` when its response closes). */
  started(): void {
    this.#count++;
  }

  /** Its response closed (finished, failed or cut). */
  ended(): void {
    this.#count--;
    if (this.#count === 0 && this.#idle.length > 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  get count(): number {
    return this.#count;
  }

  /** Resolves true once no request is in flight, or false after `ms`. */
  async idleWithin(ms: number): Promise<boolean> {
    if (this.#count === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.#idle.push(() => resolve(true)));
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([idle, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** After the deadline: how long ended streams get to flush their error event before connections are cut. */
const FLUSH_MS = 1_000;

export async function drainHttp(
  server: http.Server,
  requests: InFlight,
  streams: OpenStreams,
  graceMs: number,
): Promise<void> {
  const closed = once(server, "close");
  server.close();
  server.closeIdleConnections();
  log("info", "server.draining", { graceMs, inFlight: requests.count, openStreams: streams.size });
  const finished = await requests.idleWithin(graceMs);
  let endedStreams = 0;
  let cut = 0;
  if (!finished) {
    endedStreams = streams.endAll();
    if (!(await requests.idleWithin(FLUSH_MS))) cut = requests.count;
  }
  server.closeAllConnections();
  await closed;
  log(finished ? "info" : "warn", "server.drained", { inTime: finished, endedStreams, cutRequests: cut });
}
