/**
 * Exit codes and error reporting. Scripts branch on the exit code; people read the
 * message: the service's error code, its message and the request id to quote, never a
 * stack trace (`--debug` adds it).
 */
import { APIConnectionError, ApiError, APIUserAbortError, WaitTimeoutError } from "../client/index.ts";

/**
 * The exit codes (docs/cli.md lists them). One per kind of outcome a script acts on
 * differently: fix the command (2), fix the key or permissions (3), fix the name (4),
 * fix the request (5), pay or wait (6), retry later (7), the work itself failed (8), it
 * did not finish in time (9), a person said no (10).
 */
export const EXIT = {
  OK: 0,
  /** Anything unexpected: a bug, a file that cannot be read or written. */
  ERROR: 1,
  /** Wrong command line: unknown command or option, missing argument, bad value. */
  USAGE: 2,
  /** 401 or 403: the key is wrong, the account is suspended, or the key may not do this. */
  AUTH: 3,
  /** 404: no such dataset, job or model. */
  NOT_FOUND: 4,
  /** 400, 405, 409, 413: the service refused the request as sent (bad field, state conflict, too large). */
  REJECTED: 5,
  /** 402 or 429: balance, payment method, budget or rate limit. */
  LIMITED: 6,
  /** 5xx or no answer at all (connection refused, timeout): try again later. */
  UNAVAILABLE: 7,
  /** The command ran but its outcome failed: dataset validation FAILED, job FAILED/CANCELLED/EXPIRED, conformance failures. */
  FAILED: 8,
  /** A wait (`--timeout`) ran out before the dataset or job finished. */
  TIMEOUT: 9,
  /** The confirmation prompt was answered no. */
  DECLINED: 10,
  /** Interrupted with Ctrl-C. */
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI itself reports: a message for people and the exit code. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** Extra lines shown under the message (what to do next). */
  readonly hints: string[];
  constructor(message: string, exitCode: ExitCode = EXIT.ERROR, hints: string[] = [], options?: { cause: unknown }) {
    super(message, options);
    this.name = "CliError";
    this.exitCode = exitCode;
    this.hints = hints;
  }
}

export function usageError(message: string, hints: string[] = [], options?: { cause: unknown }): CliError {
  return new CliError(message, EXIT.USAGE, hints, options);
}

export function exitCodeOfStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.AUTH;
  if (status === 404) return EXIT.NOT_FOUND;
  if (status === 402 || status === 429) return EXIT.LIMITED;
  if (status >= 500) return EXIT.UNAVAILABLE;
  return EXIT.REJECTED;
}

export interface ErrorReport {
  exitCode: ExitCode;
  /** The lines for people. */
  lines: string[];
  /** The same, for `--json`. */
  json: Record<string, unknown>;
}

/** What to print for an error, and the exit code. */
export function describeError(error: unknown, context: { baseUrl?: string } = {}): ErrorReport {
  if (error instanceof ApiError) {
    const code = error.code ?? `HTTP ${error.status}`;
    const lines = [`error: ${code} (${error.status}${error.type ? ` ${error.type}` : ""}): ${error.message}`];
    if (error.param) lines.push(`  param: ${error.param}`);
    lines.push(`  request id: ${error.requestId ?? "(none: the answer carried no x-request-id)"}`);
    if (error.retryAfterMs !== null) lines.push(`  retry after: ${Math.ceil(error.retryAfterMs / 1000)} s`);
    if (error.status === 401) lines.push("  hint: set the key with --api-key or SERVICE_API_KEY");
    return {
      exitCode: exitCodeOfStatus(error.status),
      lines,
      json: {
        error: {
          status: error.status,
          code: error.code,
          type: error.type,
          param: error.param,
          message: error.message,
          requestId: error.requestId,
          midStream: error.midStream,
        },
      },
    };
  }
  if (error instanceof CliError) {
    return {
      exitCode: error.exitCode,
      lines: [`error: ${error.message}`, ...error.hints.map((h) => `  ${h}`)],
      json: { error: { code: "CLI", message: error.message, exitCode: error.exitCode } },
    };
  }
  if (error instanceof WaitTimeoutError) {
    return {
      exitCode: EXIT.TIMEOUT,
      lines: [`error: ${error.message}`],
      json: { error: { code: "TIMEOUT", message: error.message } },
    };
  }
  if (error instanceof APIConnectionError) {
    // The runtime's code (ECONNREFUSED, ENOTFOUND, UND_ERR_HEADERS_TIMEOUT…) says what went wrong in one word.
    const unreachable = error.systemCode ?? error.message;
    const where = context.baseUrl ?? "the service";
    return {
      exitCode: EXIT.UNAVAILABLE,
      lines: [
        `error: cannot reach ${where} (${unreachable})`,
        "  hint: is the server running (npm start)? Set the address with --base-url or SERVICE_BASE_URL",
      ],
      json: { error: { code: "UNREACHABLE", message: `cannot reach ${where} (${unreachable})` } },
    };
  }
  // Ctrl-C: the client's calls throw APIUserAbortError, the CLI's own waits the signal's AbortError.
  if (error instanceof APIUserAbortError || (error instanceof Error && error.name === "AbortError")) {
    return {
      exitCode: EXIT.INTERRUPTED,
      lines: ["interrupted"],
      json: { error: { code: "INTERRUPTED", message: "interrupted" } },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    exitCode: EXIT.ERROR,
    lines: [`error: ${message}`, "  (run with --debug for the stack trace)"],
    json: { error: { code: "ERROR", message } },
  };
}
