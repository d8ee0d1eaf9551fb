/**
 * The client against the whole reference server: every inference operation (responses,
 * chat completions, completions, messages, models), plain and streamed, errors as
 * ApiError, a mid-stream `error` event, and cancellation that reaches the upstream.
 *
 * `tiny-chat` runs on the embedded model; `tiny-reasoner` is routed to a fake upstream
 * (test/server/fake-upstream.ts) with no standby, so its failures reach the client.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, beforeEach, describe, test } from "vitest";
import {
  ApiError,
  APIUserAbortError,
  createClient,
  ok,
  streamChatCompletion,
  streamCompletion,
  streamMessage,
  streamResponse,
  type ApiClient,
  type ResponseStreamEvent,
} from "../../client/index.ts";
import { startFakeUpstream, type FakeUpstream } from "../server/fake-upstream.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

let server: TestServer;
let upstream: FakeUpstream;
let client: ApiClient;

const UPSTREAM_TEXT = "The upstream says hello to you.";

beforeAll(async () => {
  upstream = await startFakeUpstream({ kind: "stream", text: UPSTREAM_TEXT });
  server = await startTestServer({
    routing: {
      version: "client-test-1",
      providers: {
        local: { type: "local" },
        upstream: { type: "openai-compatible", baseUrl: upstream.baseUrl, model: "upstream-model", timeoutMs: 2_000 },
      },
      models: {
        "tiny-chat": { primary: "local", standby: [] },
        "tiny-reasoner": { primary: "upstream", standby: [] },
        "tiny-chat-community": { primary: "local", standby: [] },
      },
      contentPolicy: { blockedInputTerms: [], blockedOutputTerms: ["forbidden-output"] },
    },
  });
  client = createClient({ baseUrl: server.baseUrl, apiKey: server.keys.acme as string });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.behaviour = { kind: "stream", text: UPSTREAM_TEXT };
});

/** The text of a response's message items. */
function outputText(response: { output: { type: string; content?: { text: string }[] }[] }): string {
  return response.output
    .flatMap((item) => (item.type === "message" ? (item.content ?? []).map((c) => c.text) : []))
    .join("");
}

/** Runs `body` and returns the ApiError it throws. */
async function apiError(body: () => Promise<unknown>): Promise<ApiError> {
  try {
    await body();
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected an ApiError");
}

describe("POST /responses", () => {
  test("a plain call returns the typed response", async () => {
    const { data, response } = await client.POST("/responses", {
      body: { model: "tiny-chat", input: "Hello!", store: false, temperature: 0, max_output_tokens: 12 },
    });
    assert.ok(data, "200 with a body");
    assert.equal(data.object, "response");
    assert.equal(data.store, false);
    assert.ok(["completed", "incomplete"].includes(data.status));
    assert.ok(outputText(data).length > 0);
    assert.equal(data.usage.total_tokens, data.usage.input_tokens + data.usage.output_tokens);
    assert.match(response.headers.get("x-request-id") ?? "", /^req_/);
  });

  test("a streamed response consumed to the end: the contract's events in order, deltas adding up to the final text", async () => {
    const stream = await streamResponse(client, {
      model: "tiny-chat",
      input: "Tell me about the sea.",
      store: false,
      temperature: 0,
      max_output_tokens: 16,
    });
    assert.match(stream.requestId ?? "", /^req_/);
    const events: ResponseStreamEvent[] = [];
    let deltas = "";
    for await (const event of stream) {
      events.push(event);
      if (event.type === "response.output_text.delta") deltas += event.delta;
    }
    const types = events.map((e) => e.type);
    assert.deepEqual(types.slice(0, 4), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    assert.ok(types.includes("response.output_text.delta"));
    assert.deepEqual(types.slice(-4), [
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    const final = await stream.finalResponse();
    assert.equal(final.status === "completed" || final.status === "incomplete", true);
    assert.equal(outputText(final), deltas);
    assert.ok(final.usage.output_tokens > 0);
  });

  test("finalResponse() without iterating reads the stream itself", async () => {
    const stream = await streamResponse(client, { model: "tiny-reasoner", input: "Hi", store: false });
    const final = await stream.finalResponse();
    assert.equal(outputText(final), UPSTREAM_TEXT);
    assert.equal(final.status, "completed");
  });

  test("an error answer becomes an ApiError with status, code, type, param, message and x-request-id", async () => {
    const error = await apiError(() =>
      ok(
        client.POST("/responses", {
          body: { model: "tiny-chat", input: "Hi", store: false, max_output_tokens: 100_000 },
        }),
      ),
    );
    assert.equal(error.status, 400);
    assert.equal(error.code, "CONTEXT_LENGTH_EXCEEDED");
    assert.equal(error.type, "invalid_request_error");
    assert.equal(error.param, "max_output_tokens");
    assert.ok(error.message.length > 0);
    assert.match(error.requestId ?? "", /^req_/);
    assert.equal(error.midStream, false);

    const streamed = await apiError(() =>
      streamResponse(client, { model: "no-such-model", input: "Hi", store: false }),
    );
    assert.equal(streamed.status, 404);
    assert.equal(streamed.code, "MODEL_NOT_FOUND");
    assert.equal(streamed.type, "not_found_error");

    const unauthenticated = createClient({ baseUrl: server.baseUrl, apiKey: "sk-not-a-key-000000000000000000" });
    const denied = await apiError(() => ok(unauthenticated.GET("/models")));
    assert.equal(denied.status, 401);
    assert.equal(denied.code, "INVALID_API_KEY");
    assert.equal(denied.type, "authentication_error");
  });

  for (const [what, behaviour, code, status] of [
    ["a dropped upstream connection", { kind: "cut", text: UPSTREAM_TEXT }, "UPSTREAM_UNAVAILABLE", 503],
    ["blocked output", { kind: "stream", text: "Fine words, then forbidden-output." }, "CONTENT_BLOCKED_OUTPUT", 400],
  ] as const) {
    test(`a mid-stream error event (${what}) throws ApiError ${code} from the loop and from finalResponse()`, async () => {
      upstream.behaviour = behaviour;
      const stream = await streamResponse(client, { model: "tiny-reasoner", input: "Hi", store: false });
      const seen: string[] = [];
      const error = await apiError(async () => {
        for await (const event of stream) seen.push(event.type);
      });
      assert.equal(seen[0], "response.created");
      assert.ok(!seen.includes("response.completed"));
      assert.equal(error.code, code);
      assert.equal(error.status, status, "the status the contract pairs the code with");
      assert.equal(error.midStream, true);
      assert.equal(error.requestId, stream.requestId);
      assert.ok(error.type);
      await assert.rejects(stream.finalResponse(), (e) => e === error);
    });
  }
});

describe("cancellation", () => {
  test("aborting the signal mid-stream ends the loop with an APIUserAbortError and closes the upstream request", async () => {
    upstream.behaviour = { kind: "endless", chunk: "word ", delayMs: 20 };
    const upstreamClosed = upstream.nextClientClose();
    const abort = new AbortController();
    const stream = await streamResponse(
      client,
      { model: "tiny-reasoner", input: "Hi", store: false, max_output_tokens: 2_000 },
      { signal: abort.signal },
    );
    let deltas = 0;
    await assert.rejects(
      async () => {
        for await (const event of stream) {
          if (event.type === "response.output_text.delta" && ++deltas === 3) abort.abort();
        }
      },
      (error: Error) => error instanceof APIUserAbortError && (error.cause as Error).name === "AbortError",
    );
    assert.equal(deltas, 3, "no event after the abort");
    await upstreamClosed; // fails by the test's timeout if generation went on
    await assert.rejects(stream.finalResponse());
  });

  test("leaving the loop early (break) also closes the connection; stream.abort() stops one that is not being read", async () => {
    upstream.behaviour = { kind: "endless", chunk: "word ", delayMs: 20 };
    let upstreamClosed = upstream.nextClientClose();
    const stream = await streamResponse(client, {
      model: "tiny-reasoner",
      input: "Hi",
      store: false,
      max_output_tokens: 2_000,
    });
    for await (const event of stream) if (event.type === "response.output_text.delta") break;
    await upstreamClosed;

    upstreamClosed = upstream.nextClientClose();
    const other = await streamResponse(client, {
      model: "tiny-reasoner",
      input: "Hi",
      store: false,
      max_output_tokens: 2_000,
    });
    setTimeout(() => other.abort("enough"), 100);
    await assert.rejects(
      other.finalResponse(),
      (error: Error) => error instanceof APIUserAbortError && error.cause === "enough",
    );
    await upstreamClosed;
  });

  test("a signal aborted before the answer starts rejects the call", async () => {
    await assert.rejects(
      streamResponse(client, { model: "tiny-chat", input: "Hi", store: false }, { signal: AbortSignal.abort() }),
      (error: Error) => error instanceof APIUserAbortError,
    );
  });
});

describe("POST /chat/completions and /completions", () => {
  test("a plain chat completion", async () => {
    const completion = await ok(
      client.POST("/chat/completions", {
        body: { model: "tiny-chat", messages: [{ role: "user", content: "Hello!" }], max_tokens: 8 },
      }),
    );
    assert.equal(completion.object, "chat.completion");
    assert.equal(completion.choices[0]?.message.role, "assistant");
    assert.ok((completion.choices[0]?.message.content ?? "").length > 0);
  });

  test("a streamed chat completion: chunks until [DONE], put together with usage", async () => {
    const stream = await streamChatCompletion(client, {
      model: "tiny-chat",
      messages: [{ role: "user", content: "Hello!" }],
      max_tokens: 8,
      temperature: 0,
    });
    let text = "";
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      assert.equal(chunk.object, "chat.completion.chunk");
      text += chunk.choices[0]?.delta.content ?? "";
    }
    const final = await stream.finalResponse();
    assert.ok(chunks > 1);
    assert.equal(final.object, "chat.completion");
    assert.equal(final.choices[0]?.message.content, text);
    assert.ok(final.choices[0]?.finish_reason, "the last chunk's finish_reason");
    assert.ok(final.usage && final.usage.completion_tokens > 0, "usage is asked for by default");
  });

  test("a mid-stream failure of a chat stream throws its ApiError", async () => {
    upstream.behaviour = { kind: "cut", text: UPSTREAM_TEXT };
    const stream = await streamChatCompletion(client, {
      model: "tiny-reasoner",
      messages: [{ role: "user", content: "Hi" }],
    });
    const error = await apiError(() => stream.finalResponse());
    assert.equal(error.code, "UPSTREAM_UNAVAILABLE");
    assert.equal(error.type, "service_unavailable");
    assert.equal(error.midStream, true);
  });

  test("completions, plain and streamed", async () => {
    const plain = await ok(
      client.POST("/completions", {
        body: { model: "tiny-chat", prompt: "The sea is", max_tokens: 6, temperature: 0 },
      }),
    );
    assert.equal(plain.object, "text_completion");
    const stream = await streamCompletion(client, {
      model: "tiny-chat",
      prompt: "The sea is",
      max_tokens: 6,
      temperature: 0,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
    const final = await stream.finalResponse();
    assert.equal(final.choices[0]?.text, text);
    assert.equal(text, plain.choices[0]?.text, "temperature 0 is deterministic");
  });
});

describe("POST /messages", () => {
  test("a plain message, and a streamed one put together from its events", async () => {
    const message = await ok(
      client.POST("/messages", {
        body: { model: "tiny-chat", max_tokens: 8, messages: [{ role: "user", content: "Hello!" }] },
      }),
    );
    assert.equal(message.type, "message");
    const stream = await streamMessage(client, {
      model: "tiny-chat",
      max_tokens: 8,
      messages: [{ role: "user", content: "Hello!" }],
      temperature: 0,
    });
    const types: string[] = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
    }
    assert.equal(types[0], "message_start");
    assert.equal(types.at(-1), "message_stop");
    const final = await stream.finalResponse();
    const block = final.content[0];
    assert.equal(block?.type, "text");
    assert.equal(block?.type === "text" && block.text, text);
    assert.ok(final.stop_reason);
    assert.ok(final.usage.output_tokens > 0);
  });

  test("errors in this format (with the top-level type: error) and mid-stream", async () => {
    const error = await apiError(() =>
      ok(
        client.POST("/messages", {
          body: { model: "no-such-model", max_tokens: 8, messages: [{ role: "user", content: "Hi" }] },
        }),
      ),
    );
    assert.equal(error.status, 404);
    assert.equal(error.code, "MODEL_NOT_FOUND");
    upstream.behaviour = { kind: "cut", text: UPSTREAM_TEXT };
    const stream = await streamMessage(client, {
      model: "tiny-reasoner",
      max_tokens: 64,
      messages: [{ role: "user", content: "Hi" }],
    });
    const midStream = await apiError(() => stream.finalResponse());
    assert.equal(midStream.code, "UPSTREAM_UNAVAILABLE");
    assert.equal(midStream.midStream, true);
  });
});

describe("GET /models", () => {
  test("lists the models the key may call and gets one by id", async () => {
    const list = await ok(client.GET("/models"));
    assert.equal(list.object, "list");
    assert.ok(list.data.some((m) => m.id === "tiny-chat"));
    const one = await ok(client.GET("/models/{model}", { params: { path: { model: "tiny-chat" } } }));
    assert.equal(one.id, "tiny-chat");
    const missing = await apiError(() =>
      ok(client.GET("/models/{model}", { params: { path: { model: "no-such-model" } } })),
    );
    assert.equal(missing.code, "MODEL_NOT_FOUND");
  });
});
