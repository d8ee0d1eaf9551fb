/**
 * Worker thread entry: checks one version's file and posts the ValidationRecord back.
 * Validation parses (and tokenizes) every row, seconds of CPU for a large file; in a
 * worker it never stalls the requests the main thread serves.
 */
import { parentPort, workerData } from "node:worker_threads";
import { checkVersionFile } from "./check-file.ts";

const { file } = workerData as { file: string };
try {
  parentPort?.postMessage({ ok: true, result: await checkVersionFile(file) });
} catch (error) {
  parentPort?.postMessage({ ok: false, message: (error as Error).message });
}
