/**
 * Retries: what is sent again and after how long. A small local server answers each
 * request as the test scripts it (429 with Retry-After, 503, a reset connection, …), so
 * the waits can be measured where the requests arrive; the last test retries a real 429
 * of the reference server's per-minute limit.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, test } from "vitest";
import {
  APIConnectionError,
  ApiError,
  APIUserAbortError,
  createClient,
  ok,
  parseRetryAfter,
  type RetryInfo,
} from "../../client/index.ts";
import { backoff, retryDelay } from "../../client/retry.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

type Reply = { status: number; headers?: Record<string, string>; body?: unknown } | "reset";

/** A server that answers the n-th request with `replies[n]` (the last one repeats) and records when each arrived. */
class Scripted {
  replies: Reply[] = [];
  arrivals: { at: number; method: string; url: string; headers: http.IncomingHttpHeaders }[] = [];
  readonly server = http.createServer((req, res) => {
    this.arrivals.push({ at: performance.now(), method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    const reply = this.replies[Math.min(this.arrivals.length - 1, this.replies.length - 1)] ?? { status: 500 };
    req.resume();
    req.on("end", () => {
      if (reply === "reset") return req.socket.destroy(); // the request arrived; its answer is lost
      const body = JSON.stringify(reply.body ?? { object: "list", data: [] });
      res.writeHead(reply.status, {
        "content-type": "application/json",
        "x-request-id": `req_${this.arrivals.length}`,
        ...reply.headers,
      });
      res.end(body);
    });
  });
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }
  script(...replies: Reply[]): void {
    this.replies = replies;
    this.arrivals = [];
  }
}

const rateLimited = (retryAfter: string): Reply => ({
  status: 429,
  headers: { "retry-after": retryAfter },
  body: { error: { message: "Slow down.", type: "rate_limit_error", code: "TENANT_RATE_LIMITED", param: null } },
});
const unavailable: Reply = {
  status: 503,
  body: { error: { message: "Scaling up.", type: "service_unavailable", code: "DEPLOYMENT_SCALING_UP", param: null } },
};
const RESPONSE = {
  id: "resp_1",
  object: "response",
  created_at: 1,
  status: "completed",
  model: "m",
  output: [],
  usage: { input_tokens: 1, output_tokens: 0, total_tokens: 1 },
  store: false,
};
const BODY = { model: "tiny-chat", input: "Hi", store: false } as const;

let scripted: Scripted;
beforeAll(async () => {
  scripted = new Scripted();
  await new Promise<void>((resolve) => scripted.server.listen(0, "127.0.0.1", resolve));
});
afterAll(() => new Promise<void>((resolve) => scripted.server.close(() => resolve())));

function clientWith(retries: RetryInfo[], retry: Record<string, number> = {}) {
  return createClient({
    baseUrl: scripted.baseUrl,
    apiKey: "sk-test",
    retry: { initialDelayMs: 20, maxDelayMs: 100, ...retry, onRetry: (info) => retries.push(info) },
  });
}

describe("answers that prove the request was not applied", () => {
  test("a 429 is retried after its Retry-After, even for POST /responses", async () => {
    scripted.script(rateLimited("1"), { status: 200, body: RESPONSE });
    const retries: RetryInfo[] = [];
    const response = await ok(clientWith(retries).POST("/responses", { body: BODY }));
    assert.equal(response.id, "resp_1");
    assert.equal(scripted.arrivals.length, 2);
    const waited = (scripted.arrivals[1]?.at ?? 0) - (scripted.arrivals[0]?.at ?? 0);
    assert.ok(waited >= 1_000, `waited ${waited} ms, Retry-After said 1 s`);
    assert.deepEqual(
      retries.map((r) => [r.attempt, r.delayMs, r.fromRetryAfter, r.cause]),
      [[1, 1_000, true, 429]],
    );
  });

  test("a 503 without Retry-After is retried with backoff, at most maxRetries times, then returned as ApiError", async () => {
    scripted.script(unavailable);
    const retries: RetryInfo[] = [];
    const error = await ok(clientWith(retries, { maxRetries: 2 }).GET("/models")).catch((e: unknown) => e);
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 503);
    assert.equal(error.code, "DEPLOYMENT_SCALING_UP");
    assert.equal(error.requestId, "req_3");
    assert.equal(scripted.arrivals.length, 3, "the first attempt and two retries");
    assert.deepEqual(
      retries.map((r) => r.fromRetryAfter),
      [false, false],
    );
    for (const r of retries)
      assert.ok(r.delayMs >= 10 && r.delayMs <= 100, `backoff ${r.delayMs} within jitter and cap`);
  });

  test("a Retry-After longer than maxRetryAfterMs is not waited out: the 429 comes back at once with retryAfterMs", async () => {
    scripted.script(rateLimited("3600"));
    const started = performance.now();
    const error = await ok(clientWith([]).POST("/responses", { body: BODY })).catch((e: unknown) => e);
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 429);
    assert.equal(error.retryAfterMs, 3_600_000);
    assert.equal(scripted.arrivals.length, 1);
    // Not waited: an hour was asked for; the margin is for a loaded machine.
    assert.ok(performance.now() - started < 10_000);
  });

  test("other error statuses are not retried", async () => {
    scripted.script({
      status: 500,
      body: { error: { message: "Boom.", type: "server_error", code: "INTERNAL", param: null } },
    });
    const error = await ok(clientWith([]).GET("/models")).catch((e: unknown) => e);
    assert.ok(error instanceof ApiError);
    assert.equal(error.code, "INTERNAL");
    assert.equal(scripted.arrivals.length, 1);
  });

  test("aborting during the wait ends the call at once, with an APIUserAbortError whose cause is the signal's reason", async () => {
    scripted.script(rateLimited("30"));
    const started = performance.now();
    await assert.rejects(
      ok(clientWith([]).GET("/models", { signal: AbortSignal.timeout(200) })),
      (error: Error) => error instanceof APIUserAbortError && (error.cause as Error).name === "TimeoutError",
    );
    // The server asked for 30 s; the abort came at 200 ms.
    assert.ok(performance.now() - started < 10_000);
  });
});

describe("connection failures", () => {
  test("a POST /responses whose connection is reset after it was sent is not retried (it may have been applied)", async () => {
    scripted.script("reset", { status: 200, body: RESPONSE });
    await assert.rejects(
      ok(clientWith([]).POST("/responses", { body: BODY })),
      (error: Error) => error instanceof APIConnectionError && !error.neverSent && error.cause instanceof TypeError,
    );
    assert.equal(scripted.arrivals.length, 1);
  });

  test("a GET is retried after a reset", async () => {
    scripted.script("reset", { status: 200 });
    const retries: RetryInfo[] = [];
    const list = await ok(clientWith(retries).GET("/models"));
    assert.equal(list.object, "list");
    assert.equal(scripted.arrivals.length, 2);
    assert.ok(retries[0]?.cause instanceof APIConnectionError);
  });

  test("a POST with an Idempotency-Key is retried after a reset, with the same key", async () => {
    scripted.script("reset", { status: 200, body: RESPONSE });
    await ok(clientWith([]).POST("/responses", { body: BODY, headers: { "Idempotency-Key": "key-1" } }));
    assert.deepEqual(
      scripted.arrivals.map((a) => a.headers["idempotency-key"]),
      ["key-1", "key-1"],
    );
  });

  test("a refused connection proves the POST never left, so it is retried", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const retries: RetryInfo[] = [];
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      retry: { maxRetries: 2, initialDelayMs: 10, onRetry: (r) => retries.push(r) },
    });
    await assert.rejects(
      client.POST("/responses", { body: BODY }),
      (error: Error) => error instanceof APIConnectionError && error.systemCode === "ECONNREFUSED" && error.neverSent,
    );
    assert.equal(retries.length, 2);
  });

  test("retry: false sends once", async () => {
    scripted.script(rateLimited("1"), { status: 200 });
    const client = createClient({ baseUrl: scripted.baseUrl, retry: false });
    const error = await ok(client.GET("/models")).catch((e: unknown) => e);
    assert.ok(error instanceof ApiError && error.status === 429);
    assert.equal(scripted.arrivals.length, 1);
  });
});

describe("the policy itself", () => {
  test("Retry-After as seconds and as an HTTP date", () => {
    assert.equal(parseRetryAfter("2"), 2_000);
    assert.equal(parseRetryAfter("0"), 0);
    const now = Date.parse("2026-01-01T00:00:00Z");
    assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now), 5_000);
    assert.equal(parseRetryAfter("soon"), null);
    assert.equal(parseRetryAfter(null), null);
  });

  test("backoff doubles, is jittered between half and all of its ceiling, and is capped", () => {
    for (let retries = 0; retries < 8; retries++) {
      const ceiling = Math.min(1_000, 100 * 2 ** retries);
      for (let i = 0; i < 20; i++) {
        const delay = backoff(retries, { initialDelayMs: 100, maxDelayMs: 1_000 });
        assert.ok(delay >= ceiling / 2 && delay <= ceiling, `${delay} for retry ${retries}`);
      }
    }
  });

  test("an aborted request is never retried, nor an error that is not a connection failure", () => {
    const abort = new APIUserAbortError({ cause: new DOMException("stopped", "AbortError") });
    const attempt = { method: "GET", idempotencyKey: false, retries: 0 };
    assert.equal(retryDelay({ error: abort }, attempt), null);
    assert.equal(retryDelay({ error: new SyntaxError("Unexpected token < in JSON") }, attempt), null);
    assert.notEqual(
      retryDelay({ error: new APIConnectionError({ cause: new TypeError("fetch failed") }) }, attempt),
      null,
    );
  });
});

describe("against the reference server", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  test("wonka's per-minute limit: the 429 is retried after its Retry-After and then succeeds", async () => {
    // wonka may make 2 requests a minute. Open its window 58.5 s in the past (one request
    // counted), so the second call here is the 3rd in the window and the window ends ~1.5 s later.
    await server.store.rateWindows.hit("wonka", new Date(Date.now() - 58_500), 60_000);
    const retries: RetryInfo[] = [];
    const client = createClient({
      baseUrl: server.baseUrl,
      apiKey: server.keys.wonka as string,
      retry: { onRetry: (r) => retries.push(r) },
    });
    await ok(client.GET("/models"));
    assert.equal(retries.length, 0);
    const started = performance.now();
    const response = await ok(client.POST("/responses", { body: { ...BODY, max_output_tokens: 4 } }));
    const waited = performance.now() - started;
    assert.equal(response.object, "response");
    assert.equal(retries.length, 1);
    assert.equal(retries[0]?.cause, 429);
    assert.equal(retries[0]?.fromRetryAfter, true);
    // Retry-After: the at most 1.5 s left (less when the machine is slow), rounded up to whole seconds.
    const delayMs = retries[0]?.delayMs ?? 0;
    assert.ok(delayMs === 1_000 || delayMs === 2_000, `delay ${delayMs} ms`);
    assert.ok(waited >= delayMs, `the call took ${waited} ms`);
  });
});
