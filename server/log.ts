/**
 * The server's log, on pino: one JSON object per line on stderr, `{level, time, pid,
 * hostname, event, …fields}`, so that a collector reads it without parsing prose. When
 * stderr is a terminal (`npm start` by hand) the same lines are printed readable by
 * pino-pretty instead. `LOG_LEVEL` (debug, info, warn, error, silent; default info)
 * chooses what is written.
 *
 * Every line written while a request runs carries its `requestId` (ops/request-context.ts),
 * whether or not the caller passed it.
 *
 * Never pass an API key, a request or response body, dataset content, or a query string
 * (page tokens, filters): the fields say what happened to which request, not what was
 * sent. As a second line of defence, fields named like credentials are redacted.
 */
import pino from "pino";
import pretty from "pino-pretty";
import { currentRequest } from "./ops/request-context.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** The levels LOG_LEVEL accepts. */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;

export function isLogLevel(value: string): value is (typeof LOG_LEVELS)[number] {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** Field names never written as they are, wherever they appear (one level deep). */
const REDACTED = ["authorization", "apiKey", "api_key", "key", "secret", "password", "*.authorization", "*.apiKey", "*.secret", "*.password"];

/** Where lines go: stderr, or a test's tap (tapLog). */
let tap: ((line: string) => void) | undefined;
const stderr = process.stderr.isTTY
  ? pretty({ destination: 2, sync: true, messageKey: "event", translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" })
  : pino.destination({ dest: 2, sync: true });
const destination = {
  write(line: string): void {
    if (tap) tap(line);
    else stderr.write(line);
  },
};

const envLevel = process.env.LOG_LEVEL;

/** The pino logger itself, for code that wants child loggers or level checks. */
export const logger = pino(
  {
    level: envLevel !== undefined && isLogLevel(envLevel) ? envLevel : "info",
    messageKey: "event",
    // Level names, not numbers, and ISO times: what people and collectors read without a table.
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED, censor: "[redacted]" },
    // The request the line was written for, even by code that knows nothing of requests.
    mixin: () => {
      const context = currentRequest();
      return context === undefined ? {} : { requestId: context.requestId };
    },
  },
  destination,
);

/** Writes one line. `event` names what happened, such as `request.cancelled`. */
export function log(level: LogLevel, event: string, fields: LogFields = {}): void {
  if (!logger.isLevelEnabled(level)) return;
  const defined: LogFields = {};
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) defined[name] = value;
  logger[level](defined, event);
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
