/**
 * Every error code the interface document lists for POST /responses that this server can
 * produce, produced over HTTP against the real server (the local routing; the upstream
 * codes are in routing.test.ts). Each checks status, error.type, error.code and
 * x-request-id. Codes this server cannot produce on /responses: OPERATION_NOT_ALLOWED
 * (the path has no {account}) and DEPLOYMENT_SCALING_UP (models are always loaded).
 */
import assert from "node:assert/strict";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, test } from "vitest";
import type { GenerationEvent, Provider } from "../../server/inference/engine.ts";
import { DATABASE_FILE } from "../../server/store/sqlite.ts";
import { databaseUrlFor } from "../../harness/test-store.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { post, responsesBody } from "./http.ts";
import { assertError, INVALID_REQUEST } from "../support/http.ts";

let server: TestServer;

/** A provider that crashes in a way no one planned for, with a secret in the message. */
const crashing: Provider = {
  name: "crash",

  async *generate(): AsyncIterable<GenerationEvent> {
    throw new Error("secret internal detail /etc/passwd");
  },
};

beforeAll(async () => {
  server = await startTestServer({
    maxBodyBytes: 64 * 1024,
    engine: { mediaMaxBytes: 1024 },
    providers: { crash: crashing },
    routing: {
      version: "errors-test",
      providers: { local: { type: "local" }, crash: { type: "local" } },
      models: {
        "tiny-chat": { primary: "local" },
        "tiny-reasoner": { primary: "crash" },
        "tiny-chat-community": { primary: "local" },
      },
      contentPolicy: { blockedInputTerms: ["blocked-demo-term"], blockedOutputTerms: [] },
    },
  });
});
afterAll(() => server.close());

const call = (body: unknown, key = server.keys.acme, headers: Record<string, string> = {}) =>
  post(server.baseUrl, "/responses", body, { key, headers });
const image = (url: string) => [
  {
    type: "message",
    role: "user",
    content: [
      { type: "input_text", text: "What is this?" },
      { type: "input_image", image_url: url },
    ],
  },
];

describe("400", () => {
  test("INVALID_REQUEST: store absent, store true, previous_response_id, malformed JSON, a wrong type", async () => {
    const { store: _omitted, ...withoutStore } = responsesBody();
    for (const [body, param] of [
      [withoutStore, "store"],
      [responsesBody({ store: true }), "store"],
      [responsesBody({ previous_response_id: "resp_123" }), "previous_response_id"],
      [responsesBody({ max_output_tokens: "many" }), "max_output_tokens"],
    ] as const) {
      const result = await call(body);
      assertError(result, INVALID_REQUEST);
      assert.equal(result.body.error.param, param, result.text);
    }
    assertError(await call('{"model": "tiny-chat",'), INVALID_REQUEST);
  });

  test("CONTENT_BLOCKED_INPUT: the input holds a blocked term", async () => {
    assertError(await call(responsesBody({ input: "Tell me about blocked-demo-term." })), {
      status: 400,
      code: "CONTENT_BLOCKED_INPUT",
      type: "invalid_request_error",
    });
    assertError(await call(responsesBody({ instructions: "BLOCKED-DEMO-TERM" })), {
      status: 400,
      code: "CONTENT_BLOCKED_INPUT",
      type: "invalid_request_error",
    });
  });

  test("CONTEXT_LENGTH_EXCEEDED: input plus the output ceiling exceed the window", async () => {
    const result = await call(responsesBody({ max_output_tokens: 100_000 }));
    assertError(result, { status: 400, code: "CONTEXT_LENGTH_EXCEEDED", type: "invalid_request_error" });
    assert.equal(result.body.error.param, "max_output_tokens");
    // Over the 16 384-token window in 34 KB (" 7" is a token per byte), under this server's body limit.
    assertError(await call(responsesBody({ input: " 7".repeat(17_000), max_output_tokens: undefined })), {
      status: 400,
      code: "CONTEXT_LENGTH_EXCEEDED",
      type: "invalid_request_error",
    });
  });

  test("MEDIA_FETCH_FAILED: an image URL off the allow-list", async () => {
    const result = await call(responsesBody({ input: image("http://127.0.0.1:9/cat.png") }));
    assertError(result, { status: 400, code: "MEDIA_FETCH_FAILED", type: "invalid_request_error" });
    assert.equal(result.body.error.param, "input[0].content[1]");
  });

  test("MEDIA_UNSUPPORTED: an inline image to a text-only model", async () => {
    assertError(await call(responsesBody({ input: image("data:image/png;base64,iVBORw0KGgo=") })), {
      status: 400,
      code: "MEDIA_UNSUPPORTED",
      type: "invalid_request_error",
    });
  });

  test("MODEL_CAPABILITY_UNSUPPORTED: reasoning on a model that does not reason", async () => {
    const result = await call(responsesBody({ reasoning: { effort: "low" } }));
    assertError(result, { status: 400, code: "MODEL_CAPABILITY_UNSUPPORTED", type: "invalid_request_error" });
    assert.equal(result.body.error.param, "reasoning");
  });
});

describe("401, 402, 403, 404", () => {
  test("INVALID_API_KEY: no key, an unknown key, a malformed header", async () => {
    assertError(await post(server.baseUrl, "/responses", responsesBody()), {
      status: 401,
      code: "INVALID_API_KEY",
      type: "authentication_error",
    });
    assertError(await call(responsesBody(), "sk-not-a-key-000000000000000000"), {
      status: 401,
      code: "INVALID_API_KEY",
      type: "authentication_error",
    });
    const result = await post(server.baseUrl, "/responses", responsesBody(), {
      headers: { authorization: "Basic abc" },
    });
    assertError(result, { status: 401, code: "INVALID_API_KEY", type: "authentication_error" });
  });

  test("INSUFFICIENT_BALANCE: an account with a zero balance", async () => {
    assertError(await call(responsesBody(), server.keys.umbrella), {
      status: 402,
      code: "INSUFFICIENT_BALANCE",
      type: "billing_error",
    });
  });

  test("PAYMENT_REQUIRED: a paid model without a payment method", async () => {
    assertError(await call(responsesBody(), server.keys.hooli), {
      status: 402,
      code: "PAYMENT_REQUIRED",
      type: "billing_error",
    });
  });

  test("AGREEMENT_REQUIRED: a model whose licence the account has not accepted", async () => {
    assertError(await call(responsesBody({ model: "tiny-chat-community" }), server.keys.globex), {
      status: 403,
      code: "AGREEMENT_REQUIRED",
      type: "permission_error",
    });
    assert.equal((await call(responsesBody({ model: "tiny-chat-community" }), server.keys.acme)).status, 200);
  });

  test("MODEL_NOT_ALLOWED: a model outside the account's allow-list", async () => {
    assertError(await call(responsesBody({ model: "tiny-reasoner" }), server.keys.hooli), {
      status: 403,
      code: "MODEL_NOT_ALLOWED",
      type: "permission_error",
    });
  });

  test("TENANT_SUSPENDED: a suspended account's key", async () => {
    assertError(await call(responsesBody(), server.keys.initech), {
      status: 403,
      code: "TENANT_SUSPENDED",
      type: "permission_error",
    });
  });

  test("MODEL_NOT_FOUND: an unknown model, and another account's model", async () => {
    assertError(await call(responsesBody({ model: "no-such-model" })), {
      status: 404,
      code: "MODEL_NOT_FOUND",
      type: "not_found_error",
    });
    assertError(await call(responsesBody({ model: "accounts/globex/models/secret" })), {
      status: 404,
      code: "MODEL_NOT_FOUND",
      type: "not_found_error",
    });
  });

  test("rule 3: no GET or DELETE on /responses/{id}", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${server.baseUrl}/responses/resp_123`, {
        method,
        headers: { authorization: `Bearer ${server.keys.acme}` },
      });
      assert.equal(response.status, 404);
      assert.equal(((await response.json()) as any).error.code, "NOT_FOUND");
    }
  });
});

describe("413, 429", () => {
  test("MEDIA_TOO_LARGE: an inline image over the media limit, and a body over the body limit", async () => {
    const big = Buffer.alloc(2048, 1).toString("base64");
    assertError(await call(responsesBody({ input: image(`data:image/png;base64,${big}`) })), {
      status: 413,
      code: "MEDIA_TOO_LARGE",
      type: "invalid_request_error",
    });
    assertError(await call(responsesBody({ input: "x".repeat(100 * 1024) })), {
      status: 413,
      code: "MEDIA_TOO_LARGE",
      type: "invalid_request_error",
    });
  });

  test("TENANT_BUDGET_EXCEEDED with Retry-After: an account whose budget is spent", async () => {
    const result = await call(responsesBody(), server.keys.vandelay);
    assertError(result, { status: 429, code: "TENANT_BUDGET_EXCEEDED", type: "rate_limit_error" });
    assert.match(result.headers.get("retry-after") ?? "", /^\d+$/);
  });

  test("TENANT_RATE_LIMITED with Retry-After: the third call in a minute at two per minute", async () => {
    assert.equal((await call(responsesBody(), server.keys.wonka)).status, 200);
    assert.equal((await call(responsesBody(), server.keys.wonka)).status, 200);
    const result = await call(responsesBody(), server.keys.wonka);
    assertError(result, { status: 429, code: "TENANT_RATE_LIMITED", type: "rate_limit_error" });
    assert.ok(Number(result.headers.get("retry-after")) >= 1);
  });
});

describe("500, 503", () => {
  test("INTERNAL: a provider crash is a 500 that leaks nothing", async () => {
    const result = await call(responsesBody({ model: "tiny-reasoner" }));
    assertError(result, { status: 500, code: "INTERNAL", type: "server_error" });
    assert.doesNotMatch(result.text, /secret|passwd|crash|at .*\.ts/);
  });

  test("STORAGE_UNAVAILABLE with Retry-After: the database stays locked past the busy timeout", async () => {
    const release = await lockStore();
    try {
      const result = await call(responsesBody(), server.keys.globex);
      assertError(result, { status: 503, code: "STORAGE_UNAVAILABLE", type: "service_unavailable" });
      assert.match(result.headers.get("retry-after") ?? "", /^\d+$/);
    } finally {
      await release();
    }
    assert.equal(
      (await call(responsesBody(), server.keys.globex)).status,
      200,
      "the server recovers once the lock is gone",
    );
  });
});

/**
 * Holds a lock that stops the server's next write (SQLite: the write lock; PostgreSQL: the
 * API key table, read by authentication, past the statement timeout); returns its release.
 */
async function lockStore(): Promise<() => Promise<void>> {
  const url = await databaseUrlFor(server.dataDir);
  if (url === undefined) {
    const blocker = new DatabaseSync(path.join(server.dataDir, DATABASE_FILE));
    blocker.exec("BEGIN IMMEDIATE");
    return async () => {
      blocker.exec("ROLLBACK");
      blocker.close();
    };
  }
  const { default: pg } = await import("pg");
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  await blocker.query("BEGIN");
  await blocker.query("LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE");
  return async () => {
    await blocker.query("ROLLBACK");
    await blocker.end();
  };
}

describe("billing", () => {
  test("a paid call takes its cost from the balance; a free model costs nothing", async () => {
    const balance = async () => (await server.store.accounts.get("globex"))?.balanceMicros ?? Number.NaN;
    const before = await balance();
    const result = await call(responsesBody(), server.keys.globex);
    assert.equal(result.status, 200);
    assert.ok((await balance()) < before, "tiny-chat is paid");
    const acmeBefore = (await server.store.accounts.get("acme"))?.balanceMicros;
    assert.equal((await call(responsesBody({ model: "tiny-chat-community" }))).status, 200);
    assert.equal((await server.store.accounts.get("acme"))?.balanceMicros, acmeBefore, "tiny-chat-community is free");
  });
});
