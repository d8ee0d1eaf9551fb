/**
 * A child-process server (child-process.ts) with the demo keys and a stop/kill pair, for
 * tests that restart the server on the same data directory.
 */
import type { ChildProcess } from "node:child_process";
import { kill, startChild } from "./child-process.ts";
import { seedKeys } from "../../harness/test-server.ts";

export interface ChildServer {
  origin: string;
  baseUrl: string;
  keys: Record<string, string>;
  process: ChildProcess;
  /** SIGKILL: no shutdown code runs. */
  kill(): Promise<void>;
  /** SIGTERM, and wait for the process to end. */
  stop(): Promise<void>;
}

export async function startChildServer(dataDir: string, env: Record<string, string> = {}): Promise<ChildServer> {
  const { child, baseUrl } = await startChild(dataDir, env);
  return {
    origin: baseUrl.replace(/\/v1$/, ""),
    baseUrl,
    keys: seedKeys(),
    process: child,
    kill: () => kill(child),
    stop: () => kill(child, "SIGTERM"),
  };
}
