/**
 * A raw HTTP/1.1 client over a TCP socket, so that the fuzzer controls every byte the
 * server sees (request lines and headers no HTTP library would send, bodies that do not
 * match their framing) and how they arrive (all at once, in pieces, byte by byte, paused,
 * half-closed or aborted). It reads one response (skipping 1xx), framed by
 * Content-Length, chunked encoding, or the end of the connection, within a time limit.
 */
import net from "node:net";
import tls from "node:tls";
import { setTimeout as sleep } from "node:timers/promises";

/** How the request's bytes are sent. Fractions are of the body (of the whole request for `abort`). */
export type Delivery =
  | { kind: "whole" }
  /** In pieces cut at these fractions of the whole request, `delayMs` apart. */
  | { kind: "split"; cuts: number[]; delayMs: number }
  /** The body one byte at a time (the whole request when it is small; past 4 KiB, the rest at once). */
  | { kind: "trickle"; delayMs: number }
  /** Part of the body, a pause, then the rest. */
  | { kind: "stall"; at: number; pauseMs: number }
  /** Part of the body, then the client stops sending for good (FIN; it still reads). */
  | { kind: "halfClose"; at: number }
  /** Part of the request, then the connection is reset. */
  | { kind: "abort"; at: number }
  /** The whole request, then the connection is reset after `delayMs` (mid-answer for slow operations). */
  | { kind: "abortAfter"; delayMs: number };

export interface WireRequest {
  /** Request line and header block, ending with the empty line. */
  head: Buffer;
  /** The body exactly as sent (already chunk-encoded when the framing is chunked). */
  body: Buffer;
  delivery: Delivery;
  /** A HEAD request: the response has no body whatever its headers say. */
  isHead: boolean;
}

export interface WireResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The body arrived in full by its framing (false: the connection ended first). */
  complete: boolean;
}

export interface WireResult {
  /** `response`: a full status line and headers arrived. `closed`: the server ended the connection without one. `aborted`: the client reset it (as asked). */
  outcome: "response" | "timeout" | "closed" | "aborted";
  response?: WireResponse;
  elapsedMs: number;
  /** A socket error seen on the way (EPIPE, ECONNRESET), for the report. */
  socketError?: string;
}

/** Where requests go: `tls` for an https base URL. */
export interface WireTarget {
  host: string;
  port: number;
  tls?: boolean;
}

export async function sendRaw(target: WireTarget, request: WireRequest, timeoutMs: number): Promise<WireResult> {
  const started = performance.now();
  const socket = target.tls
    ? tls.connect({ host: target.host, port: target.port, servername: target.host })
    : net.connect({ host: target.host, port: target.port, noDelay: true });
  const received: Buffer[] = [];
  let size = 0;
  let socketError: string | undefined;
  let finished = false;
  let settle!: (result: WireResult) => void;
  const done = new Promise<WireResult>((resolve) => (settle = resolve));
  const finish = (outcome: WireResult["outcome"], response?: WireResponse) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    socket.destroy();
    settle({ outcome, response, elapsedMs: performance.now() - started, socketError });
  };
  const timer = setTimeout(
    () => finish("timeout", parseResponse(Buffer.concat(received), request.isHead, false)),
    timeoutMs,
  );
  socket.on("data", (chunk: Buffer) => {
    received.push(chunk);
    size += chunk.length;
    // Bounded: a response is never megabytes here; stop reading a runaway one.
    const parsed = parseResponse(Buffer.concat(received), request.isHead, false);
    if (parsed?.complete || size > 64 * 1024 * 1024) finish("response", parsed);
  });
  socket.on("error", (error: NodeJS.ErrnoException) => {
    socketError = error.code ?? error.message;
  });
  socket.on("close", () => {
    const parsed = parseResponse(Buffer.concat(received), request.isHead, true);
    finish(parsed ? "response" : "closed", parsed);
  });
  await new Promise<void>((resolve) => {
    socket.once(target.tls ? "secureConnect" : "connect", resolve);
    socket.once("close", resolve);
  });
  if (!finished) {
    try {
      await write(
        socket,
        request,
        () => finished,
        () => {
          socket.resetAndDestroy();
          finish("aborted");
        },
      );
    } catch (error) {
      socketError ??= (error as NodeJS.ErrnoException).code ?? String(error);
    }
  }
  return done;
}

async function write(
  socket: net.Socket,
  request: WireRequest,
  finished: () => boolean,
  aborted: () => void,
): Promise<void> {
  const { head, body, delivery } = request;
  const whole = Buffer.concat([head, body]);
  const put = (bytes: Buffer) =>
    new Promise<void>((resolve) => {
      if (finished() || socket.destroyed || bytes.length === 0) return resolve();
      if (socket.write(bytes)) resolve();
      else socket.once("drain", () => resolve()).once("close", () => resolve());
    });
  const pause = async (ms: number) => (ms > 0 ? sleep(ms) : new Promise<void>((resolve) => setImmediate(resolve)));
  const cut = (fraction: number, of: Buffer) => Math.max(0, Math.min(of.length, Math.floor(fraction * of.length)));
  switch (delivery.kind) {
    case "whole":
      return put(whole);
    case "split": {
      let from = 0;
      for (const at of [...delivery.cuts.map((f) => cut(f, whole)).sort((a, b) => a - b), whole.length]) {
        await put(whole.subarray(from, at));
        from = Math.max(from, at);
        if (from < whole.length) await pause(delivery.delayMs);
      }
      return;
    }
    case "trickle": {
      const small = whole.length <= 2048;
      const prefix = small ? Buffer.alloc(0) : head;
      const rest = small ? whole : body;
      await put(prefix);
      const bytewise = Math.min(rest.length, TRICKLE_BYTES);
      for (let i = 0; i < bytewise && !finished(); i++) {
        await put(rest.subarray(i, i + 1));
        await pause(delivery.delayMs);
      }
      return put(rest.subarray(bytewise));
    }
    case "stall": {
      const at = cut(delivery.at, body);
      await put(Buffer.concat([head, body.subarray(0, at)]));
      await sleep(delivery.pauseMs);
      return put(body.subarray(at));
    }
    case "halfClose": {
      await put(Buffer.concat([head, body.subarray(0, cut(delivery.at, body))]));
      if (!finished()) socket.end();
      return;
    }
    case "abort": {
      await put(whole.subarray(0, cut(delivery.at, whole)));
      await pause(1);
      if (!finished()) aborted();
      return;
    }
    case "abortAfter": {
      await put(whole);
      await sleep(delivery.delayMs);
      if (!finished()) aborted();
      return;
    }
  }
}

/** Bytes sent one at a time by `trickle`; a megabyte that way would take minutes. */
const TRICKLE_BYTES = 4096;

const HEADER_END = Buffer.from("\r\n\r\n");

/**
 * One response from the start of `data`, or undefined before its header block is complete.
 * `ended`: the connection has closed, so a body framed by the close is complete.
 */
export function parseResponse(data: Buffer, isHead: boolean, ended: boolean): WireResponse | undefined {
  let offset = 0;
  for (;;) {
    const end = data.indexOf(HEADER_END, offset);
    if (end < 0) return undefined;
    const lines = data.toString("latin1", offset, end).split("\r\n");
    const match = /^HTTP\/\d\.\d (\d{3})/.exec(lines[0] ?? "");
    if (!match)
      return {
        status: 0,
        headers: { "x-unparsable-status-line": lines[0] ?? "" },
        body: data.subarray(offset),
        complete: true,
      };
    const status = Number(match[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    const bodyStart = end + HEADER_END.length;
    // Interim responses (100 Continue) precede the real one.
    if (status >= 100 && status < 200 && status !== 101) {
      offset = bodyStart;
      continue;
    }
    if (isHead || status === 204 || status === 304 || (status >= 100 && status < 200))
      return { status, headers, body: Buffer.alloc(0), complete: true };
    const rest = data.subarray(bodyStart);
    if (/\bchunked\b/i.test(headers["transfer-encoding"] ?? "")) {
      const decoded = dechunk(rest);
      return { status, headers, body: decoded.body, complete: decoded.complete };
    }
    if (headers["content-length"] !== undefined) {
      const length = Number(headers["content-length"]);
      return { status, headers, body: rest.subarray(0, length), complete: rest.length >= length };
    }
    return { status, headers, body: rest, complete: ended };
  }
}

function dechunk(data: Buffer): { body: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", offset);
    if (lineEnd < 0) return { body: Buffer.concat(parts), complete: false };
    const size = Number.parseInt(data.toString("latin1", offset, lineEnd).split(";")[0] ?? "", 16);
    if (!Number.isFinite(size)) return { body: Buffer.concat(parts), complete: false };
    if (size === 0) {
      // Trailers end with an empty line.
      const trailerEnd = data.indexOf("\r\n", lineEnd + 2);
      return { body: Buffer.concat(parts), complete: trailerEnd >= 0 };
    }
    const start = lineEnd + 2;
    if (data.length < start + size + 2) {
      parts.push(data.subarray(start, Math.min(data.length, start + size)));
      return { body: Buffer.concat(parts), complete: false };
    }
    parts.push(data.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/** Chunked transfer encoding of `body`, cut at these fractions. */
export function chunkEncode(body: Buffer, cuts: number[]): Buffer {
  const positions = [...new Set(cuts.map((f) => Math.floor(f * body.length)))]
    .filter((p) => p > 0 && p < body.length)
    .sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const at of [...positions, body.length]) {
    if (at > from)
      pieces.push(Buffer.from(`${(at - from).toString(16)}\r\n`), body.subarray(from, at), Buffer.from("\r\n"));
    from = at;
  }
  pieces.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(pieces);
}
