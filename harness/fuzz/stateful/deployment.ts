/**
 * The processes the stateful fuzzer drives, as real processes so that one can be killed
 * with SIGKILL at any step:
 * - `sqlite`: one server (`node server/main.ts`) that also trains, on SQLite in a temp DATA_DIR;
 * - `postgres`: two servers (RUN_JOBS=0) and one training worker (`node server/worker.ts`)
 *   on one throwaway PostgreSQL cluster and one DATA_DIR.
 * The fuzzer itself opens the same store, as the admin command does, for admin changes
 * (server/admin/commands.ts) and for the invariants that read the tables.
 *
 * Deliberately free of node:test, so that scripts/fuzz-stateful.ts can use it too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { openStore } from "../../../server/store/open.ts";
import type { Store } from "../../../server/store/store.ts";
import { startCluster, type PgCluster } from "../../postgres-cluster.ts";
import { freshSchemaUrl } from "../../test-store.ts";

export type StoreKind = "sqlite" | "postgres";

const MAIN = fileURLToPath(new URL("../../../server/main.ts", import.meta.url));
const WORKER = fileURLToPath(new URL("../../../server/worker.ts", import.meta.url));

/** Uploads above this are 413 MEDIA_TOO_LARGE: small, so that the "huge" upload command is cheap. */
export const MAX_UPLOAD_BYTES = 3 * 1024 * 1024;
/** How long a dead process's job stays claimed: short, so a job resumes soon after a kill. */
const LEASE_MS = "1500";

interface Child {
  role: "server" | "worker";
  process: ChildProcess;
  /** The API base URL of a server. */
  baseUrl?: string;
  output: string;
}

export interface Deployment {
  kind: StoreKind;
  dataDir: string;
  /** API base URLs of the servers, in a fixed order (a restarted server keeps its slot). */
  baseUrls(): string[];
  /** The store the servers use, opened in this process like the admin command opens it. */
  store: Store;
  /** One read-only query over the store's tables (the same SQL on both stores: `?` placeholders). */
  query(sql: string, values?: (string | number)[]): Promise<Record<string, unknown>[]>;
  /** SIGKILL a process (a server by slot, or the worker) and start it again on the same data; resolves once it serves. */
  crashAndRestart(which: number | "worker"): Promise<void>;
  /** Everything the processes printed on stderr that looks like a failure, for reports. */
  failureLog(): string[];
  /**
   * For a request that got no answer: whether the server at `baseUrl` is still running, and
   * the last lines it logged for `path` (its request log says whether the request reached it).
   */
  diagnose(baseUrl: string, path: string): Promise<string>;
  close(): Promise<void>;
}

export async function startDeployment(kind: StoreKind): Promise<Deployment> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "stateful-fuzz-"));
  let cluster: PgCluster | undefined;
  const children: Child[] = [];
  let store: Store | undefined;
  let pgPool: pg.Pool | undefined;
  let sqlite: DatabaseSync | undefined;
  const closeAll = async () => {
    for (const child of children) await killChild(child);
    await store?.close().catch(() => undefined);
    await pgPool?.end().catch(() => undefined);
    sqlite?.close();
    cluster?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const baseEnv: Record<string, string> = {
      DATA_DIR: dataDir,
      JOB_LEASE_MS: LEASE_MS,
      JOB_POLL_MS: "100",
      MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES),
    };
    if (kind === "postgres") {
      cluster = await startCluster();
      baseEnv.DATABASE_URL = await freshSchemaUrl(cluster.url);
    }
    const serverEnv = { ...baseEnv, RUN_JOBS: kind === "postgres" ? "0" : "1" };
    const serverCount = kind === "postgres" ? 2 : 1;
    // The first server migrates and seeds; the others start once it has.
    children.push(await startChild("server", serverEnv));
    for (let i = 1; i < serverCount; i++) children.push(await startChild("server", serverEnv));
    if (kind === "postgres") children.push(await startChild("worker", baseEnv));
    store = await openStore({ dataDir, databaseUrl: baseEnv.DATABASE_URL });
    let query: Deployment["query"];
    if (kind === "postgres") {
      pgPool = new pg.Pool({ connectionString: baseEnv.DATABASE_URL, max: 2 });
      const pool = pgPool;
      query = async (sql, values = []) => {
        let n = 0;
        return (
          await pool.query(
            sql.replace(/\?/g, () => `$${++n}`),
            values,
          )
        ).rows as Record<string, unknown>[];
      };
    } else {
      const db = new DatabaseSync(path.join(dataDir, "service.db"), { readOnly: true });
      db.exec("PRAGMA busy_timeout = 5000");
      sqlite = db;
      query = async (sql, values = []) => db.prepare(sql).all(...values) as Record<string, unknown>[];
    }
    const env = (role: Child["role"]) => (role === "server" ? serverEnv : baseEnv);
    return {
      kind,
      dataDir,
      store,
      query,
      baseUrls: () => children.filter((c) => c.role === "server").map((c) => c.baseUrl as string),
      async crashAndRestart(which) {
        const index =
          which === "worker"
            ? children.findIndex((c) => c.role === "worker")
            : children.findIndex(
                (c, i) =>
                  c.role === "server" && children.slice(0, i).filter((s) => s.role === "server").length === which,
              );
        const child = children[index];
        if (child === undefined) throw new Error(`no process ${which} to crash`);
        await killChild(child);
        children[index] = await startChild(child.role, env(child.role));
      },
      failureLog: () =>
        children.flatMap((c) =>
          c.output.split("\n").filter((line) => /"level":"error"|Error:|uncaught|FATAL/i.test(line)),
        ),
      async diagnose(baseUrl, requestPath) {
        // The request log is written asynchronously: a moment for the lines to arrive.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const child = children.find((c) => c.baseUrl === baseUrl);
        if (child === undefined) return `no process serves ${baseUrl} any more (restarted after a kill -9)`;
        const { exitCode, signalCode, pid } = child.process;
        const state =
          exitCode === null && signalCode === null
            ? `the server (pid ${pid}) is running`
            : `the server (pid ${pid}) has exited (${exitCode ?? signalCode})`;
        const pathOnly = requestPath.replace(/\?.*$/, "");
        const lines = child.output.split("\n").filter((line) => line.includes(`"path":"/v1${pathOnly}"`));
        return `${state}; its last log lines for that path:\n      ${lines.slice(-3).join("\n      ") || "(none)"}`;
      },
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** Starts a server (resolves once it listens) or a worker (once it polls). */
async function startChild(role: Child["role"], env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, [role === "server" ? MAIN : WORKER], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", NODE_ENV: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const record: Child = { role, process: child, output: "" };
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      record.output += String(chunk);
      const origin = /Listening on (http:\/\/\S+)/.exec(record.output)?.[1];
      if (role === "server" && origin) {
        record.baseUrl = `${origin}/v1`;
        resolve();
      }
      if (role === "worker" && /^Worker /m.test(record.output)) resolve();
    });
    // Kept, not printed: the log of a long run is the report's business.
    child.stderr!.on("data", (chunk) => {
      record.output = (record.output + String(chunk)).slice(-200_000);
    });
    child.once("exit", (code) =>
      reject(new Error(`the ${role} exited (${code}) before it was ready: ${record.output}`)),
    );
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    await ready;
  } finally {
    clearTimeout(timer);
  }
  return record;
}

async function killChild(child: Child): Promise<void> {
  const p = child.process;
  if (p.exitCode !== null || p.signalCode !== null) return;
  const gone = once(p, "exit");
  p.kill("SIGKILL");
  await gone;
}
