/**
 * The context window as the API counts it (docs/contract-decisions.md): the embedded models
 * declare 16 384 tokens of input plus output, so that the messages clients' usual default
 * `max_tokens` (4 096 to 8 192) is accepted; and CONTEXT_LENGTH_EXCEEDED names the field
 * the request used, as each endpoint calls it.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import { platformModels } from "../../server/inference/catalog.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { post } from "./http.ts";
import { assertError } from "../support/http.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const call = (path: string, body: Record<string, unknown>) =>
  post(server.baseUrl, path, body, { key: server.keys.acme });

describe("the embedded models' window is 16 384 tokens as the API counts them", () => {
  test("the committed catalogue declares it for every embedded model", () => {
    for (const model of platformModels()) assert.equal(model.contextWindow, 16_384, model.id);
  });

  for (const maxTokens of [4096, 8192]) {
    test(`messages with max_tokens ${maxTokens} (a messages client's default) is answered`, async () => {
      const result = await call("/messages", {
        model: "tiny-chat",
        max_tokens: maxTokens,
        messages: [{ role: "user", content: "Hello!" }],
      });
      assert.equal(result.status, 200, result.text);
      assert.equal(result.body.type, "message");
    });
  }

  test("chat completions with max_tokens 8192 is answered", async () => {
    const result = await call("/chat/completions", {
      model: "tiny-reasoner",
      max_tokens: 8192,
      messages: [{ role: "user", content: "Hello!" }],
    });
    assert.equal(result.status, 200, result.text);
  });

  test("the whole window as the ceiling, with any input, is still CONTEXT_LENGTH_EXCEEDED", async () => {
    const result = await call("/messages", {
      model: "tiny-chat",
      max_tokens: 16_384,
      messages: [{ role: "user", content: "Hello!" }],
    });
    assertError(result, { status: 400, code: "CONTEXT_LENGTH_EXCEEDED", type: "invalid_request_error" });
  });

  test("GET /models still lists the embedded models", async () => {
    const result = await fetch(`${server.baseUrl}/models`, {
      headers: { authorization: `Bearer ${server.keys.acme}` },
    });
    const body = (await result.json()) as { data: { id: string }[] };
    assert.deepEqual(
      body.data.map((m) => m.id).filter((id) => id.startsWith("tiny-")),
      ["tiny-chat", "tiny-reasoner", "tiny-chat-community"],
    );
  });
});

describe("CONTEXT_LENGTH_EXCEEDED names the field the request used", () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ["responses", "/responses", { input: "Hi", store: false, max_output_tokens: 100_000 }, "max_output_tokens"],
    [
      "chat max_tokens",
      "/chat/completions",
      { messages: [{ role: "user", content: "Hi" }], max_tokens: 100_000 },
      "max_tokens",
    ],
    [
      "chat max_completion_tokens",
      "/chat/completions",
      { messages: [{ role: "user", content: "Hi" }], max_completion_tokens: 100_000 },
      "max_completion_tokens",
    ],
    ["completions", "/completions", { prompt: "Hi", max_tokens: 100_000 }, "max_tokens"],
    ["messages", "/messages", { messages: [{ role: "user", content: "Hi" }], max_tokens: 100_000 }, "max_tokens"],
  ];
  for (const [name, path, body, field] of cases) {
    test(`${name}: param ${field}, and the message says ${field}`, async () => {
      const result = await call(path, { model: "tiny-chat", ...body });
      assertError(result, { status: 400, code: "CONTEXT_LENGTH_EXCEEDED", type: "invalid_request_error" });
      assert.equal(result.body.error.param, field);
      assert.match(result.body.error.message, new RegExp(`\\b${field}\\b`));
      if (field !== "max_output_tokens") assert.doesNotMatch(result.body.error.message, /max_output_tokens/);
    });
  }
});

describe("an input that alone fills the window: CONTEXT_LENGTH_EXCEEDED names the input field", () => {
  // Over the 16 384-token window in 34 KB (" 7" is a token per byte), under the body limit.
  const long = " 7".repeat(17_000);
  const cases: [string, string, Record<string, unknown>, string][] = [
    ["responses", "/responses", { input: long, store: false, max_output_tokens: 16 }, "input"],
    [
      "chat completions",
      "/chat/completions",
      { messages: [{ role: "user", content: long }], max_tokens: 16 },
      "messages",
    ],
    ["completions, its default max_tokens", "/completions", { prompt: long }, "prompt"],
    ["messages", "/messages", { messages: [{ role: "user", content: long }], max_tokens: 16 }, "messages"],
  ];
  for (const [name, path, body, field] of cases) {
    test(`${name}: param ${field}; the message does not ask for a ceiling of 0`, async () => {
      const result = await call(path, { model: "tiny-chat", ...body });
      assertError(result, { status: 400, code: "CONTEXT_LENGTH_EXCEEDED", type: "invalid_request_error" });
      assert.equal(result.body.error.param, field);
      assert.match(result.body.error.message, /fills the model's context window of 16384 tokens; shorten the input/);
      assert.doesNotMatch(result.body.error.message, /at most 0|max_tokens|max_output_tokens/);
      if (field !== "input") assert.match(result.body.error.message, new RegExp(`\\(${field}\\)`));
    });
  }
});
