/**
 * Helpers of the CLI tests: the reference server (harness/test-server.ts) with the demo
 * accounts' rate limits lifted (a watch polls often), the CLI run as a user runs it (a
 * child process with the settings in its environment), tmux sessions that a test types
 * into and reads the screen of, and where screenshots go (Chromium: test/support/chromium.ts).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const MAIN = path.join(ROOT, "cli/main.ts");
/** CI keeps these as artefacts (reports/ is git-ignored). */
export const SCREENSHOTS = path.join(ROOT, "reports/screenshots");

export async function startCliServer(): Promise<TestServer> {
  const server = await startTestServer({ fineTuning: { pollMs: 50 } });
  for (const account of ["acme", "globex"]) await server.store.accounts.update(account, { requestsPerMinute: null });
  return server;
}

/**
 * The environment a user of the demo account `account` would set, and where the tool
 * remembers the jobs it created (`latest`): beside the server's data, removed with it,
 * never the home directory of whoever runs the tests.
 */
export function userEnv(server: TestServer, account = "acme"): Record<string, string> {
  return {
    SERVICE_BASE_URL: server.baseUrl,
    SERVICE_API_KEY: server.keys[account] as string,
    NO_COLOR: "1",
    XDG_STATE_HOME: path.join(server.dataDir, "..", "cli-state"),
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node cli/main.ts …args` with the given environment (added to a clean one) and input. */
export function cli(
  args: string[],
  options: { env?: Record<string, string>; input?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? os.tmpdir(),
        ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
        ...options.env,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/**
 * `node cli/main.ts …args | reader` in bash, through a real pipe: the tool's stderr, and its
 * own exit status (`PIPESTATUS[0]`), which bash prints last on stderr.
 */
export function piped(args: string[], reader: string, env: Record<string, string>): Promise<CliResult> {
  const quoted = [process.execPath, MAIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", `${quoted} | ${reader}; echo "exit \${PIPESTATUS[0]}" >&2`], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? os.tmpdir(), ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", () => {
      const status = /exit (\d+)\n$/.exec(stderr);
      resolve({ code: status ? Number(status[1]) : null, stdout, stderr: stderr.replace(/exit \d+\n$/, "") });
    });
  });
}

export function json<T = any>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${result.code}):\n${result.stdout}\n--- stderr:\n${result.stderr}`);
  }
}

/**
 * `--json jobs create --yes` of a job on tiny-chat from `dataset` to `outputModel`, with
 * `options` (more flags) after: the job the CLI prints.
 */
export async function createJob(
  env: Record<string, string>,
  dataset: string,
  outputModel: string,
  ...options: string[]
): Promise<any> {
  const args = ["--json", "jobs", "create", "--yes", "--base-model", "tiny-chat", "--dataset", dataset];
  return json(await cli([...args, "--output-model", outputModel, ...options], { env }));
}

export function scratchDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------
// tmux
// ---------------------------------------------------------------------------

export const TMUX = spawnSync("tmux", ["-V"], { encoding: "utf8" }).status === 0;
export const NO_TMUX =
  !TMUX &&
  "tmux is not installed (scripts/install-system-packages.sh installs it; REQUIRE_TMUX=1 makes this a failure)";

/**
 * A terminal a test types into: one tmux session on a private server socket, running a
 * plain bash. `run` types a command line and Enter, as a person would.
 */
export class Terminal {
  readonly socket: string;
  readonly name = "cli";
  readonly width: number;
  readonly height: number;

  private constructor(socket: string, width: number, height: number) {
    this.socket = socket;
    this.width = width;
    this.height = height;
  }

  static async open(env: Record<string, string>, size = { width: 120, height: 45 }, cwd = ROOT): Promise<Terminal> {
    const socket = `itk-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const t = new Terminal(socket, size.width, size.height);
    const vars = {
      ...env,
      PS1: "$ ",
      TERM: "xterm-256color",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      HOME: process.env.HOME ?? os.tmpdir(),
    };
    t.tmux([
      "new-session",
      "-d",
      "-s",
      t.name,
      "-x",
      String(size.width),
      "-y",
      String(size.height),
      "-c",
      cwd,
      ...Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
      "bash --noprofile --norc",
    ]);
    // bash ignores an inherited PS1 here; set it as a person's rc file would.
    t.run("PS1='$ '; clear");
    await t.waitFor(/^\$\s*$/m, 10_000);
    return t;
  }

  tmux(args: string[]): string {
    const result = spawnSync("tmux", ["-L", this.socket, ...args], { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`tmux ${args.join(" ")} failed: ${result.stderr}`);
    return result.stdout;
  }

  /** Types the text literally (no key names), without Enter. */
  type(text: string): void {
    this.tmux(["send-keys", "-t", this.name, "-l", text]);
  }

  /** Presses keys by name: Enter, C-c, C-d. */
  press(...keys: string[]): void {
    this.tmux(["send-keys", "-t", this.name, ...keys]);
  }

  /** Types a command line and presses Enter. */
  run(commandLine: string): void {
    this.type(commandLine);
    this.press("Enter");
  }

  /** The screen as text (what a person sees; no colour codes, no trailing spaces), scrollback included. */
  screen(history = 0): string {
    return this.tmux(["capture-pane", "-p", "-t", this.name, ...(history ? ["-S", String(-history)] : [])]);
  }

  /** Polls the screen until `pattern` is on it (or `check` returns true); returns that screen. */
  async waitFor(
    pattern: RegExp | ((screen: string) => boolean),
    timeoutMs = 30_000,
    onScreen?: (screen: string) => void,
  ): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    for (;;) {
      last = this.screen(200);
      onScreen?.(last);
      if (typeof pattern === "function" ? pattern(last) : pattern.test(last)) return last;
      if (Date.now() > deadline)
        throw new Error(`the screen never showed ${pattern} within ${timeoutMs} ms; it shows:\n${last}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  close(): void {
    spawnSync("tmux", ["-L", this.socket, "kill-server"]);
  }
}

/** The CLI as a user types it in a shell: absolute node (bash finds no `npm` here), the entry point, the arguments. */
export function commandLine(args: string): string {
  return `${process.execPath} ${MAIN} ${args}`;
}

/** Where a test saves a screenshot (reports/screenshots/, kept by CI). */
export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return path.join(SCREENSHOTS, name);
}
