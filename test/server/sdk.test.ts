/**
 * The real server on an ephemeral port, called with the official `openai` and
 * `@anthropic-ai/sdk` packages, unmodified: if the wire formats drift from what those
 * vendors' SDKs expect, these fail.
 */
import Anthropic from "@anthropic-ai/sdk";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

let server: TestServer;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  server = await startTestServer();
  openai = new OpenAI({ apiKey: server.keys.acme, baseURL: server.baseUrl, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: server.keys.acme, baseURL: server.origin, maxRetries: 0 });
});
afterAll(() => server.close());

/** An output item's status: the SDK types it on every item but a custom tool call. */
function statusOf(item: object): unknown {
  return "status" in item ? item.status : undefined;
}

describe("openai: responses", () => {
  test("responses.create returns a completed response with text and usage", async () => {
    const response = await openai.responses.create({
      model: "tiny-chat",
      input: "Hello!",
      store: false,
      temperature: 0,
    });
    assert.equal(response.status, "completed");
    // The SDK's Response type has no `store`; the interface document's response does.
    assert.equal((response as unknown as { store: boolean }).store, false);
    assert.ok(response.output_text.length > 0, "the model wrote something");
    assert.ok(response.usage && response.usage.input_tokens > 0 && response.usage.output_tokens > 0);
    assert.equal(response.usage.total_tokens, response.usage.input_tokens + response.usage.output_tokens);
  });

  test("temperature 0 is deterministic", async () => {
    const ask = () =>
      openai.responses.create({
        model: "tiny-chat",
        input: "What is an API?",
        store: false,
        temperature: 0,
        max_output_tokens: 40,
      });
    const [a, b] = [await ask(), await ask()];
    assert.equal(a.output_text, b.output_text);
  });

  test("responses.stream() accumulates the final response, equal to the streamed deltas", async () => {
    const stream = openai.responses.stream({
      model: "tiny-chat",
      input: "Tell me about the weather.",
      store: false,
      temperature: 0,
      max_output_tokens: 30,
    });
    let deltas = "";
    const types: string[] = [];
    stream.on("response.output_text.delta", (e) => (deltas += e.delta));
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    assert.equal(final.output_text, deltas);
    assert.equal(types[0], "response.created");
    assert.equal(types.at(-1), "response.completed");
    assert.ok(!types.includes("error"));
  });

  test("max_output_tokens stops generation: status incomplete, reason max_output_tokens", async () => {
    const response = await openai.responses.create({
      model: "tiny-chat",
      input: "Write a long story about a dragon.",
      store: false,
      max_output_tokens: 3,
      temperature: 0,
    });
    assert.equal(response.status, "incomplete");
    assert.equal(response.incomplete_details?.reason, "max_output_tokens");
    assert.equal(response.usage?.output_tokens, 3);
    // The SDK's ResponseOutputMessage.status: the message the ceiling cut says so itself.
    assert.deepEqual(
      response.output.map((item) => [item.type, statusOf(item)]),
      [["message", "incomplete"]],
    );
  });

  test("responses.stream() under the ceiling: the cut message is incomplete in output_item.done and the final response", async () => {
    const stream = openai.responses.stream({
      model: "tiny-chat",
      input: "Write a long story about a dragon.",
      store: false,
      max_output_tokens: 3,
      temperature: 0,
    });
    const done: string[] = [];
    stream.on("response.output_item.done", (e) => done.push(`${e.item.type} ${statusOf(e.item)}`));
    const final = await stream.finalResponse();
    assert.equal(final.status, "incomplete");
    assert.deepEqual(done, ["message incomplete"]);
    assert.deepEqual(
      final.output.map((item) => `${item.type} ${statusOf(item)}`),
      ["message incomplete"],
    );
  });

  test("a required function tool is called with arguments valid for its schema", async () => {
    const response = await openai.responses.create({
      model: "tiny-chat",
      input: "What is the weather in Paris?",
      store: false,
      tool_choice: "required",
      tools: [
        {
          type: "function",
          name: "get_weather",
          strict: false,
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      ],
    });
    const call = response.output.find((o) => o.type === "function_call");
    assert.ok(call && call.type === "function_call");
    assert.equal(call.name, "get_weather");
    assert.equal(typeof JSON.parse(call.arguments).city, "string");
  });

  test("the reasoning model returns a reasoning item with a summary before its answer", async () => {
    const response = await openai.responses.create({
      model: "tiny-reasoner",
      input: "Why is the sky blue?",
      store: false,
      reasoning: { effort: "low" },
      temperature: 0,
    });
    const reasoning = response.output[0];
    assert.equal(reasoning?.type, "reasoning");
    assert.ok(reasoning?.type === "reasoning" && reasoning.summary[0] && reasoning.summary[0].text.length > 0);
    assert.ok(response.output_text.length > 0);
  });

  test("errors arrive as the SDK's APIError with the envelope's code and the request id", async () => {
    const failure = await openai.responses
      .create({ model: "no-such-model", input: "hi", store: false })
      .catch((e: unknown) => e);
    assert.ok(failure instanceof OpenAI.APIError);
    assert.equal(failure.status, 404);
    assert.equal(failure.code, "MODEL_NOT_FOUND");
    assert.equal(failure.type, "not_found_error");
    assert.match(String(failure.requestID ?? failure.headers?.get("x-request-id")), /\S/);
  });
});

describe("openai: chat completions, completions, models", () => {
  test("chat.completions.create, not streamed", async () => {
    const completion = await openai.chat.completions.create({
      model: "tiny-chat",
      messages: [{ role: "user", content: "Hello!" }],
    });
    assert.equal(completion.object, "chat.completion");
    assert.ok((completion.choices[0]?.message.content ?? "").length > 0);
    assert.equal(completion.choices[0]?.finish_reason, "stop");
    assert.ok(completion.usage && completion.usage.prompt_tokens > 0);
  });

  test("chat.completions.create streamed, with include_usage: deltas equal the non-streamed text", async () => {
    const messages = [{ role: "user" as const, content: "What is an API?" }];
    const whole = await openai.chat.completions.create({
      model: "tiny-chat",
      messages,
      temperature: 0,
      max_tokens: 30,
    });
    const stream = await openai.chat.completions.create({
      model: "tiny-chat",
      messages,
      temperature: 0,
      max_tokens: 30,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, whole.choices[0]?.message.content);
    assert.deepEqual(usage, whole.usage);
  });

  test("completions.create continues a prompt, streamed and not", async () => {
    const completion = await openai.completions.create({
      model: "tiny-chat",
      prompt: "Once upon a time",
      max_tokens: 8,
      temperature: 0,
    });
    assert.equal(completion.object, "text_completion");
    const stream = await openai.completions.create({
      model: "tiny-chat",
      prompt: "Once upon a time",
      max_tokens: 8,
      temperature: 0,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
    assert.equal(text, completion.choices[0]?.text);
  });

  test("models.list lists the platform models; models.retrieve one; an unknown one is 404", async () => {
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    assert.ok(ids.includes("tiny-chat") && ids.includes("tiny-reasoner"));
    assert.equal((await openai.models.retrieve("tiny-chat")).owned_by, "maas");
    await assert.rejects(openai.models.retrieve("nope"), (e: unknown) => e instanceof OpenAI.NotFoundError);
  });
});

describe("anthropic: messages", () => {
  test("messages.create with x-api-key and base URL = the origin", async () => {
    const message = await anthropic.messages.create({
      model: "tiny-chat",
      max_tokens: 40,
      messages: [{ role: "user", content: "Hello!" }],
    });
    assert.equal(message.type, "message");
    assert.equal(message.content[0]?.type, "text");
    assert.ok(message.usage.input_tokens > 0);
    assert.ok(["end_turn", "max_tokens"].includes(String(message.stop_reason)));
  });

  test("messages.stream() yields the final message equal to its text deltas", async () => {
    const stream = anthropic.messages.stream({
      model: "tiny-chat",
      max_tokens: 30,
      messages: [{ role: "user", content: "What is an API?" }],
      temperature: 0,
    });
    let text = "";
    stream.on("text", (delta) => (text += delta));
    const final = await stream.finalMessage();
    const block = final.content[0];
    assert.ok(block?.type === "text");
    assert.equal(block.text, text);
  });

  test("a tool the model must use comes back as a tool_use block with input for its schema", async () => {
    const message = await anthropic.messages.create({
      model: "tiny-chat",
      max_tokens: 60,
      messages: [{ role: "user", content: "Look up the weather in Oslo." }],
      tools: [
        {
          name: "get_weather",
          input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      ],
      tool_choice: { type: "any" },
    });
    const use = message.content.find((b) => b.type === "tool_use");
    assert.ok(use?.type === "tool_use");
    assert.equal(typeof (use.input as { city?: unknown }).city, "string");
    assert.equal(message.stop_reason, "tool_use");
  });

  test("errors keep the envelope with top-level type error, read by the SDK", async () => {
    const failure = await anthropic.messages
      .create({ model: "no-such-model", max_tokens: 5, messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    assert.ok(failure instanceof Anthropic.NotFoundError);
    assert.equal((failure.error as { type?: string }).type, "error");
  });
});
