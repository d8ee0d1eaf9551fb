/**
 * Real processes for the operations tests: `node server/main.ts` and `node server/worker.ts`
 * with their stderr log kept line by line (parsed as JSON), their stdout read for the
 * addresses they print, and a SIGTERM that resolves with the exit code. Every child still
 * running when the test file ends is killed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterAll } from "vitest";
import { fileURLToPath } from "node:url";
import { seedKeys } from "../../harness/test-server.ts";
import { storeEnvFor } from "../../harness/test-store.ts";

const MAIN = fileURLToPath(new URL("../../server/main.ts", import.meta.url));
const WORKER = fileURLToPath(new URL("../../server/worker.ts", import.meta.url));

const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

export interface OpsProcess {
  process: ChildProcess;
  /** Everything on stdout so far. */
  stdout(): string;
  /** Every stderr line so far, as written. */
  lines(): string[];
  /** The stderr lines that are JSON log entries. */
  entries(): Record<string, unknown>[];
  /** Resolves once a log entry matches, within `ms`. */
  waitForEntry(match: (entry: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
  /** Sends SIGTERM; resolves with the exit code once the process is gone. */
  terminate(): Promise<number | null>;
  kill(): Promise<void>;
}

export interface OpsServer extends OpsProcess {
  origin: string;
  baseUrl: string;
  /** The metrics listener's origin, when METRICS_PORT was given. */
  metricsOrigin?: string;
  keys: Record<string, string>;
}

function spawnLogged(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ proc: OpsProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, NODE_ENV: "", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  let stdout = "";
  let partial = "";
  const lines: string[] = [];
  child.stderr!.on("data", (chunk) => {
    partial += String(chunk);
    const complete = partial.split("\n");
    partial = complete.pop() ?? "";
    lines.push(...complete);
  });
  const entries = () =>
    lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const proc: OpsProcess = {
    process: child,
    stdout: () => stdout,
    lines: () => [...lines],
    entries,
    async waitForEntry(match, ms = 30_000) {
      const until = Date.now() + ms;
      for (;;) {
        const found = entries().find(match);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no such log entry within ${ms} ms; log:\n${lines.join("\n")}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async terminate() {
      if (exited()) return child.exitCode;
      const gone = once(child, "exit");
      child.kill("SIGTERM");
      const [code] = (await gone) as [number | null];
      return code;
    },
    async kill() {
      if (exited()) return;
      const gone = once(child, "exit");
      child.kill("SIGKILL");
      await gone;
    },
  };
  const started = new Promise<RegExpExecArray>((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      stdout += String(chunk);
      const match = ready.exec(stdout);
      if (match) resolve(match);
    });
    child.once("exit", (code) =>
      reject(new Error(`${script} exited (${code}) before it was ready:\n${stdout}\n${lines.join("\n")}${partial}`)),
    );
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return started.then(
    (match) => {
      clearTimeout(timer);
      return { proc, match };
    },
    (error) => {
      clearTimeout(timer);
      throw error;
    },
  );
}

/** `node server/main.ts` on DATA_DIR, any free port; with METRICS_PORT in env, waits for the metrics address too. */
export async function startOpsServer(dataDir: string, env: Record<string, string> = {}): Promise<OpsServer> {
  const ready =
    env.METRICS_PORT !== undefined
      ? /Listening on (http:\/\/\S+)[^\n]*\nMetrics at (http:\/\/\S+)\/metrics/
      : /Listening on (http:\/\/\S+)/;
  const { proc, match } = await spawnLogged(
    MAIN,
    { ...(await storeEnvFor(dataDir)), PORT: "0", HOST: "127.0.0.1", ...env },
    ready,
  );
  const origin = match[1] as string;
  return { ...proc, origin, baseUrl: `${origin}/v1`, metricsOrigin: match[2], keys: seedKeys() };
}

/** `node server/worker.ts` on DATA_DIR (SQLite, or TEST_STORE's PostgreSQL schema); resolves once it polls. */
export async function startOpsWorker(dataDir: string, env: Record<string, string> = {}): Promise<OpsProcess> {
  const { proc } = await spawnLogged(WORKER, { ...(await storeEnvFor(dataDir)), ...env }, /Worker \d+ is training/);
  return proc;
}
