/**
 * An open-loop run (support/open-loop.ts) in a load generator process of its own, started
 * for that run: a warm run at the same rate, then the measured one, whose result the child
 * prints as JSON.
 *
 * Why a fresh process: a generator's own garbage collection stalls its event loop, and the
 * requests it then sends or reads late count as the server's latency. Measured on
 * 2026-11-27 with event-loop and GC probes in every process of bench/gateway.ts: a 12.5 ms
 * mark-compact in the long-lived generator (the benchmark's own process) about 105 s into a
 * run, in the window of a server whose own loop had no stall over 6 ms, read as that
 * server's p99.9 (16–23 ms in six runs). A generator that lives for one warm and one
 * measured run (35 s by default) has not reached its first mark-compact.
 *
 *   node bench/support/open-loop-process.ts '<OpenLoopOptions as JSON>' <warm seconds>
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { printedByChild } from "./child-output.ts";
import { openLoop, type OpenLoopOptions, type OpenLoopResult } from "./open-loop.ts";

const SELF = fileURLToPath(import.meta.url);
const RESULT_PREFIX = "open-loop result ";

/** `openLoop(options)` after `warmSeconds` at the same rate, both in a child process started for them. */
export async function openLoopInChild(options: OpenLoopOptions, warmSeconds: number): Promise<OpenLoopResult> {
  const child = spawn(process.execPath, [SELF, JSON.stringify(options), String(warmSeconds)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const closed = once(child, "close");
  const result = await printedByChild(child, new RegExp(`${RESULT_PREFIX}(.+)\n`), "the load generator");
  await closed;
  return JSON.parse(result) as OpenLoopResult;
}

if (process.argv[1] === SELF) {
  const options = JSON.parse(process.argv[2] as string) as OpenLoopOptions;
  const warmSeconds = Number(process.argv[3]);
  if (warmSeconds > 0) await openLoop({ ...options, seconds: warmSeconds });
  console.log(RESULT_PREFIX + JSON.stringify(await openLoop(options)));
}
