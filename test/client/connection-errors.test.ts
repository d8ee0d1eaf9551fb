/**
 * A call that gets no answer throws a typed error, never fetch's own TypeError: a refused
 * connection and a body cut off are APIConnectionError (fetch's error as `cause`), the
 * runtime's own time limit is APIConnectionTimeoutError, the caller's signal is
 * APIUserAbortError. Small local servers misbehave on purpose; nothing is mocked.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, test } from "vitest";
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  createClient,
  ok,
  streamChatCompletion,
} from "../../client/index.ts";
import { freePort, listenLocally, type Listening } from "../../harness/listen.ts";

/** Answers GET /v1/models only after 5 s; POST /v1/chat/completions sends one chunk, then drops the connection. */
const server = http.createServer((req, res) => {
  if (req.url === "/v1/chat/completions") {
    res.writeHead(200, { "content-type": "text/event-stream", "x-request-id": "req_cut" });
    const chunk = { id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [] };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    setTimeout(() => res.socket?.destroy(), 50);
    return;
  }
  setTimeout(() => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data: [] }));
  }, 5_000).unref();
});
let listening: Listening;
let baseUrl: string;

beforeAll(async () => {
  listening = await listenLocally(server);
  baseUrl = `${listening.origin}/v1`;
});
afterAll(() => listening.close());

describe("no answer", () => {
  test("a refused connection is an APIConnectionError with fetch's error as cause and ECONNREFUSED as systemCode", async () => {
    const client = createClient({ baseUrl: `http://127.0.0.1:${await freePort()}/v1`, retry: false });
    const error = await ok(client.GET("/models")).catch((e: unknown) => e);
    assert.ok(error instanceof APIConnectionError, String(error));
    assert.ok(!(error instanceof APIConnectionTimeoutError));
    assert.equal(error.name, "APIConnectionError");
    assert.equal(error.systemCode, "ECONNREFUSED");
    assert.ok(error.neverSent, "a refused connection proves the request never left");
    assert.ok(error.cause instanceof TypeError, "the raw fetch error is the cause");
    assert.match(error.message, /ECONNREFUSED/);
  });

  test("the runtime's headers timeout is an APIConnectionTimeoutError", async () => {
    const dispatcher = new Agent({ headersTimeout: 200 });
    try {
      const client = createClient({
        baseUrl,
        retry: false,
        // undici's own fetch takes a dispatcher with short time limits (Node's bundled one cannot).
        fetch: (request) =>
          undiciFetch(request.url, { method: request.method, headers: [...request.headers], dispatcher }).then(
            (answer) =>
              new Response(answer.body as ReadableStream, {
                status: answer.status,
                headers: Object.fromEntries(answer.headers),
              }),
          ),
      });
      const error = await ok(client.GET("/models")).catch((e: unknown) => e);
      assert.ok(error instanceof APIConnectionTimeoutError, String(error));
      assert.ok(error instanceof APIConnectionError, "a timeout is a connection error too");
      assert.equal(error.systemCode, "UND_ERR_HEADERS_TIMEOUT");
      assert.ok(!error.neverSent, "the request was sent; only its answer is missing");
    } finally {
      await dispatcher.close();
    }
  });

  test("a stream whose connection is dropped part-way throws an APIConnectionError from the loop and from finalResponse()", async () => {
    const client = createClient({ baseUrl, retry: false });
    const stream = await streamChatCompletion(client, { model: "m", messages: [{ role: "user", content: "Hi" }] });
    let chunks = 0;
    const error = await (async () => {
      for await (const _ of stream) chunks++;
    })().catch((e: unknown) => e);
    assert.equal(chunks, 1);
    assert.ok(error instanceof APIConnectionError, String(error));
    assert.ok(error.cause instanceof Error, "the body's read error is the cause");
    await assert.rejects(stream.finalResponse(), (e) => e === error);
  });
});

describe("the caller's signal", () => {
  test("an abort while waiting for the answer is an APIUserAbortError whose cause is the signal's reason", async () => {
    const client = createClient({ baseUrl, retry: false });
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error("the user closed the page")), 100);
    const started = performance.now();
    const error = await ok(client.GET("/models", { signal: abort.signal })).catch((e: unknown) => e);
    assert.ok(error instanceof APIUserAbortError, String(error));
    assert.equal(error.name, "APIUserAbortError");
    assert.equal((error.cause as Error).message, "the user closed the page");
    assert.ok(performance.now() - started < 4_000, "ended by the abort, not by the answer");
  });

  test("a signal aborted before the call is an APIUserAbortError, not retried", async () => {
    const client = createClient({ baseUrl: `http://127.0.0.1:${await freePort()}/v1` });
    await assert.rejects(
      ok(client.GET("/models", { signal: AbortSignal.abort() })),
      (error: Error) => error instanceof APIUserAbortError,
    );
  });
});
