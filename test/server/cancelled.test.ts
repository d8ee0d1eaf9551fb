/**
 * A client that hangs up is logged as REQUEST_CANCELLED with its request id
 * (docs/contract-decisions.md, Errors: "499 in logs, with the request id; nothing is sent"), as
 * one structured JSON line on stderr, without keys or bodies. An answer that completes,
 * and a stream the server itself cuts off, are not cancellations.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import type { GenerationEvent, Provider } from "../../server/inference/engine.ts";
import { captureLog } from "../ops/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { responsesBody } from "./http.ts";
import { REQUEST_ID } from "../support/http.ts";

/** Streams one delta, then waits until the request is aborted (a slow answer a client gives up on). */
const endless: Provider = {
  name: "endless",
  async *generate(request): AsyncIterable<GenerationEvent> {
    yield { type: "text", delta: "Once upon a time" };
    await new Promise<void>((resolve) => request.signal.addEventListener("abort", () => resolve(), { once: true }));
  },
};

/** Streams one delta, then fails in a way nobody planned for (the server ends the stream). */
const breaking: Provider = {
  name: "breaking",
  async *generate(): AsyncIterable<GenerationEvent> {
    yield { type: "text", delta: "Hello" };
    throw new Error("the model fell over");
  },
};

let server: TestServer;
const SECRET_INPUT = "my-secret-prompt-text";

beforeAll(async () => {
  server = await startTestServer({
    accessLog: true,
    providers: { endless, breaking },
    routing: {
      version: "cancelled-test",
      providers: { local: { type: "local" }, endless: { type: "local" }, breaking: { type: "local" } },
      models: {
        "tiny-chat": { primary: "endless" },
        "tiny-reasoner": { primary: "breaking" },
        "tiny-chat-community": { primary: "local" },
      },
      contentPolicy: { blockedInputTerms: [], blockedOutputTerms: [] },
    },
  });
});
afterAll(() => server.close());

async function waitFor<T>(what: () => T | undefined, ms = 5_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = what();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a client that hangs up", () => {
  test("mid-stream: one JSON line, REQUEST_CANCELLED with status 499 and the request id sent to the client", async (t) => {
    const log = captureLog(t);
    const controller = new AbortController();
    const response = await fetch(`${server.baseUrl}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.keys.acme}`, "content-type": "application/json" },
      body: JSON.stringify(responsesBody({ stream: true, input: SECRET_INPUT })),
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    const requestId = response.headers.get("x-request-id") ?? "";
    assert.match(requestId, REQUEST_ID);
    const reader = response.body!.getReader();
    await reader.read(); // the first events arrived: the answer has started
    controller.abort();

    const line = await waitFor(() => log.lines().find((l) => l.includes("REQUEST_CANCELLED")));
    assert.equal(line.split("\n").length, 1, "one line");
    const entry = JSON.parse(line) as Record<string, unknown>;
    assert.equal(entry.code, "REQUEST_CANCELLED");
    assert.equal(entry.status, 499);
    assert.equal(entry.requestId, requestId);
    assert.equal(entry.level, "warn");
    assert.equal(entry.method, "POST");
    assert.equal(entry.path, "/v1/responses");
    assert.match(String(entry.time), /^\d{4}-\d{2}-\d{2}T/);
    // Never keys or bodies.
    assert.ok(!line.includes(server.keys.acme as string), "no key");
    assert.ok(!line.includes(SECRET_INPUT), "no body");
    // Logged once.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(log.lines().filter((l) => l.includes(requestId)).length, 1);
  });

  test("before the answer starts (the body half sent): logged too, with the request's id", async (t) => {
    const log = captureLog(t);
    const controller = new AbortController();
    let sent!: () => void;
    const halfway = new Promise<void>((resolve) => (sent = resolve));
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(`{"model": "tiny-chat", "store": false, "input": "${SECRET_INPUT}`));
        sent();
      },
    });
    const request = fetch(`${server.baseUrl}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.keys.acme}`, "content-type": "application/json" },
      body,
      signal: controller.signal,
      duplex: "half",
    } as RequestInit);
    await halfway;
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await assert.rejects(request);
    const entry = await waitFor(() => log.entries().find((e) => e.code === "REQUEST_CANCELLED"));
    assert.match(String(entry.requestId), REQUEST_ID);
    assert.equal(entry.path, "/v1/responses");
    assert.ok(!JSON.stringify(log.lines()).includes(SECRET_INPUT), "no body");
  });

  test("an answer that completes is its one access line, not a cancellation", async (t) => {
    const log = captureLog(t);
    const response = await fetch(`${server.baseUrl}/models`, {
      headers: { authorization: `Bearer ${server.keys.acme}` },
    });
    assert.equal(response.status, 200);
    await response.text();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const entries = log.entries();
    assert.deepEqual(
      entries.map((e) => [e.event, e.status, e.requestId]),
      [["request", 200, response.headers.get("x-request-id")]],
    );
  });

  test("a stream the server ends with an error event is not a cancellation", async (t) => {
    const log = captureLog(t);
    const response = await fetch(`${server.baseUrl}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.keys.acme}`, "content-type": "application/json" },
      body: JSON.stringify(responsesBody({ model: "tiny-reasoner", stream: true })),
    });
    const text = await response.text();
    assert.match(text, /event: error/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const entries = log.entries();
    assert.ok(!entries.some((e) => e.code === "REQUEST_CANCELLED"), JSON.stringify(entries));
    // The failure itself is logged, as one structured line with the request id.
    const failed = entries.find((e) => e.event === "stream.failed");
    assert.equal(failed?.requestId, response.headers.get("x-request-id"));
  });
});
