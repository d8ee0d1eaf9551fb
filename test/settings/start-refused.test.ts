/**
 * A bad variable stops each process before it starts, with one line on stderr naming the
 * variable and its rule, never a stack trace: the real `node server/main.ts`, `node
 * server/worker.ts` and `node server/admin/cli.ts`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, it } from "vitest";
import { runUntilExit } from "../server/child-process.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "settings-refused-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `script` with `env` over a clean data directory, until it exits. */
function run(script: string, args: string[], env: Record<string, string>) {
  return runUntilExit(script, args, { NODE_ENV: "", DATA_DIR: path.join(scratch, "data"), PORT: "0", ...env });
}

it("the server: exit 1, one line, nothing listening", async () => {
  const result = await run("server/main.ts", [], { SHUTDOWN_GRACE_MS: "25s" });
  assert.equal(result.code, 1, result.stderr);
  assert.equal(
    result.stderr,
    'Cannot start: SHUTDOWN_GRACE_MS must be a whole number of milliseconds, 0 or more, not "25s"\n',
  );
  assert.equal(result.stdout, "");
});

it("the worker: exit 1, one line (METRICS_PORT checked as a port)", async () => {
  const result = await run("server/worker.ts", [], { METRICS_PORT: "metrics" });
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stderr, 'Cannot start: METRICS_PORT must be a port number from 0 to 65535, not "metrics"\n');
  assert.equal(result.stdout, "");
});

it("the admin command: exit 2, one line", async () => {
  const result = await run("server/admin/cli.ts", ["accounts", "list"], { PG_POOL_SIZE: "0" });
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stderr, 'Error: PG_POOL_SIZE must be a whole number of at least 1, not "0"\n');
});
