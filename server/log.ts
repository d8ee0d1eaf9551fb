/**
 * The server's log, on pino: one JSON object per line on stderr, `{level, time, pid,
 * hostname, event, …fields}`, so that a collector reads it without parsing prose. When
 * stderr is a terminal (`npm start` by hand) the same lines are printed readable by
 * pino-pretty instead. The LOG_LEVEL setting (debug, info, warn, error, silent; default
 * info) chooses what is written: the entry points pass it to `setLogLevel`.
 *
 * Every line written while a request runs carries its `requestId` (request-context.ts),
 * whether or not the caller passed it.
 *
 * Never pass an API key, a request or response body, dataset content, or a query string
 * (page tokens, filters): the fields say what happened to which request, not what was
 * sent. As a second line of defence, fields named like credentials are redacted.
 */
import pino from "pino";
import prettyStream from "pino-pretty";
import { currentRequest } from "./request-context.ts";
import { defaultOf } from "./settings/parse.ts";
import type { LogLevelSetting } from "./settings/table.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

export type LogFields = Record<string, string | number | boolean | null | undefined>;

/**
 * Field names never written as they are. Top-level only: fields are flat by this module's
 * rule, and a wildcard path costs on every line (measured: bench/ops-overhead.ts).
 */
const REDACTED = ["authorization", "apiKey", "api_key", "key", "secret", "password", "token"];

/**
 * Lines are written to stderr in batches: gathered here, one string per line in an array
 * joined once, and written whole with one synchronous write when 16 Ki characters are
 * waiting, every FLUSH_MS, and at once for an error. Measured in CPU profiles under load
 * (bench/ops-overhead.ts): a synchronous write per line was two thirds of the log's cost;
 * sonic-boom's own batching (minLength) measures the byte length of its growing buffer on
 * every line (4–13 µs of CPU a line against about 1.5 µs this way); and an asynchronous
 * write of each batch cost three times the synchronous one (the string copied for the
 * thread pool, the hand-over). A batch's write blocks the event loop for some microseconds;
 * if stderr is a pipe whose reader stops reading, the server waits for it, as pino's own
 * default (synchronous) destination does, rather than holding an unbounded backlog. A crash
 * that kills the process outright (SIGKILL, out of memory) can lose up to FLUSH_MS of
 * lines; a normal exit writes what is gathered.
 */
const FLUSH_MS = 250;
const BATCH_CHARS = 16 * 1024;
const file = process.stderr.isTTY ? undefined : pino.destination({ dest: 2, sync: true });
let pending: string[] = [];
let pendingChars = 0;

/** Hands the gathered lines to the file as one write. */
function drain(): void {
  if (pending.length === 0) return;
  const batch = pending.join("");
  pending = [];
  pendingChars = 0;
  file!.write(batch);
}

if (file) {
  setInterval(drain, FLUSH_MS).unref();
  process.on("exit", flushLog);
}

/** Writes out what is buffered, synchronously (before a process.exit, or from an exit handler). */
export function flushLog(): void {
  if (!file) return;
  try {
    drain();
    file.flushSync();
  } catch {
    // Nothing more can be done for a log that cannot be written while exiting.
  }
}

/** Where lines go: stderr in batches, pretty when a person reads it, or a test's tap (tapLog). */
let tap: ((line: string) => void) | undefined;
const pretty = file
  ? undefined
  : prettyStream({
      destination: 2,
      sync: true,
      messageKey: "event",
      translateTime: "SYS:HH:MM:ss.l",
      ignore: "pid,hostname",
    });
const destination = {
  write(line: string): void {
    if (tap) tap(line);
    else if (pretty) pretty.write(line);
    else {
      pending.push(line);
      pendingChars += line.length;
      if (pendingChars >= BATCH_CHARS) drain();
    }
  },
};

/**
 * pino's isoTime, made once per millisecond: under load many lines share a millisecond,
 * and formatting the date was a third of pino's own cost per line in a profile (bench/ops-overhead.ts).
 */
let lastMs = -1;
let lastTime = "";
function isoTime(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

/** The level field of each line, made once: pino asks for it on every line. */
const LEVEL_FIELDS: Record<string, { level: string }> = Object.fromEntries(
  ["trace", "debug", "info", "warn", "error", "fatal"].map((label) => [label, { level: label }]),
);

/** The pino logger itself, for level checks. Lines written through it directly carry no requestId: use log(). */
export const logger = pino(
  {
    level: defaultOf("LOG_LEVEL"),
    messageKey: "event",
    // Level names, not numbers, and ISO times: what people and collectors read without a table.
    formatters: { level: (label) => LEVEL_FIELDS[label] ?? { level: label } },
    timestamp: isoTime,
    redact: { paths: REDACTED, censor: "[redacted]" },
  },
  destination,
);

/**
 * Writes one line. `event` names what happened, such as `request.cancelled`. A line written
 * while a request runs carries its requestId even from code that knows nothing of requests;
 * a caller that has the id already (the access line) passes it, which spares the lookup
 * and a copy of the fields (pino's mixin would do both on every line).
 */
export function log(level: LogLevel, event: string, fields: LogFields = {}): void {
  const context = fields.requestId === undefined ? currentRequest() : undefined;
  // pino leaves out fields whose value is undefined.
  logger[level](context === undefined ? fields : { requestId: context.requestId, ...fields }, event);
  if (level === "error" && file) drain();
}

/**
 * The `request` line's fields (ops/access-log.ts). Its values never hold a credential,
 * a body or a query string.
 */
export interface RequestLine {
  requestId: string | undefined;
  operation: string | undefined;
  account: string | undefined;
  method: string | undefined;
  path: string;
  status: number;
  code: string | undefined;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  model: string | undefined;
  providerClass: string | undefined;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

/** `pid` and `hostname`, as pino writes them after the time on every line. */
const CHINDINGS = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? "";

/** A string field as pino writes it (as JSON), or nothing when undefined. */
function text(name: string, value: string | undefined): string {
  return value === undefined ? "" : `,"${name}":${JSON.stringify(value)}`;
}

/** A number field as pino writes it (a non-finite one as null), or nothing when undefined. */
function number(name: string, value: number | undefined): string {
  return value === undefined ? "" : `,"${name}":${Number.isFinite(value) ? value : null}`;
}

/**
 * Writes the `request` line of one answered request: the same JSON text that
 * `log(level, "request", line)` writes, fields in the same order
 * (test/ops/request-line.test.ts compares them), put together directly. It is written for
 * every request, and pino's general path (a key-by-key walk of the fields, the redaction
 * check, the level call) was 4.4 µs of the line's 9.6 on the event loop in a CPU profile
 * under `GET /v1/models`, whose own work is about 75 (docs/performance.md); each field is
 * read by name rather than by a loop over names (a keyed read of many names per object is
 * V8's slow, megamorphic path). The fields are fixed and flat, none named like a
 * credential, so redaction has nothing to do here.
 */
export function logRequest(level: "info" | "error", line: RequestLine): void {
  if (!logger.isLevelEnabled(level)) return;
  const requestId = line.requestId ?? currentRequest()?.requestId;
  destination.write(
    `{"level":"${level}"${isoTime()}${CHINDINGS}` +
      text("requestId", requestId) +
      text("operation", line.operation) +
      text("account", line.account) +
      text("method", line.method) +
      text("path", line.path) +
      number("status", line.status) +
      text("code", line.code) +
      number("durationMs", line.durationMs) +
      number("bytesIn", line.bytesIn) +
      number("bytesOut", line.bytesOut) +
      text("model", line.model) +
      text("providerClass", line.providerClass) +
      number("inputTokens", line.inputTokens) +
      number("outputTokens", line.outputTokens) +
      `,"event":"request"}\n`,
  );
  if (level === "error" && file) drain();
}

/** Writes lines of `level` and above from now on (`silent`: none). */
export function setLogLevel(level: LogLevelSetting): void {
  logger.level = level;
}

/** Whether lines of `level` are written (so that a caller can skip building their fields). */
export function logs(level: LogLevel): boolean {
  return logger.isLevelEnabled(level);
}

/**
 * Tests: sends every line to `listener` instead of stderr until the returned function is
 * called. Lines are the exact JSON text a collector would read.
 */
export function tapLog(listener: (line: string) => void): () => void {
  const previous = tap;
  tap = listener;
  return () => {
    tap = previous;
  };
}
