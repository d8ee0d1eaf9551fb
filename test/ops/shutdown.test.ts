/**
 * How the server and the worker stop (server/ops/shutdown.ts), over a real process: the
 * first signal drains with the grace given, a second stops at once, what was started is
 * closed once, last first, and the exit code says whether closing worked.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { it } from "vitest";

const CHILD = fileURLToPath(new URL("shutdown-child.ts", import.meta.url));

async function started(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [CHILD], { env: { ...process.env, LOG_LEVEL: "info", ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += String(chunk)));
  child.stderr.on("data", (chunk) => (stderr += String(chunk)));
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  child.once("exit", () => clearTimeout(timer));
  await waitUntil(() => stdout.includes("ready\n"));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

async function waitUntil(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
}

it("a first SIGTERM drains, a second stops at once: everything closed once, last first, exit 0", async () => {
  const { child, stdout, stderr } = await started();
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await waitUntil(() => stdout().includes("draining"));
  child.kill("SIGINT");
  const [code] = await exited;
  assert.equal(code, 0);
  assert.equal(stdout(), "ready\ndraining 1234\nstopping now\nclosed runner\nclosed metrics\nclosed store\n");
  assert.match(stderr(), /"signal":"SIGINT".*"event":"worker.stopping_now"/);
});

it("a drain that fails exits 1", async () => {
  const { child, stdout } = await started({ FAIL_DRAIN: "1" });
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const [code] = await exited;
  assert.equal(code, 1);
  assert.equal(stdout(), "ready\ndraining 1234\n");
});
