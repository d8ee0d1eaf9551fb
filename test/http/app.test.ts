/**
 * The HTTP core over real HTTP: request ids, the error envelope for every kind of failure,
 * 404/405/413/malformed bodies, crashes that leak nothing, response validation.
 */
import assert from "node:assert/strict";
import { request as undiciRequest } from "undici";
import { afterAll, beforeAll, describe, it } from "vitest";
import { call, responsesBody, startAppServer } from "./harness.ts";
import { REQUEST_ID, assertError, INVALID_REQUEST, NOT_FOUND } from "../support/http.ts";
import type { AppServer } from "./harness.ts";
import { MODEL_LIST, SECRET_DETAIL } from "./test-routes.ts";
import { captureLog } from "../ops/log-capture.ts";

let server: AppServer;
let key: string;

beforeAll(async () => {
  server = await startAppServer({ maxBodyBytes: 1024 });
  key = server.keys.acme!;
});
afterAll(() => server.close());

describe("request ids", () => {
  it("every success carries a fresh x-request-id", async () => {
    const first = await call(server, "/v1/models", { key });
    const second = await call(server, "/v1/models", { key });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, MODEL_LIST);
    assert.match(first.headers.get("x-request-id") ?? "", REQUEST_ID);
    assert.notEqual(first.headers.get("x-request-id"), second.headers.get("x-request-id"));
  });

  it("a well-formed client-sent x-request-id is kept; a malformed one is replaced", async () => {
    const kept = await call(server, "/v1/models", { key, headers: { "x-request-id": "caller-id_1.2:3" } });
    assert.equal(kept.headers.get("x-request-id"), "caller-id_1.2:3");
    for (const bad of ["has space", "x".repeat(129), "semi;colon"]) {
      const replaced = await call(server, "/v1/models", { key, headers: { "x-request-id": bad } });
      assert.match(replaced.headers.get("x-request-id") ?? "", REQUEST_ID, bad);
    }
  });
});

describe("paths and methods", () => {
  it("an unknown path under /v1 is 404 NOT_FOUND", async () => {
    assertError(await call(server, "/v1/nope", { key }), NOT_FOUND);
  });

  it("an unknown path outside /v1 is 404 NOT_FOUND, with no key needed", async () => {
    assertError(await call(server, "/nope"), NOT_FOUND);
  });

  it("there is no GET /responses/{id} (rule 3): 404 NOT_FOUND", async () => {
    assertError(await call(server, "/v1/responses/resp_1", { key }), NOT_FOUND);
  });

  it("a known path with a wrong method is 405 METHOD_NOT_ALLOWED with Allow", async () => {
    const result = await call(server, "/v1/responses", { key });
    assertError(result, { status: 405, code: "METHOD_NOT_ALLOWED", type: "invalid_request_error", param: null });
    assert.equal(result.headers.get("allow"), "POST");
  });

  it("a 405 is answered before authentication", async () => {
    const result = await call(server, "/v1/models", { method: "DELETE" });
    assertError(result, { status: 405, code: "METHOD_NOT_ALLOWED", type: "invalid_request_error" });
    assert.equal(result.headers.get("allow"), "GET");
  });

  it("a conditional GET is answered in full: no ETag, no 304, which the contract does not declare", async () => {
    // undici's request(), not fetch: fetch adds `Cache-Control: no-cache` to a conditional
    // request, which makes express answer in full anyway, so a test through it cannot fail.
    const conditions = [
      { "if-none-match": "*" },
      { "if-none-match": 'W/"anything"' },
      { "if-modified-since": new Date(Date.now() + 86_400_000).toUTCString() },
    ];
    for (const condition of conditions) {
      const answer = await undiciRequest(`${server.baseUrl}/v1/models`, {
        headers: { authorization: `Bearer ${key}`, ...condition },
      });
      const text = await answer.body.text();
      assert.equal(answer.statusCode, 200, JSON.stringify(condition));
      assert.equal(answer.headers.etag, undefined);
      assert.deepEqual(JSON.parse(text), MODEL_LIST);
    }
  });

  it("a model name with encoded slashes reaches the handler decoded", async () => {
    const result = await call(server, "/v1/models/accounts%2Facme%2Fmodels%2Fmine", { key });
    assert.equal(result.status, 200);
    assert.equal(result.body.id, "accounts/acme/models/mine");
  });
});

describe("request bodies", () => {
  it("a body its Content-Encoding does not decode is 400 INVALID_REQUEST that says so", async () => {
    for (const encoding of ["gzip", "deflate", "br"]) {
      const result = await call(server, "/v1/responses", {
        key,
        method: "POST",
        body: JSON.stringify(responsesBody()),
        headers: { "content-type": "application/json", "content-encoding": encoding },
      });
      assertError(result, { status: 400, code: "INVALID_REQUEST", type: "invalid_request_error" });
      assert.match(result.body.error.message, new RegExp(`Content-Encoding \\(${encoding}\\)`), encoding);
    }
  });

  it("malformed JSON is 400 INVALID_REQUEST", async () => {
    const result = await call(server, "/v1/responses", {
      key,
      method: "POST",
      body: '{"model": ',
      headers: { "content-type": "application/json" },
    });
    assertError(result, { status: 400, code: "INVALID_REQUEST", type: "invalid_request_error", param: null });
  });

  it("a JSON body over maxBodyBytes is 413 MEDIA_TOO_LARGE", async () => {
    const result = await call(server, "/v1/responses", {
      key,
      method: "POST",
      body: responsesBody({ input: "x".repeat(2000) }),
    });
    assertError(result, { status: 413, code: "MEDIA_TOO_LARGE", type: "invalid_request_error" });
  });

  it("a body of a media type the operation does not take is 400, not 415", async () => {
    const result = await call(server, "/v1/responses", {
      key,
      method: "POST",
      body: "hello",
      headers: { "content-type": "text/plain" },
    });
    assertError(result, INVALID_REQUEST);
  });

  it("a missing body is 400 INVALID_REQUEST", async () => {
    assertError(await call(server, "/v1/responses", { key, method: "POST" }), INVALID_REQUEST);
  });

  it("a JSON scalar is not a request body: 400", async () => {
    const result = await call(server, "/v1/responses", {
      key,
      method: "POST",
      body: '"hi"',
      headers: { "content-type": "application/json" },
    });
    assertError(result, INVALID_REQUEST);
  });
});

describe("failures in handlers", () => {
  it("a thrown Error is 500 INTERNAL with a generic message and nothing internal", async (t) => {
    const log = captureLog(t);
    for (const model of ["crash", "crash-async"]) {
      const result = await call(server, `/v1/models/${model}`, { key });
      assertError(result, { status: 500, code: "INTERNAL", type: "server_error", param: null });
      assert.doesNotMatch(result.text, /hunter2|Error|at /);
      assert.equal(result.body.error.message, "An unexpected error occurred.");
    }
    // The details go to the log, under the request id.
    assert.ok(log.lines().some((line) => line.includes(SECRET_DETAIL)));
  });

  it("an ApiError with retryAfter is its status with Retry-After (503)", async (t) => {
    captureLog(t);
    const result = await call(server, "/v1/models/scaling", { key });
    assertError(result, { status: 503, code: "DEPLOYMENT_SCALING_UP", type: "service_unavailable" });
    assert.equal(result.headers.get("retry-after"), "7");
  });

  it("an ApiError 429 carries Retry-After", async () => {
    const result = await call(server, "/v1/models/upstream-limited", { key });
    assertError(result, { status: 429, code: "UPSTREAM_RATE_LIMITED", type: "rate_limit_error" });
    assert.equal(result.headers.get("retry-after"), "3");
  });

  it("a 503 raised without retryAfter still carries Retry-After", async (t) => {
    captureLog(t);
    const result = await call(server, "/v1/models/no-retry-after", { key });
    assertError(result, { status: 503, code: "UPSTREAM_UNAVAILABLE", type: "service_unavailable" });
    assert.match(result.headers.get("retry-after") ?? "", /^[0-9]+$/);
  });

  it("an ApiError keeps its param", async () => {
    const result = await call(server, "/v1/models/missing", { key });
    assertError(result, { status: 404, code: "MODEL_NOT_FOUND", type: "not_found_error", param: "model" });
  });

  it("a failure after a stream started closes the connection instead of writing JSON", async (t) => {
    captureLog(t);
    const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny-chat", messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("x-request-id") ?? "", REQUEST_ID);
    await assert.rejects(response.text(), /terminated/);
  });
});

describe("response validation", () => {
  it("a handler's body that breaks the contract is a loud 500 INTERNAL, logged with the validator's message", async (t) => {
    const log = captureLog(t);
    const result = await call(server, "/v1/models/breaks-contract", { key });
    assertError(result, { status: 500, code: "INTERNAL", type: "server_error" });
    assert.doesNotMatch(result.text, /created/);
    assert.ok(log.lines().some((line) => /must have required property 'created'/.test(line)));
  });

  it("is off when validateResponses is false", async () => {
    const unchecked = await startAppServer({ validateResponses: false });
    try {
      const result = await call(unchecked, "/v1/models/breaks-contract", { key: unchecked.keys.acme! });
      assert.equal(result.status, 200);
      assert.deepEqual(result.body, { id: "breaks-contract", object: "model" });
    } finally {
      await unchecked.close();
    }
  });
});

describe("the messages endpoint's envelope", () => {
  it("carries a top-level type: error", async () => {
    const result = await call(server, "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": key },
      body: { model: "tiny-chat", max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
    });
    assertError(result, { status: 404, code: "MODEL_NOT_FOUND", type: "not_found_error" });
    assert.equal(result.body.type, "error");
  });

  it("also on its validation errors and 401s", async () => {
    const invalid = await call(server, "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": key },
      body: { model: "tiny-chat" },
    });
    assertError(invalid, { status: 400, code: "INVALID_REQUEST", type: "invalid_request_error", param: "max_tokens" });
    assert.equal(invalid.body.type, "error");
    const unauthenticated = await call(server, "/v1/messages", { method: "POST", body: { model: "tiny-chat" } });
    assertError(unauthenticated, { status: 401, code: "INVALID_API_KEY", type: "authentication_error" });
    assert.equal(unauthenticated.body.type, "error");
  });

  it("other endpoints' envelopes have no top-level type", async () => {
    const result = await call(server, "/v1/nope", { key });
    assert.deepEqual(Object.keys(result.body), ["error"]);
  });
});
