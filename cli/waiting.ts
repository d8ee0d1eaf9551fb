/**
 * Progress for a wait with nothing to count (a validation, a browser starting): on a
 * terminal, one line on stderr that shows the seconds passing, redrawn in place; in a pipe
 * or a log, a line when the wait starts and one every ten seconds, so a long wait never
 * looks like a hang and a log is not flooded.
 */
import type { Context } from "./context.ts";

const LOG_EVERY_MS = 10_000;

export interface Waiting {
  /** Ends the line (the last elapsed time stays on a terminal). */
  done(): void;
}

export function waiting(ctx: Context, label: string): Waiting {
  if (ctx.json) return { done() {} };
  const stderr = ctx.io.stderr;
  const started = performance.now();
  const seconds = () => Math.floor((performance.now() - started) / 1000);
  if (!ctx.live) {
    ctx.note(`${label}…`);
    const timer = setInterval(() => ctx.note(`${label}… still waiting (${seconds()} s)`), LOG_EVERY_MS);
    timer.unref();
    return { done: () => clearInterval(timer) };
  }
  const draw = () => stderr.write(`\r\x1b[2K${label}… ${seconds()} s`);
  draw();
  const timer = setInterval(draw, 1000);
  timer.unref();
  return {
    done() {
      clearInterval(timer);
      draw();
      stderr.write("\n");
    },
  };
}
