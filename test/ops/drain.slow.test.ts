/**
 * Graceful drain over real processes: SIGTERM stops new connections and says 503 on
 * /readyz at once; a stream that ends within SHUTDOWN_GRACE_MS ends as usual; one that
 * runs past it gets its format's error event (503 UPSTREAM_UNAVAILABLE) and ends; the
 * process then exits 0. A client that hangs up is logged as REQUEST_CANCELLED (499).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { startOpsServer } from "./process.ts";
import { startRecordingUpstream, writeRouting, type RecordingUpstream } from "./recording-upstream.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "ops-drain-"));
let upstream: RecordingUpstream;
let routingFile: string;

beforeAll(async () => {
  upstream = await startRecordingUpstream("endless");
  routingFile = path.join(scratch, "routing.json");
  writeRouting(routingFile, upstream);
});

afterAll(async () => {
  await upstream?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function stream(baseUrl: string, key: string, path: "/responses" | "/chat/completions") {
  const body =
    path === "/responses"
      ? { model: "tiny-chat", input: "Tell me a long story.", store: false, stream: true, max_output_tokens: 1000 }
      : {
          model: "tiny-chat",
          messages: [{ role: "user", content: "Tell me a long story." }],
          stream: true,
          max_tokens: 1000,
        };
  return fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Reads the whole stream (the first chunk is already known to have arrived). */
async function rest(response: Response): Promise<string> {
  return response.text();
}

test("past the deadline, open streams end with the error event of their format; /readyz is 503 while draining; exit 0", async () => {
  upstream.mode = "endless";
  const server = await startOpsServer(path.join(scratch, "a"), {
    ROUTING_FILE: routingFile,
    METRICS_PORT: "0",
    SHUTDOWN_GRACE_MS: "1500",
  });
  const key = server.keys.acme as string;
  const responses = await stream(server.baseUrl, key, "/responses");
  const chat = await stream(server.baseUrl, key, "/chat/completions");
  assert.equal(responses.status, 200);
  assert.equal(chat.status, 200);
  const texts = [rest(responses), rest(chat)];

  const started = Date.now();
  const exited = server.terminate();
  await server.waitForEntry((e) => e.event === "server.draining");
  const ready = await fetch(`${server.metricsOrigin}/readyz`);
  assert.equal(ready.status, 503);
  assert.equal(((await ready.json()) as { checks: { draining: boolean } }).checks.draining, true);
  await assert.rejects(fetch(`${server.origin}/healthz`), "the API port takes no new connections");

  const [responsesText = "", chatText = ""] = await Promise.all(texts);
  assert.ok(Date.now() - started >= 1_400, "the streams had their grace");
  const errorEvent = /event: error\ndata: (.*)\n\n$/.exec(responsesText);
  assert.ok(errorEvent, responsesText.slice(-400));
  const data = JSON.parse(errorEvent[1] ?? "") as { type: string; code: string; message: string };
  assert.equal(data.type, "error");
  assert.equal(data.code, "UPSTREAM_UNAVAILABLE");
  const chatLast = chatText.trimEnd().split("\n\n").at(-1) ?? "";
  assert.match(chatLast, /^event: error\ndata: \{"error":\{.*"code":"UPSTREAM_UNAVAILABLE"/);
  assert.ok(!chatText.includes("[DONE]"), "not a complete answer");

  assert.equal(await exited, 0);
  const drained = server.entries().find((e) => e.event === "server.drained");
  assert.deepEqual([drained?.inTime, drained?.endedStreams, drained?.cutRequests], [false, 2, 0]);
  const ended = server.entries().filter((e) => e.event === "request" && e.code === "UPSTREAM_UNAVAILABLE");
  assert.equal(ended.length, 2, "each stream's access line names the error it ended with");
  assert.ok(
    !server.entries().some((e) => e.code === "REQUEST_CANCELLED"),
    "a stream the server ends is not a cancellation",
  );
});

test("a stream that finishes within the grace finishes as usual, and the process exits as soon as it has", async () => {
  upstream.mode = "slow"; // ten chunks, 100 ms apart
  const server = await startOpsServer(path.join(scratch, "b"), {
    ROUTING_FILE: routingFile,
    SHUTDOWN_GRACE_MS: "20000",
  });
  const responses = await stream(server.baseUrl, server.keys.acme as string, "/responses");
  assert.equal(responses.status, 200);
  const reader = responses.body!.getReader();
  await reader.read();
  const started = Date.now();
  const exited = server.terminate();
  let text = "";
  for (let read = await reader.read(); !read.done; read = await reader.read())
    text += new TextDecoder().decode(read.value);
  assert.match(text, /event: response\.completed/);
  assert.doesNotMatch(text, /event: error/);
  assert.equal(await exited, 0);
  assert.ok(Date.now() - started < 10_000, "it did not wait out the whole grace");
  const drained = server.entries().find((e) => e.event === "server.drained");
  assert.equal(drained?.inTime, true);
});

test("a client that hangs up mid-stream is one REQUEST_CANCELLED line, status 499, with its request id", async () => {
  upstream.mode = "endless";
  const server = await startOpsServer(path.join(scratch, "c"), { ROUTING_FILE: routingFile, SHUTDOWN_GRACE_MS: "0" });
  const controller = new AbortController();
  const response = await fetch(`${server.baseUrl}/responses`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${server.keys.acme}`,
      "content-type": "application/json",
      "x-request-id": "leaving-early",
    },
    body: JSON.stringify({ model: "tiny-chat", input: "Go on.", store: false, stream: true }),
    signal: controller.signal,
  });
  await response.body!.getReader().read();
  controller.abort();
  const entry = await server.waitForEntry((e) => e.code === "REQUEST_CANCELLED");
  assert.deepEqual(
    [entry.status, entry.requestId, entry.level, entry.event],
    [499, "leaving-early", "warn", "request.cancelled"],
  );
  assert.equal(await server.terminate(), 0);
});
