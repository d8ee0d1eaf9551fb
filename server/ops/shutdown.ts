/**
 * How the server and the training worker stop, in one place: what they started is closed
 * in reverse order, once (ClosingOrder), and their entry points hand both ways of
 * stopping to `stopOnSignals`: the first SIGTERM or SIGINT drains for SHUTDOWN_GRACE_MS,
 * a second stops at once; the process then exits 0, or 1 when closing failed.
 */
import { log } from "../log.ts";

export interface Closable {
  close(): Promise<void>;
}

/**
 * The services a process started, closed last first (the store, opened first, is closed
 * after everything that uses it). `close` runs once: a drain that ends and a second signal
 * that cuts it short share the same closing.
 */
export class ClosingOrder {
  readonly #services: Closable[] = [];
  #closing: Promise<void> | undefined;

  add(service: Closable): void {
    this.#services.push(service);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const service of this.#services.reverse()) await service.close();
    })();
    return this.#closing;
  }
}

/** A process that can stop gracefully or at once. */
export interface Stoppable {
  /** Lets work in progress finish within `graceMs`, then closes everything. */
  drain(graceMs: number): Promise<void>;
  /** Stops now: connections are cut, a job in training stops where it is. */
  close(): Promise<void>;
}

/** `server` or `worker`: the prefix of the `<process>.stopping_now` log line. */
export function stopOnSignals(processName: "server" | "worker", target: Stoppable, graceMs: number): void {
  let stopping = false;
  const exit = (stopped: Promise<void>) =>
    stopped.then(
      () => process.exit(0),
      () => process.exit(1),
    );
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      log("warn", `${processName}.stopping_now`, { signal });
      void exit(target.close());
      return;
    }
    stopping = true;
    void exit(target.drain(graceMs));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
