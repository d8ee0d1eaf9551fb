/**
 * Slow and vanishing clients, beside the fuzzer's single requests: bodies trickled a byte
 * at a time, clients that stall mid-headers or mid-body while others are served, clients
 * that reset the connection mid-body, mid-upload and mid-stream. The server answers the
 * slow ones when their bytes arrive, never holds up anyone else, and never fails.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { afterAll, beforeAll, describe, test } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { tapLog } from "../../server/log.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { REQUEST_ID } from "../support/http.ts";
import { chunkEncode, sendRaw, type Delivery, type WireResult } from "../../conformance/fuzz/wire.ts";

let server: TestServer;
let key: string;
let target: { host: string; port: number };
const logged: string[] = [];
let stopCapture: () => void = () => undefined;

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { runJobs: false } });
  key = server.keys.acme as string;
  await server.store.accounts.update("acme", { requestsPerMinute: null });
  const url = new URL(server.origin);
  target = { host: url.hostname, port: Number(url.port) };
  // The server logs every 5xx and unexpected failure at level error; none may happen.
  // Clients that vanish are logged too, as REQUEST_CANCELLED (warn): not a failure of the server.
  stopCapture = tapLog((line) => {
    if (line.includes('"level":"error"')) logged.push(line);
  });
  const created = await fetch(`${server.baseUrl}/accounts/acme/datasets`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ datasetId: "slow", dataset: {} }),
  });
  assert.equal(created.status, 200);
});

afterAll(async () => {
  stopCapture();
  await server.close();
  assert.deepEqual(logged, [], "the server logged failures");
});

const RESPONSES_BODY = JSON.stringify({
  model: "tiny-chat",
  input: "Tell me about the sea.",
  store: false,
  max_output_tokens: 8,
});

function responsesRequest(delivery: Delivery, body = RESPONSES_BODY, extraHeaders = ""): Promise<WireResult> {
  const head = `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n`;
  return sendRaw(target, { head: Buffer.from(head), body: Buffer.from(body), delivery, isHead: false }, 20_000);
}

async function servesNormally(withinMs = 3_000): Promise<void> {
  const started = performance.now();
  const result = await sendRaw(
    target,
    {
      head: Buffer.from(`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`),
      body: Buffer.alloc(0),
      delivery: { kind: "whole" },
      isHead: false,
    },
    withinMs,
  );
  assert.equal(result.response?.status, 200, JSON.stringify(result));
  assert.ok(performance.now() - started < withinMs);
}

/** A connection that sends `bytes` and then nothing, until destroyed. */
async function stalled(bytes: string): Promise<net.Socket> {
  const socket = net.connect(target);
  socket.on("error", () => undefined);
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write(bytes);
  return socket;
}

describe("slow clients", () => {
  test("a body trickled one byte at a time gets the normal answer", async () => {
    const result = await responsesRequest({ kind: "trickle", delayMs: 1 });
    assert.equal(result.response?.status, 200, result.response?.body.toString());
    assert.match(result.response?.headers["x-request-id"] ?? "", REQUEST_ID);
  });

  test("a chunked body in one-byte chunks gets the normal answer", async () => {
    const body = Buffer.from(RESPONSES_BODY);
    const chunked = chunkEncode(
      body,
      Array.from({ length: body.length }, (_, i) => i / body.length),
    );
    const head = `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const result = await sendRaw(
      target,
      { head: Buffer.from(head), body: chunked, delivery: { kind: "whole" }, isHead: false },
      20_000,
    );
    assert.equal(result.response?.status, 200, result.response?.body.toString());
  });

  test("twenty clients stalled mid-body hold up nobody, and are answered when they go on", async () => {
    const half = RESPONSES_BODY.length >> 1;
    const head = `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${RESPONSES_BODY.length}\r\nConnection: close\r\n\r\n`;
    const sockets = await Promise.all(Array.from({ length: 20 }, () => stalled(head + RESPONSES_BODY.slice(0, half))));
    const answers = sockets.map((socket) => {
      const chunks: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      return new Promise<string>((resolve) => socket.on("close", () => resolve(Buffer.concat(chunks).toString())));
    });
    await sleep(300);
    for (let i = 0; i < 10; i++) await servesNormally();
    const others = await Promise.all(Array.from({ length: 10 }, () => responsesRequest({ kind: "whole" })));
    for (const other of others) assert.equal(other.response?.status, 200);
    // Half of them go on and are answered; the other half vanish.
    sockets.forEach((socket, i) => (i % 2 === 0 ? socket.write(RESPONSES_BODY.slice(half)) : socket.resetAndDestroy()));
    const texts = await Promise.all(answers.filter((_, i) => i % 2 === 0));
    for (const text of texts) assert.match(text, /^HTTP\/1\.1 200 /);
    await servesNormally();
  });

  test("clients stalled mid-headers hold up nobody", async () => {
    const sockets = await Promise.all(
      Array.from({ length: 20 }, () => stalled(`POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthoriz`)),
    );
    await sleep(200);
    for (let i = 0; i < 10; i++) await servesNormally();
    for (const socket of sockets) socket.resetAndDestroy();
    await servesNormally();
  });

  test("a body paused half a second mid-way is answered as usual", async () => {
    const result = await responsesRequest({ kind: "stall", at: 0.5, pauseMs: 500 });
    assert.equal(result.response?.status, 200);
  });
});

describe("vanishing clients", () => {
  test("resets mid-body, at every tenth of the request, leave the server serving", async () => {
    for (let i = 0; i < 10; i++) {
      const result = await responsesRequest({ kind: "abort", at: i / 10 });
      assert.equal(result.outcome, "aborted");
      await servesNormally();
    }
  });

  test("a reset mid-stream (after the first events) leaves the server serving", async () => {
    const body = JSON.stringify({
      model: "tiny-chat",
      input: "Tell me a long story about the sea.",
      store: false,
      max_output_tokens: 256,
      stream: true,
    });
    for (const delayMs of [0, 5, 20, 50]) {
      const result = await responsesRequest({ kind: "abortAfter", delayMs }, body);
      assert.ok(result.outcome === "aborted" || result.response?.status === 200, JSON.stringify(result.outcome));
      await servesNormally();
    }
  });

  test("a reset mid-upload leaves the dataset uploadable", async () => {
    const row = `${JSON.stringify({
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
    })}\n`;
    const file = row.repeat(2000);
    for (const at of [0.1, 0.5, 0.9]) {
      const head = `POST /v1/accounts/acme/datasets/slow:upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/jsonl\r\nContent-Length: ${file.length}\r\n\r\n`;
      const result = await sendRaw(
        target,
        { head: Buffer.from(head), body: Buffer.from(file), delivery: { kind: "abort", at }, isHead: false },
        10_000,
      );
      assert.equal(result.outcome, "aborted");
    }
    const upload = await fetch(`${server.baseUrl}/accounts/acme/datasets/slow:upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/jsonl" },
      body: file,
    });
    assert.equal(upload.status, 200, await upload.text());
  });
});
