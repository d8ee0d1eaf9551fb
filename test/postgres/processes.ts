/**
 * Real processes for the scale-out tests: servers (`node server/main.ts`, through
 * test/server/child-process.ts) and training workers (`node server/worker.ts`), all on
 * one PostgreSQL and one DATA_DIR. Workers' JSON event lines (claimed / released) are
 * collected, so a test can say which worker ran which job and how often.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll } from "vitest";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { issueApiKey } from "../../server/store/api-keys.ts";
import { openPostgresStore } from "../../server/store/postgres.ts";
import type { NewAccount } from "../../server/store/store.ts";
import { kill, spawnServer } from "../server/child-process.ts";
import { freshSchemaUrl, withSearchPath } from "../../harness/test-store.ts";
import { startCluster, type PgCluster } from "../../harness/postgres-cluster.ts";

const WORKER = fileURLToPath(new URL("../../server/worker.ts", import.meta.url));

export interface WorkerEvent {
  worker: number;
  at: string;
  type: "claimed" | "released";
  job: string;
  resumed?: boolean;
  outcome?: "done" | "stopped";
}

export interface WorkerProcess {
  process: ChildProcess;
  pid: number;
  events: WorkerEvent[];
  /** Everything it printed, for failure messages. */
  output(): string;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

/** Starts a worker and resolves once it is polling the queue. */
export async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [WORKER], {
    env: { ...process.env, NODE_ENV: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  const events: WorkerEvent[] = [];
  let output = "";
  let partial = "";
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      output += String(chunk);
      partial += String(chunk);
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.startsWith("Worker ")) resolve();
        if (line.startsWith("{")) events.push(JSON.parse(line) as WorkerEvent);
      }
    });
    child.stderr!.on("data", (chunk) => (output += String(chunk)));
    child.once("exit", (code) => reject(new Error(`the worker exited (${code}) before it started: ${output}`)));
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    await ready;
  } finally {
    clearTimeout(timer);
  }
  return {
    process: child,
    pid: child.pid as number,
    events,
    output: () => output,
    kill: () => kill(child),
    stop: () => kill(child, "SIGTERM"),
  };
}

/**
 * A server process (`node server/main.ts`) whose log is kept rather than printed (an outage
 * logs every 503); resolves with its API base URL once it listens.
 */
export async function startQuietServer(
  env: Record<string, string>,
): Promise<{ baseUrl: string; log(): string; kill(): Promise<void> }> {
  const { child, baseUrl, log } = await spawnServer({ PORT: "0", HOST: "127.0.0.1", NODE_ENV: "", ...env }, "keep");
  return { baseUrl, log, kill: () => kill(child) };
}

/** A PostgreSQL for one test file: a fresh schema on TEST_DATABASE_URL, or on a cluster of its own. */
export async function testDatabase(): Promise<{ url: string; cluster?: PgCluster; close(): Promise<void> }> {
  if (process.env.TEST_DATABASE_URL) {
    const url = await freshSchemaUrl(process.env.TEST_DATABASE_URL);
    return { url, close: async () => undefined };
  }
  const cluster = await startCluster();
  // Its own schema anyway, so the URL has the same shape either way.
  const url = await freshSchemaUrl(cluster.url);
  return { url, cluster, close: async () => cluster.destroy() };
}

/** Creates an account with no rate limit and a key, straight in the store; returns the key. */
export async function createAccount(url: string, dataDir: string, account: NewAccount): Promise<string> {
  const store = await openPostgresStore(url, dataDir);
  try {
    await store.accounts.create(account);
    return (await issueApiKey(store, account.id)).secret;
  } finally {
    await store.close();
  }
}

/** One query against the test schema, for counts the API does not show. */
export async function sql(url: string, text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

export { withSearchPath };
