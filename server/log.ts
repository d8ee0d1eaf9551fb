/**
 * The server's log: one JSON object per line on stderr, `{time, level, event, …fields}`,
 * so that a collector can read it without parsing prose. The one place that writes log
 * lines for requests; a real logger (pino) can replace this module without its callers
 * changing.
 *
 * Never pass an API key, a request or response body, or a query string (page tokens,
 * filters): the fields say what happened to which request (`requestId`), not what was sent.
 */

export type LogLevel = "info" | "warn" | "error";

export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** Writes one line. `event` names what happened, such as `request.cancelled`. */
export function log(level: LogLevel, event: string, fields: LogFields = {}): void {
  const line: LogFields = { time: new Date().toISOString(), level, event };
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) line[name] = value;
  // console.error is stderr; JSON.stringify escapes newlines, so a stack trace stays on its line.
  console.error(JSON.stringify(line));
}
