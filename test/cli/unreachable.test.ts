/**
 * A service that cannot be reached is one line for people (what failed, in the runtime's
 * word) and a hint, exit 7, never a stack trace: the CLI reads the client's typed
 * connection errors, not fetch's TypeError and its `cause`.
 */
import assert from "node:assert/strict";
import { describe, test } from "vitest";
import { APIConnectionError, APIConnectionTimeoutError, APIUserAbortError } from "../../client/index.ts";
import { describeError, EXIT } from "../../cli/errors.ts";
import { cli } from "./helpers.ts";
import { freePort } from "../../harness/listen.ts";

describe("a service that cannot be reached", () => {
  test("a refused connection prints the error line and the hint, no stack, exit 7; --json one line", async () => {
    const baseUrl = `http://127.0.0.1:${await freePort()}/v1`;
    const env = { SERVICE_BASE_URL: baseUrl, SERVICE_API_KEY: "sk-test", NO_COLOR: "1" };
    const plain = await cli(["models", "list"], { env });
    assert.equal(plain.code, EXIT.UNAVAILABLE, plain.stderr);
    const lines = plain.stderr.trimEnd().split("\n");
    // The CLI's own retries of a refused GET are noted first; the report is the last two lines.
    assert.ok(
      lines
        .slice(0, -2)
        .every((line) => /^retrying GET \/models in \d+ ms \(connection failed: ECONNREFUSED\)$/.test(line)),
      plain.stderr,
    );
    assert.deepEqual(lines.slice(-2), [
      `error: cannot reach ${baseUrl} (ECONNREFUSED)`,
      "  hint: is the server running (npm start)? Set the address with --base-url or SERVICE_BASE_URL",
    ]);
    assert.doesNotMatch(plain.stderr, /^\s+at /m, "no stack trace");

    const json = await cli(["--json", "models", "list"], { env });
    assert.equal(json.code, EXIT.UNAVAILABLE);
    const last = json.stderr.trimEnd().split("\n").at(-1) ?? "";
    assert.deepEqual(JSON.parse(last), {
      error: { code: "UNREACHABLE", message: `cannot reach ${baseUrl} (ECONNREFUSED)` },
    });
  });

  test("a timeout names the runtime's limit; the client's abort is an interruption (exit 130)", () => {
    const timeout = new APIConnectionTimeoutError({
      cause: new TypeError("fetch failed", { cause: { code: "UND_ERR_HEADERS_TIMEOUT" } }),
    });
    const report = describeError(timeout, { baseUrl: "http://svc/v1" });
    assert.equal(report.exitCode, EXIT.UNAVAILABLE);
    assert.equal(report.lines[0], "error: cannot reach http://svc/v1 (UND_ERR_HEADERS_TIMEOUT)");

    const browser = describeError(new APIConnectionError({ cause: new TypeError("Failed to fetch") }));
    assert.equal(browser.lines[0], "error: cannot reach the service (Connection error.)");

    const aborted = describeError(new APIUserAbortError({ cause: new DOMException("Interrupted", "AbortError") }));
    assert.equal(aborted.exitCode, EXIT.INTERRUPTED);
    assert.deepEqual(aborted.lines, ["interrupted"]);
  });
});
