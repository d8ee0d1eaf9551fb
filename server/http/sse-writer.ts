/**
 * Writes a text/event-stream response. Each event is an `event:` line (when named) and
 * one `data:` line of JSON, then a blank line. The writer watches the connection: when
 * the client goes away, `signal` aborts, so generation stops at once.
 */
import type { Response } from "express";

export interface SseWriterOptions {
  /** Headers beside the SSE ones (x-provider-class, x-config-version). */
  headers: Record<string, string>;
}

export class SseWriter {
  readonly #res: Response;
  readonly #abort = new AbortController();
  #open = true;

  constructor(res: Response, options: SseWriterOptions) {
    this.#res = res;
    res.status(200);
    res.setHeader("content-type", "text/event-stream; charset=utf-8");
    res.setHeader("cache-control", "no-cache");
    res.setHeader("connection", "keep-alive");
    // Proxies such as nginx buffer responses unless told not to; events must flow as made.
    res.setHeader("x-accel-buffering", "no");
    for (const [name, value] of Object.entries(options.headers)) res.setHeader(name, value);
    res.flushHeaders();
    res.on("close", () => {
      this.#open = false;
      // A stream that ended (the happy path) closes too: nothing runs for it any more, and
      // an Error built there would build a stack on every request.
      if (!res.writableFinished) this.#abort.abort(new Error("client closed the stream"));
    });
  }

  /** Aborts when the client disconnects. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get open(): boolean {
    return this.#open && !this.#res.writableEnded;
  }

  /** Sends one event; `name` undefined sends an unnamed (`message`) event. */
  send(name: string | undefined, data: unknown): void {
    if (!this.open) return;
    const payload = typeof data === "string" ? data : JSON.stringify(data);
    this.#res.write(`${name === undefined ? "" : `event: ${name}\n`}data: ${payload}\n\n`);
  }

  end(): void {
    if (this.open) this.#res.end();
  }
}
