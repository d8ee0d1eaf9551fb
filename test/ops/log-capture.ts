/**
 * The server's log lines (server/log.ts, pino) as a test sees them: every line written
 * while capturing goes to the test instead of stderr, exactly as a collector would read it.
 */
import type { TestContext } from "vitest";
import { tapLog } from "../../server/log.ts";

export interface CapturedLog {
  /** Raw lines, without their newline. */
  lines(): string[];
  entries(): Record<string, unknown>[];
  /** Stops capturing (also done when the test ends, given a test context). */
  stop(): void;
}

export function captureLog(t?: TestContext, options: { minLevel?: "info" | "warn" | "error" } = {}): CapturedLog {
  const lines: string[] = [];
  const rank = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4 } as Record<string, number>;
  const min = rank[options.minLevel ?? "debug"] ?? 0;
  const stop = tapLog((line) => {
    const text = line.replace(/\n$/, "");
    const level = /"level":"(\w+)"/.exec(text)?.[1] ?? "info";
    if ((rank[level] ?? 0) >= min) lines.push(text);
  });
  t?.onTestFinished(stop);
  return {
    lines: () => [...lines],
    entries: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    stop,
  };
}
