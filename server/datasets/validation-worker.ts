/**
 * Worker thread entry: checks the versions' files it is sent, one at a time, and posts each
 * ValidationRecord back. Validation parses (and tokenizes) every row, seconds of CPU for a
 * large file; in a worker it never stalls the requests the main thread serves. The worker
 * stays for the next file (validation-pool.ts), so the tokenizer is loaded once, not per file.
 */
import { parentPort } from "node:worker_threads";
import { checkVersionFile } from "./check-file.ts";
import type { ValidationTask, WorkerOutcome } from "./validation-pool.ts";

parentPort?.on("message", async ({ file }: ValidationTask) => {
  let outcome: WorkerOutcome;
  try {
    outcome = { ok: true, result: await checkVersionFile(file) };
  } catch (error) {
    outcome = { ok: false, message: (error as Error).message };
  }
  parentPort?.postMessage(outcome);
});
