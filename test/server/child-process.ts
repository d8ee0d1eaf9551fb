/**
 * The real server as a child process (`node server/main.ts`), for tests that kill it or
 * measure its memory. Every child still running when the test file ends is killed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterAll } from "vitest";
import { fileURLToPath } from "node:url";
import { storeEnvFor } from "../../harness/test-store.ts";

const MAIN = fileURLToPath(new URL("../../server/main.ts", import.meta.url));
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

/** Starts the server on DATA_DIR (any free port) and resolves with its API base URL once it listens. */
export async function startChild(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; baseUrl: string }> {
  // LOG_LEVEL warn: the child's stderr is the test's; no access line per request there.
  const { child, baseUrl } = await spawnServer(
    { ...(await storeEnvFor(dataDir)), PORT: "0", HOST: "127.0.0.1", NODE_ENV: "", LOG_LEVEL: "warn", ...env },
    "inherit",
  );
  return { child, baseUrl };
}

/**
 * Spawns `node server/main.ts` with `env` over this process's environment and resolves once
 * it listens. Its stderr is this process's (`inherit`) or kept with its stdout (`keep`), as
 * `log()` returns it.
 */
export async function spawnServer(
  env: Record<string, string>,
  stderr: "inherit" | "keep",
): Promise<{ child: ChildProcess; baseUrl: string; log(): string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", stderr === "keep" ? "pipe" : "inherit"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  let output = "";
  const listening = new Promise<string>((resolve, reject) => {
    // Read stdout for as long as the child lives, so its later writes never hit a closed pipe.
    child.stdout!.on("data", (chunk) => {
      output += String(chunk);
      const origin = /Listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (origin) resolve(origin);
    });
    child.stderr?.on("data", (chunk) => (output += String(chunk)));
    child.once("exit", (code) => reject(new Error(`the server exited (${code}) before listening: ${output}`)));
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    return { child, baseUrl: `${await listening}/v1`, log: () => output };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `script` (relative to the repository: `server/main.ts`, `server/worker.ts`, …) with
 * `env` over this process's environment until it exits, for tests of a process that must
 * refuse to start; one still running after 20 s is killed, and the test sees no exit code.
 */
export async function runUntilExit(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL(`../../${script}`, import.meta.url)), ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += String(chunk)));
  child.stderr.on("data", (chunk) => (stderr += String(chunk)));
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const [code] = (await once(child, "exit")) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * Sends `signal` and resolves once the process is gone. SIGKILL (the default) is a crash: no
 * shutdown code runs; SIGTERM lets the process shut down.
 */
export async function kill(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill(signal);
  await exited;
}
