/**
 * LOG_LEVEL over a real process: `warn` leaves out the access lines but keeps problems;
 * a level that does not exist refuses to start, naming the variable.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, test } from "vitest";
import { fileURLToPath } from "node:url";
import { startOpsServer } from "./process.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "ops-log-level-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test("LOG_LEVEL=warn: no line for an answered request, one for a client that hung up", async () => {
  const server = await startOpsServer(path.join(scratch, "warn"), { LOG_LEVEL: "warn" });
  const answered = await fetch(`${server.baseUrl}/models`, {
    headers: { authorization: `Bearer ${server.keys.acme}` },
  });
  assert.equal(answered.status, 200);
  await answered.text();
  const controller = new AbortController();
  const request = fetch(`${server.baseUrl}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.keys.acme}`, "content-type": "application/json" },
    body: new ReadableStream({
      start: (c) => c.enqueue(new TextEncoder().encode('{"model": "tiny-chat", "input": "')),
    }),
    signal: controller.signal,
    duplex: "half",
  } as RequestInit);
  await new Promise((resolve) => setTimeout(resolve, 300));
  controller.abort();
  await assert.rejects(request);
  await server.waitForEntry((e) => e.event === "request.cancelled");
  assert.equal(await server.terminate(), 0);
  assert.ok(!server.entries().some((e) => e.event === "request" || e.level === "info"), server.lines().join("\n"));
});

test("an unknown LOG_LEVEL refuses to start", () => {
  const main = fileURLToPath(new URL("../../server/main.ts", import.meta.url));
  const run = spawnSync(process.execPath, [main], {
    env: { ...process.env, LOG_LEVEL: "loud", DATA_DIR: path.join(scratch, "bad"), PORT: "0" },
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /Cannot start: LOG_LEVEL must be one of debug, info, warn, error, silent, not "loud"/);
});
