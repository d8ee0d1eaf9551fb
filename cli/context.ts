/**
 * What every command needs: the settings (flags first, then the environment, then the
 * defaults), the typed client built from them, and the output conventions (results on
 * stdout, progress and prompts on stderr, `--json` for scripts).
 */
import { createInterface } from "node:readline/promises";
import { styleText } from "node:util";
import { createClient, type ApiClient } from "../client/index.ts";
import { CliError, EXIT, usageError } from "./errors.ts";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1";

/** The environment variables the CLI reads (docs/cli.md). */
export const ENV = {
  baseUrl: "SERVICE_BASE_URL",
  apiKey: "SERVICE_API_KEY",
  account: "SERVICE_ACCOUNT",
} as const;

/** The global options, as commander parses them. */
export interface GlobalOptions {
  baseUrl?: string;
  apiKey?: string;
  account?: string;
  json?: boolean;
  debug?: boolean;
  color?: boolean;
}

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export function processIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}

/**
 * The account a key belongs to, read from the key's own text: keys are
 * `sk-<account>-<64 hex digits>`, and the development seed's demo keys
 * `sk-dev-<account>-<32 zeros>`. Only a convenience (the service never reads it); `--account`
 * or SERVICE_ACCOUNT override it.
 */
export function accountFromKey(key: string): string | null {
  const match = /^sk-(.+)-([0-9a-f]+)$/.exec(key);
  if (!match) return null;
  const [, middle, secret] = match as unknown as [string, string, string];
  if (secret.length === 32 && middle.startsWith("dev-")) return middle.slice(4) || null;
  return secret.length === 64 ? middle : null;
}

export class Context {
  readonly options: GlobalOptions;
  readonly io: Io;
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly json: boolean;
  readonly debug: boolean;
  #client: ApiClient | undefined;
  #account: string | undefined;

  constructor(options: GlobalOptions, io: Io) {
    this.options = options;
    this.io = io;
    this.baseUrl = (options.baseUrl ?? io.env[ENV.baseUrl] ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.apiKey = options.apiKey ?? io.env[ENV.apiKey] ?? undefined;
    this.json = options.json === true;
    this.debug = options.debug === true;
  }

  /** The typed client; a key is required for every call the CLI makes. */
  get client(): ApiClient {
    if (this.#client) return this.#client;
    if (!this.apiKey)
      throw usageError(`no API key: pass --api-key or set ${ENV.apiKey}`, [
        `demo key of the development seed: ${ENV.apiKey}=sk-dev-acme-00000000000000000000000000000000`,
      ]);
    const client = createClient({
      baseUrl: this.baseUrl,
      apiKey: this.apiKey,
      headers: { "User-Agent": "inference-toolkit-cli/0.2.0" },
      retry: {
        onRetry: (info) =>
          this.note(
            `retrying ${info.method} ${info.url} in ${Math.round(info.delayMs)} ms (${typeof info.cause === "number" ? `HTTP ${info.cause}` : `connection failed: ${info.cause.systemCode ?? info.cause.message}`})`,
          ),
      },
    });
    if (this.debug) {
      client.use({
        onRequest: ({ request }) => {
          this.io.stderr.write(`[debug] → ${request.method} ${request.url}\n`);
          return undefined;
        },
        onResponse: ({ request, response }) => {
          this.io.stderr.write(
            `[debug] ← ${response.status} ${request.method} ${request.url} (x-request-id: ${response.headers.get("x-request-id") ?? "none"})\n`,
          );
          return undefined;
        },
      });
    }
    this.#client = client;
    return client;
  }

  /** The account in `/accounts/{account}` paths: --account, SERVICE_ACCOUNT, or the one the key names. */
  get account(): string {
    if (this.#account) return this.#account;
    const given = this.options.account ?? this.io.env[ENV.account];
    const account = given || (this.apiKey ? accountFromKey(this.apiKey) : null);
    if (!account)
      throw usageError(`no account: pass --account or set ${ENV.account} (the key does not name its account)`);
    this.#account = account;
    return account;
  }

  /** How the user runs this tool, for the commands suggested in hints. */
  get invocation(): string {
    return this.io.env.npm_lifecycle_event === "cli" ? "npm run cli --" : "itk";
  }

  /** Whether stdout is a terminal and output is for people (no --json). */
  get interactive(): boolean {
    return !this.json && this.io.stdout.isTTY === true;
  }

  /** Whether progress bars and live views may be drawn (on stderr, a terminal). */
  get live(): boolean {
    return !this.json && this.io.stderr.isTTY === true;
  }

  /** A line of the result, on stdout. */
  print(line = ""): void {
    this.io.stdout.write(line + "\n");
  }

  /** The result as JSON on stdout (`--json`). */
  printJson(value: unknown): void {
    this.io.stdout.write(JSON.stringify(value, null, 2) + "\n");
  }

  /** A note for people on stderr (progress, what happens next); silent with --json. */
  note(line: string): void {
    if (!this.json) this.io.stderr.write(line + "\n");
  }

  /** Text styled when the stream is a colour terminal and colour is not turned off. */
  style(format: Parameters<typeof styleText>[0], text: string, stream: "stdout" | "stderr" = "stdout"): string {
    const target = this.io[stream];
    if (this.options.color === false || this.io.env.NO_COLOR || target.isTTY !== true) return text;
    return styleText(format, text, { validateStream: false });
  }

  /**
   * Asks a yes/no question on the terminal; `yes` (from --yes) answers it. Without a
   * terminal to ask on, refuses rather than guess (exit 2).
   */
  async confirm(question: string, yes: boolean | undefined): Promise<void> {
    if (yes) return;
    if (this.io.stdin.isTTY !== true || this.json) {
      throw usageError(`${question.replace(/\?$/, "")}: refusing without --yes, since there is no terminal to ask on`, [
        "pass --yes to go ahead",
      ]);
    }
    const rl = createInterface({ input: this.io.stdin, output: this.io.stderr });
    try {
      const answer = (await rl.question(`${question} [y/N] `)).trim().toLowerCase();
      if (answer !== "y" && answer !== "yes") throw new CliError("cancelled: nothing was done", EXIT.DECLINED);
    } finally {
      rl.close();
    }
  }
}
