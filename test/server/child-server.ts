/**
 * `node server/main.ts` as a child process, as an operator runs it, so tests can kill it
 * with SIGKILL and start it again on the same data directory.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { seedKeys } from "./harness.ts";

const MAIN = fileURLToPath(new URL("../../server/main.ts", import.meta.url));

export interface ChildServer {
  origin: string;
  baseUrl: string;
  keys: Record<string, string>;
  process: ChildProcess;
  /** SIGKILL: no shutdown code runs. */
  kill(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

export async function startChildServer(dataDir: string, env: Record<string, string> = {}): Promise<ChildServer> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const origin = await new Promise<string>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`the server exited (${code}) before listening: ${output}`)));
  });
  child.stdout?.resume();
  const exited = once(child, "exit");
  return {
    origin,
    baseUrl: `${origin}/v1`,
    keys: seedKeys(),
    process: child,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
