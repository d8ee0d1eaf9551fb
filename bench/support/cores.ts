/**
 * Pinning for benchmarks on a small machine: the process measured on a core of its own, the
 * load generator (this process, with anything it runs in-process) on another, with `taskset`
 * (util-linux). Unpinned, on 2 cores, the scheduler moves the server, the generator and
 * V8's helper threads between cores as it sees fit, and how much each server gets differs
 * from process to process: two identical servers measured one after the other differed by
 * up to 14 % in CPU per request (bench/ops-overhead.ts --control; 25 % with one pair of
 * processes throughout). Pinned, the same A/A comparison stays within about ±5 %.
 *
 * Pinning needs Linux, `taskset` and at least two cores; without them `pinning()` says so
 * and the benchmarks run unpinned, as before.
 */
import { execFileSync } from "node:child_process";
import os from "node:os";

/** The core the load generator runs on, and the one the measured processes share (one at a time under load). */
export const GENERATOR_CORE = 0;
export const MEASURED_CORE = 1;

let available: boolean | undefined;

/** Whether processes can be pinned here (Linux, taskset, two cores or more). */
export function pinning(): boolean {
  available ??= process.platform === "linux" && os.availableParallelism() >= 2 && tasksetRuns();
  return available;
}

function tasksetRuns(): boolean {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Pins every thread of `pid` to `core` (threads it starts later inherit it); nothing when pinning is not available. */
export function pin(pid: number, core: number): void {
  if (pinning()) execFileSync("taskset", ["-a", "-cp", String(core), String(pid)], { stdio: "ignore" });
}
