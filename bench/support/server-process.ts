/**
 * The reference server as a child process (as `npm start` runs it) for benchmarks: its
 * own event loop on its own core, and its memory readable from /proc. Routes every
 * platform model to the given upstream and lifts the demo account's rate limit.
 */
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { printedByChild } from "./child-output.ts";

export const ACME_KEY = "sk-dev-acme-00000000000000000000000000000000";
const ADMIN = fileURLToPath(new URL("../../server/admin/cli.ts", import.meta.url));
const MAIN = fileURLToPath(new URL("../../server/main.ts", import.meta.url));

export interface BenchServer {
  /** The directory holding its routing file and data directory. */
  dir: string;
  baseUrl: string;
  pid: number;
  /** Resident memory now, in bytes. */
  rss(): number;
  close(): Promise<void>;
}

/**
 * Starts a server on a fresh data directory, or, with `shared`, a second process on the
 * first one's data directory (SQLite in WAL mode is shared by processes on one host).
 */
export async function startBenchServer(
  upstreamBaseUrl: string,
  env: Record<string, string> = {},
  shared?: BenchServer,
): Promise<BenchServer> {
  if (shared) return spawnServer(shared.dir, env, false);
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-server-"));
  const routing = path.join(dir, "routing.json");
  writeFileSync(
    routing,
    JSON.stringify({
      version: "bench",
      providers: { upstream: { type: "openai-compatible", baseUrl: upstreamBaseUrl, model: "m" } },
      models: { "tiny-chat": { primary: "upstream", standby: [] } },
      contentPolicy: { blockedInputTerms: [], blockedOutputTerms: [] },
    }),
  );
  const server = await spawnServer(dir, env, true);
  const dataDir = path.join(dir, "data");
  // The demo account allows 600 requests a minute; a benchmark sends that many in a second.
  execFileSync(process.execPath, [ADMIN, "limits", "set", "acme", "--rpm", "none", "--budget", "none"], {
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: "ignore",
  });
  execFileSync(process.execPath, [ADMIN, "balance", "set", "acme", "1000000.00"], {
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: "ignore",
  });
  return server;
}

async function spawnServer(dir: string, env: Record<string, string>, owner: boolean): Promise<BenchServer> {
  const dataDir = path.join(dir, "data");
  const routing = path.join(dir, "routing.json");
  const child = spawn(process.execPath, [MAIN], {
    // LOG_LEVEL warn: no access line per request on the terminal (its cost is bench/ops-overhead.ts's to measure).
    env: {
      ...process.env,
      LOG_LEVEL: "warn",
      DATA_DIR: dataDir,
      PORT: "0",
      HOST: "127.0.0.1",
      ROUTING_FILE: routing,
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  const baseUrl = `${await printedByChild(child, /Listening on (http:\/\/\S+)/, "the server")}/v1`;
  return {
    dir,
    baseUrl,
    pid: child.pid as number,
    rss() {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    },
    async close() {
      child.kill("SIGKILL");
      await exited;
      if (owner) rmSync(dir, { recursive: true, force: true });
    },
  };
}
