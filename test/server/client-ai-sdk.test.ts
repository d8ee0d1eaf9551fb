/**
 * The Vercel AI SDK (`ai`) against the real server, with its three providers that can reach
 * it: `@ai-sdk/openai` (the Responses API by default, chat completions through `.chat`),
 * `@ai-sdk/openai-compatible` (chat completions) and `@ai-sdk/anthropic` (messages). Each
 * does a text call, a stream and a tool round trip, configured as the README's "With other
 * clients" table says; and without that configuration, the Responses provider meets the
 * `store` rule with a message that names its option.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, generateText, stepCountIs, streamText, tool, type LanguageModel } from "ai";
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import { z } from "zod";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

let server: TestServer;

/** The request bodies the libraries sent, by path, to check what they send by default. */
const sent: { path: string; body: Record<string, unknown> }[] = [];
const recording: typeof fetch = async (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (typeof init?.body === "string") sent.push({ path: url.pathname, body: JSON.parse(init.body) });
  return fetch(input, init);
};

/** What the README tells AI SDK users of the Responses API to send. */
const RESPONSES_OPTIONS = { openai: { store: false } };

interface Provider {
  name: string;
  model(server: TestServer): LanguageModel;
  providerOptions?: typeof RESPONSES_OPTIONS;
}

const settings = (server: TestServer) => ({ baseURL: server.baseUrl, apiKey: server.keys.acme, fetch: recording });
const PROVIDERS: Provider[] = [
  {
    name: "@ai-sdk/openai (the Responses API)",
    model: (s) => createOpenAI(settings(s))("tiny-chat"),
    providerOptions: RESPONSES_OPTIONS,
  },
  { name: "@ai-sdk/openai (chat completions)", model: (s) => createOpenAI(settings(s)).chat("tiny-chat") },
  {
    name: "@ai-sdk/openai-compatible",
    model: (s) => createOpenAICompatible({ name: "reference", ...settings(s) }).chatModel("tiny-chat"),
  },
  { name: "@ai-sdk/anthropic", model: (s) => createAnthropic(settings(s))("tiny-chat") },
];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const weather = tool({
  description: "The current weather in a city.",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, temperature: 21, sky: "clear" }),
});

describe("the Vercel AI SDK", () => {
  for (const provider of PROVIDERS) {
    const { name, providerOptions } = provider;
    describe(name, () => {
      test("a text call", async () => {
        const result = await generateText({
          model: provider.model(server),
          prompt: "Hello! What is an API?",
          providerOptions,
        });
        assert.ok(result.text.length > 0, `${name}: the model wrote something`);
        assert.ok((result.usage.outputTokens ?? 0) > 0, name);
      });

      test("a stream", async () => {
        const result = streamText({
          model: provider.model(server),
          prompt: "Tell me about the weather.",
          providerOptions,
          maxOutputTokens: 30,
        });
        let deltas = "";
        for await (const delta of result.textStream) deltas += delta;
        assert.ok(deltas.length > 0, name);
        assert.equal(deltas, await result.text, name);
      });

      test("a tool round trip: the model calls the tool, gets its result, and answers", async () => {
        const result = await generateText({
          model: provider.model(server),
          prompt: "What's the weather like in Paris?",
          tools: { get_weather: weather },
          stopWhen: stepCountIs(3),
          providerOptions,
        });
        const calls = result.steps.flatMap((s) => s.toolCalls);
        assert.equal(calls[0]?.toolName, "get_weather", name);
        assert.equal(typeof (calls[0]?.input as { city?: unknown }).city, "string", name);
        assert.equal(result.steps.flatMap((s) => s.toolResults).length, 1, name);
        assert.equal(result.steps.length, 2, `${name}: a call, then an answer`);
        assert.ok(result.text.length > 0, `${name}: the answer after the tool result`);
      });
    });
  }

  test("the Responses provider sends store: false with the README's providerOptions", async () => {
    sent.length = 0;
    await generateText({ model: PROVIDERS[0]!.model(server), prompt: "Hi", providerOptions: RESPONSES_OPTIONS });
    assert.equal(sent.at(-1)?.path, "/v1/responses");
    assert.equal(sent.at(-1)?.body.store, false);
  });

  test("the anthropic provider's default max_tokens for a model it does not know is accepted", async () => {
    sent.length = 0;
    const result = await generateText({ model: PROVIDERS[3]!.model(server), prompt: "Hi" });
    assert.ok(result.text.length > 0);
    assert.equal(sent.at(-1)?.path, "/v1/messages");
    assert.ok(Number(sent.at(-1)?.body.max_tokens) >= 4096, JSON.stringify(sent.at(-1)?.body.max_tokens));
  });

  test("without providerOptions the Responses provider leaves store out: 400, and the message names the option", async () => {
    const error = await generateText({ model: PROVIDERS[0]!.model(server), prompt: "Hi", maxRetries: 0 }).then(
      () => assert.fail("store left out must be refused"),
      (e: unknown) => e,
    );
    assert.ok(APICallError.isInstance(error), String(error));
    assert.equal(error.statusCode, 400);
    assert.match(error.responseBody ?? "", /providerOptions: \{ openai: \{ store: false \} \}/);
  });
});
