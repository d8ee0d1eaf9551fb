/**
 * A baseline server of bench/support/baseline-server.ts in a child process of its own (so it
 * never shares an event loop with the load generator), started and resolved once it listens.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { printedByChild } from "./child-output.ts";

const BASELINE = fileURLToPath(new URL("./baseline-server.ts", import.meta.url));

/** `kind` is baseline-server.ts's first argument (`bare`, `express-validator`); `modelsFile` the GET /models body it serves. */
export async function startBaseline(
  kind: string,
  modelsFile: string,
): Promise<{ origin: string; pid: number; close(): void }> {
  const child = spawn(process.execPath, [BASELINE, kind, modelsFile], { stdio: ["ignore", "pipe", "inherit"] });
  const origin = await printedByChild(child, /Listening on (http:\/\/\S+)/, `baseline ${kind}`);
  return { origin, pid: child.pid as number, close: () => child.kill("SIGKILL") };
}
