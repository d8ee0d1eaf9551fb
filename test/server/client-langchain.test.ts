/**
 * LangChain's ChatOpenAI (`@langchain/openai`: chat completions by default, the Responses
 * API with `useResponsesApi`) and ChatAnthropic (`@langchain/anthropic`: messages) against
 * the real server: a text call, a stream and a tool round trip each, configured as the
 * README's "With other clients" table says (`zdrEnabled: true` on the Responses API). Without
 * it the Responses API meets the `store` rule with a message that names the option; and
 * ChatAnthropic's default `max_tokens` for a model it does not know (4 096) is accepted.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type AIMessage, HumanMessage, type ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import { z } from "zod";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

let server: TestServer;

/** The request bodies the libraries sent, to check what they send by default. */
const sent: { path: string; body: Record<string, unknown> }[] = [];
const recording: typeof fetch = async (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (typeof init?.body === "string") sent.push({ path: url.pathname, body: JSON.parse(init.body) });
  return fetch(input, init);
};

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const openai = (extra: Record<string, unknown> = {}) =>
  new ChatOpenAI({
    model: "tiny-chat",
    apiKey: server.keys.acme,
    maxRetries: 0,
    configuration: { baseURL: server.baseUrl, fetch: recording },
    ...extra,
  });

const CLIENTS: { name: string; make(): BaseChatModel }[] = [
  { name: "ChatOpenAI (chat completions)", make: () => openai() },
  {
    name: "ChatOpenAI (the Responses API, zdrEnabled)",
    make: () => openai({ useResponsesApi: true, zdrEnabled: true }),
  },
  {
    name: "ChatAnthropic",
    make: () =>
      new ChatAnthropic({
        model: "tiny-chat",
        apiKey: server.keys.acme,
        maxRetries: 0,
        anthropicApiUrl: server.origin,
        clientOptions: { fetch: recording },
      }),
  },
];

const getWeather = tool(async ({ city }) => JSON.stringify({ city, temperature: 21, sky: "clear" }), {
  name: "get_weather",
  description: "The current weather in a city.",
  schema: z.object({ city: z.string() }),
});

const textOf = (message: BaseMessage) => (typeof message.content === "string" ? message.content : message.text);

describe("LangChain", () => {
  for (const client of CLIENTS) {
    describe(client.name, () => {
      test("a text call", async () => {
        const answer = await client.make().invoke([new HumanMessage("Hello! What is an API?")]);
        assert.ok(textOf(answer).length > 0);
      });

      test("a stream", async () => {
        let text = "";
        let chunks = 0;
        for await (const chunk of await client.make().stream([new HumanMessage("Tell me about the weather.")])) {
          text += textOf(chunk);
          chunks++;
        }
        assert.ok(chunks > 1, `${chunks} chunks`);
        assert.ok(text.length > 0);
      });

      test("a tool round trip: the model calls the tool, gets its result, and answers", async () => {
        const model = client.make().bindTools!([getWeather]);
        const question = new HumanMessage("What's the weather like in Paris?");
        const call = (await model.invoke([question])) as AIMessage;
        assert.equal(call.tool_calls?.length, 1, JSON.stringify(call.content));
        const toolCall = call.tool_calls![0]!;
        assert.equal(toolCall.name, "get_weather");
        assert.equal(typeof toolCall.args.city, "string");
        const result = (await getWeather.invoke(toolCall)) as ToolMessage;
        const answer = await model.invoke([question, call, result]);
        assert.equal((answer as AIMessage).tool_calls?.length ?? 0, 0);
        assert.ok(textOf(answer).length > 0, "an answer after the tool result");
      });
    });
  }

  test("zdrEnabled: true makes ChatOpenAI's Responses API send store: false", async () => {
    sent.length = 0;
    await openai({ useResponsesApi: true, zdrEnabled: true }).invoke([new HumanMessage("Hi")]);
    assert.equal(sent.at(-1)?.path, "/v1/responses");
    assert.equal(sent.at(-1)?.body.store, false);
  });

  test("without zdrEnabled the Responses API leaves store out: 400, and the message names the option", async () => {
    const error = await openai({ useResponsesApi: true })
      .invoke([new HumanMessage("Hi")])
      .then(
        () => assert.fail("store left out must be refused"),
        (e: unknown) => e as { status?: number; message?: string },
      );
    assert.equal(error.status, 400, String(error));
    assert.match(error.message ?? "", /zdrEnabled: true/);
  });

  test("ChatAnthropic's default max_tokens (4 096 for a model it does not know) is accepted", async () => {
    sent.length = 0;
    const answer = await CLIENTS[2]!.make().invoke([new HumanMessage("Hi")]);
    assert.ok(textOf(answer).length > 0);
    assert.equal(sent.at(-1)?.path, "/v1/messages");
    assert.equal(sent.at(-1)?.body.max_tokens, 4096);
  });
});
