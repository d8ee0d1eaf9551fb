/**
 * The OpenAI Agents SDK (`@openai/agents`, the Responses API) against the real server: a
 * text run, a streamed run and a tool round trip, with `modelSettings: { store: false }` as
 * the README's "With other clients" table says. Without it the SDK leaves `store` out and
 * meets the rule, with a message that names the option.
 */
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool, type ModelSettings } from "@openai/agents";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, test } from "vitest";
import { z } from "zod";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

let server: TestServer;
let model: OpenAIResponsesModel;

/** The request bodies the SDK sent, to check what it sends. */
const sent: { path: string; body: Record<string, unknown> }[] = [];
const recording: typeof fetch = async (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (typeof init?.body === "string") sent.push({ path: url.pathname, body: JSON.parse(init.body) });
  return fetch(input, init);
};

/** What the README tells Agents SDK users to set. */
const STORELESS: ModelSettings = { store: false };

beforeAll(async () => {
  // Traces would be exported to the vendor's platform: nothing leaves this machine.
  setTracingDisabled(true);
  server = await startTestServer();
  const client = new OpenAI({ baseURL: server.baseUrl, apiKey: server.keys.acme, maxRetries: 0, fetch: recording });
  model = new OpenAIResponsesModel(client, "tiny-chat");
});
afterAll(() => server.close());

const getWeather = tool({
  name: "get_weather",
  description: "The current weather in a city.",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => JSON.stringify({ city, temperature: 21, sky: "clear" }),
});

const agent = (modelSettings: ModelSettings | undefined, tools = [getWeather]) =>
  new Agent({
    name: "assistant",
    instructions: "Answer briefly.",
    model,
    tools,
    ...(modelSettings ? { modelSettings } : {}),
  });

describe("the OpenAI Agents SDK", () => {
  test("a text run", async () => {
    const result = await run(agent(STORELESS, []), "Hello! What is an API?");
    assert.equal(typeof result.finalOutput, "string");
    assert.ok((result.finalOutput ?? "").length > 0);
  });

  test("a streamed run", async () => {
    const result = await run(agent(STORELESS, []), "Tell me about the weather.", { stream: true });
    let text = "";
    for await (const delta of result.toTextStream()) text += delta;
    await result.completed;
    assert.ok(text.length > 0);
    assert.equal(text, result.finalOutput);
  });

  test("a tool round trip: the agent calls the tool, gets its result, and answers", async () => {
    sent.length = 0;
    const result = await run(agent(STORELESS), "What's the weather like in Paris?");
    const calls = result.newItems.filter((item) => item.type === "tool_call_item");
    const outputs = result.newItems.filter((item) => item.type === "tool_call_output_item");
    assert.equal(calls.length, 1, JSON.stringify(result.newItems.map((i) => i.type)));
    assert.equal((calls[0]!.rawItem as { name?: string }).name, "get_weather");
    assert.equal(outputs.length, 1);
    assert.ok((result.finalOutput ?? "").length > 0, "an answer after the tool result");
    assert.equal(sent.filter((s) => s.path === "/v1/responses").length, 2, "two model calls");
  });

  test("modelSettings: { store: false } makes the SDK send store: false", async () => {
    sent.length = 0;
    await run(agent(STORELESS, []), "Hi");
    assert.equal(sent.at(-1)?.path, "/v1/responses");
    assert.equal(sent.at(-1)?.body.store, false);
  });

  test("without it the SDK leaves store out: 400, and the message names the option", async () => {
    const error = await run(agent(undefined, []), "Hi").then(
      () => assert.fail("store left out must be refused"),
      (e: unknown) => e as { status?: number; message?: string },
    );
    assert.equal(error.status, 400, String(error));
    assert.match(error.message ?? "", /modelSettings: \{ store: false \}/);
  });
});
