/**
 * Routing over real HTTP: a misbehaving OpenAI-compatible upstream (fake-upstream.ts) as
 * primary, the local model as standby. Covers fallback, every upstream failure code,
 * failures part-way through a stream (the `error` event), blocked output, deadlines, and
 * a client that disconnects.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, beforeEach, describe, test } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "./fake-upstream.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { parseSse, post, responsesBody } from "./http.ts";
import { assertError } from "../support/http.ts";
import { captureLog } from "../ops/log-capture.ts";

let server: TestServer;
let upstream: FakeUpstream;

const UPSTREAM_MODEL = "secret-upstream-model-name";
const TEXT = "The upstream says hello to you.";

beforeAll(async () => {
  upstream = await startFakeUpstream({ kind: "stream", text: TEXT });
  server = await startTestServer({
    engine: { stallTimeoutMs: 400 },
    routing: {
      version: "routing-test-7",
      providers: {
        local: { type: "local" },
        upstream: { type: "openai-compatible", baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, timeoutMs: 400 },
        // Nothing listens on port 1: connection refused.
        refused: { type: "openai-compatible", baseUrl: "http://127.0.0.1:1/v1", model: UPSTREAM_MODEL },
      },
      models: {
        "tiny-chat": { primary: "upstream", standby: ["local"] },
        "tiny-reasoner": { primary: "upstream", standby: [] },
        "tiny-chat-community": { primary: "refused", standby: ["local"] },
      },
      contentPolicy: { blockedInputTerms: [], blockedOutputTerms: ["forbidden-output"] },
    },
  });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.behaviour = { kind: "stream", text: TEXT };
});

const call = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  post(server.baseUrl, "/responses", responsesBody(body), { key: server.keys.acme, headers });

/** The model that has no standby, so upstream failures reach the caller. */
const alone = { model: "tiny-reasoner" };

describe("primary and fallback", () => {
  test("the primary serves: x-provider-class primary, x-config-version from the routing file, no upstream names", async () => {
    const result = await call({});
    assert.equal(result.status, 200, result.text);
    assert.equal(result.headers.get("x-provider-class"), "primary");
    assert.equal(result.headers.get("x-config-version"), "routing-test-7");
    assert.equal(result.body.output[0].content[0].text, TEXT);
    assert.equal(result.body.model, "tiny-chat");
    assert.doesNotMatch(result.text + JSON.stringify([...result.headers]), /secret-upstream|127\.0\.0\.1/);
  });

  for (const [what, behaviour] of [
    ["503", { kind: "status", status: 503 }],
    ["500", { kind: "status", status: 500 }],
    ["429", { kind: "status", status: 429, retryAfter: "3" }],
    ["a timeout before headers", { kind: "hang" }],
  ] as const) {
    test(`upstream ${what}: the standby serves, x-provider-class fallback`, async () => {
      upstream.behaviour = behaviour;
      const before = upstream.requests;
      const result = await call({});
      assert.equal(result.status, 200, result.text);
      assert.equal(result.headers.get("x-provider-class"), "fallback");
      assert.equal(upstream.requests, before + 1, "the primary was tried first");
      assert.notEqual(result.body.output[0].content[0].text, TEXT, "the local model answered");
    });
  }

  test("connection refused: the standby serves", async () => {
    const result = await call({ model: "tiny-chat-community" });
    assert.equal(result.status, 200, result.text);
    assert.equal(result.headers.get("x-provider-class"), "fallback");
  });

  test("a content rejection is not retried on the standby: 400 UPSTREAM_CONTENT_REJECTED", async () => {
    upstream.behaviour = {
      kind: "status",
      status: 400,
      body: '{"error":{"code":"content_filter","message":"blocked by content policy"}}',
    };
    assertError(await call({}), { status: 400, code: "UPSTREAM_CONTENT_REJECTED", type: "invalid_request_error" });
  });
});

describe("upstream failures with no standby", () => {
  test("429 → 429 UPSTREAM_RATE_LIMITED with the upstream's Retry-After", async () => {
    upstream.behaviour = { kind: "status", status: 429, retryAfter: "7" };
    const result = await call(alone);
    assertError(result, { status: 429, code: "UPSTREAM_RATE_LIMITED", type: "rate_limit_error" });
    assert.equal(result.headers.get("retry-after"), "7");
  });

  test("503 → 503 UPSTREAM_UNAVAILABLE with Retry-After", async () => {
    upstream.behaviour = { kind: "status", status: 503 };
    const result = await call(alone);
    assertError(result, { status: 503, code: "UPSTREAM_UNAVAILABLE", type: "service_unavailable" });
    assert.match(result.headers.get("retry-after") ?? "", /^\d+$/);
  });

  test("the log shows what the upstream did (its status and error code, as the answer's cause; never its message); the client gets only the code and message", async (t) => {
    const log = captureLog(t, { minLevel: "error" });
    upstream.behaviour = {
      kind: "status",
      status: 500,
      body: '{"error":{"code":"backend_overloaded","type":"server_error","message":"while reading: my secret prompt"}}',
    };
    const result = await call(alone);
    assertError(result, { status: 503, code: "UPSTREAM_UNAVAILABLE", type: "service_unavailable" });
    assert.equal(result.body.error.message, "the upstream answered HTTP 500");
    assert.doesNotMatch(result.text, /backend_overloaded|ProviderFailure|secret/);
    const line = log
      .entries()
      .find((e) => e.event === "request.failed" && e.requestId === result.headers.get("x-request-id"));
    assert.equal(line?.detail, "the upstream answered HTTP 500");
    assert.equal(
      line?.cause,
      "ProviderFailure: the upstream answered HTTP 500 (UPSTREAM_UNAVAILABLE) ← UpstreamAnswer: HTTP 500 (backend_overloaded, server_error)",
    );
  });

  test("no headers in time → 504 UPSTREAM_TIMEOUT", async () => {
    upstream.behaviour = { kind: "hang" };
    assertError(await call(alone), { status: 504, code: "UPSTREAM_TIMEOUT", type: "server_error" });
  });

  test("a stream that stalls after its first chunk → 504 PARTIAL_RESPONSE_TIMEOUT", async () => {
    upstream.behaviour = { kind: "stall", text: TEXT };
    assertError(await call(alone), { status: 504, code: "PARTIAL_RESPONSE_TIMEOUT", type: "server_error" });
  });

  test("x-request-timeout-ms shorter than the generation → 504 REQUEST_DEADLINE_EXCEEDED", async () => {
    upstream.behaviour = { kind: "endless", chunk: "more ", delayMs: 30 };
    assertError(await call(alone, { "x-request-timeout-ms": "300" }), {
      status: 504,
      code: "REQUEST_DEADLINE_EXCEEDED",
      type: "server_error",
    });
  });

  test("generated text with a blocked term → 400 CONTENT_BLOCKED_OUTPUT", async () => {
    upstream.behaviour = { kind: "stream", text: "This holds forbidden-output in it." };
    assertError(await call(alone), { status: 400, code: "CONTENT_BLOCKED_OUTPUT", type: "invalid_request_error" });
  });
});

describe("failures part-way through a stream (errors rule 4)", () => {
  async function streamed(body: Record<string, unknown>) {
    const result = await call({ ...body, stream: true });
    assert.equal(result.status, 200, result.text);
    assert.match(result.headers.get("content-type") ?? "", /^text\/event-stream/);
    return parseSse(result.text);
  }

  for (const [what, behaviour, code] of [
    ["a stall", { kind: "stall", text: TEXT }, "PARTIAL_RESPONSE_TIMEOUT"],
    ["a dropped connection", { kind: "cut", text: TEXT }, "UPSTREAM_UNAVAILABLE"],
    ["blocked output", { kind: "stream", text: "Fine words, then forbidden-output." }, "CONTENT_BLOCKED_OUTPUT"],
  ] as const) {
    test(`${what}: the stream ends with an error event carrying ${code}, and no response.completed`, async () => {
      upstream.behaviour = behaviour;
      const events = await streamed(alone);
      assert.equal(events[0]?.event, "response.created");
      const last = events.at(-1);
      assert.equal(last?.event, "error");
      assert.equal(last?.json.type, "error");
      assert.equal(last?.json.code, code);
      assert.equal(typeof last?.json.message, "string");
      assert.equal(last?.json.sequence_number, events.length - 1);
      assert.ok(!events.some((e) => e.event === "response.completed"));
      assert.ok(!events.some((e) => e.data.includes("forbidden-output")), "the blocked term is never sent");
    });
  }

  test("a dropped connection mid-stream is logged with the socket's failure as cause", async (t) => {
    const log = captureLog(t, { minLevel: "error" });
    upstream.behaviour = { kind: "cut", text: TEXT };
    const events = await streamed(alone);
    assert.equal(events.at(-1)?.json.code, "UPSTREAM_UNAVAILABLE");
    assert.doesNotMatch(JSON.stringify(events.at(-1)?.json), /ProviderFailure|other side closed|Socket/);
    const line = log.entries().find((e) => e.event === "stream.failed" && e.code === "UPSTREAM_UNAVAILABLE");
    assert.match(
      String(line?.cause),
      /^ProviderFailure: the upstream could not be reached \(UPSTREAM_UNAVAILABLE\) ← \w+Error: /,
    );
  });

  test("chat completions: a stall mid-stream is an error chunk and no [DONE]", async () => {
    upstream.behaviour = { kind: "stall", text: TEXT };
    const result = await post(
      server.baseUrl,
      "/chat/completions",
      { model: "tiny-reasoner", stream: true, messages: [{ role: "user", content: "Hi" }] },
      { key: server.keys.acme },
    );
    const events = parseSse(result.text);
    assert.equal(events.at(-1)?.json?.error?.code, "PARTIAL_RESPONSE_TIMEOUT");
    assert.ok(!events.some((e) => e.data === "[DONE]"));
  });
});

describe("a client that disconnects", () => {
  for (const [path, body] of [
    ["/responses", responsesBody({ ...alone, stream: true, max_output_tokens: 2000 })],
    [
      "/chat/completions",
      { model: "tiny-reasoner", stream: true, max_tokens: 2000, messages: [{ role: "user", content: "Hi" }] },
    ],
    [
      "/messages",
      { model: "tiny-reasoner", stream: true, max_tokens: 2000, messages: [{ role: "user", content: "Hi" }] },
    ],
  ] as const) {
    test(`${path}: generation stops at once (the upstream request is closed)`, async () => {
      upstream.behaviour = { kind: "endless", chunk: "word ", delayMs: 20 };
      const abort = new AbortController();
      const upstreamClosed = upstream.nextClientClose();
      const response = await fetch(server.baseUrl + path, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${server.keys.acme}` },
        body: JSON.stringify(body),
        signal: abort.signal,
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let received = "";
      while (!received.includes("word")) received += new TextDecoder().decode((await reader.read()).value);
      abort.abort();
      // Fails by the test runner's timeout if generation goes on.
      await upstreamClosed;
    });
  }
});
