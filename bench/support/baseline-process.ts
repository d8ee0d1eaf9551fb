/**
 * A baseline server of bench/support/baseline-server.ts in a child process of its own (so it
 * never shares an event loop with the load generator), started and resolved once it listens.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { printedByChild } from "./child-output.ts";

const BASELINE = fileURLToPath(new URL("./baseline-server.ts", import.meta.url));

/**
 * `kind` is baseline-server.ts's first argument (`bare`, `express-validator`, either with
 * `-gateway`); `modelsFile` the GET /models body it serves; a gateway's upstream base URL.
 */
export async function startBaseline(
  kind: string,
  modelsFile: string,
  upstreamBaseUrl?: string,
): Promise<{ origin: string; pid: number; close(): void }> {
  const args = [BASELINE, kind, modelsFile, ...(upstreamBaseUrl === undefined ? [] : [upstreamBaseUrl])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  const origin = await printedByChild(child, /Listening on (http:\/\/\S+)/, `baseline ${kind}`);
  return { origin, pid: child.pid as number, close: () => child.kill("SIGKILL") };
}
