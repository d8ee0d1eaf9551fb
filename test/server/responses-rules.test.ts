/**
 * The numbered rules of POST /responses and the events table, over raw HTTP against the
 * real server (what the SDK tests cannot see: event names, order and sequence numbers).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTestServer, type TestServer } from "./harness.ts";
import { parseSse, post, responsesBody, type SseEvent } from "./http.ts";

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

const call = (body: Record<string, unknown>) => post(server.baseUrl, "/responses", responsesBody(body), { key: server.keys.acme });

const weather = {
  type: "function",
  name: "get_weather",
  description: "The current weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
};

describe("rules", () => {
  test("rule 4: earlier function_call and function_call_output items are accepted in input", async () => {
    const input = [
      { type: "message", role: "user", content: "What is the weather in Paris?" },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: "call_1", output: '{"temperature": 21}' },
    ];
    const result = await call({ input, tools: [weather], temperature: 0, max_output_tokens: 200 });
    assert.equal(result.status, 200, result.text);
    assert.equal(result.body.status, "completed", result.text);
  });

  test("rule 5: non-function tools are dropped, so the model cannot call them", async () => {
    const onlyOthers = await call({ input: "Search the web for cats.", tools: [{ type: "web_search_preview" }, { type: "file_search", vector_store_ids: ["vs_1"] }] });
    assert.equal(onlyOthers.status, 200, onlyOthers.text);
    assert.ok(onlyOthers.body.output.every((item: { type: string }) => item.type === "message"));
    const mixed = await call({ input: "Weather please.", tools: [{ type: "web_search_preview" }, weather], tool_choice: "required" });
    assert.equal(mixed.status, 200, mixed.text);
    const calls = mixed.body.output.filter((item: { type: string }) => item.type === "function_call");
    assert.deepEqual(calls.map((c: { name: string }) => c.name), ["get_weather"]);
    assert.equal(typeof JSON.parse(calls[0].arguments).city, "string");
  });

  test("rule 6: the instructions count toward input_tokens", async () => {
    const plain = await call({ input: "Hello!" });
    const instructed = await call({ input: "Hello!", instructions: "Answer in one short and friendly sentence, please." });
    assert.ok(instructed.body.usage.input_tokens > plain.body.usage.input_tokens + 5);
  });

  test("unknown parameters are ignored", async () => {
    const result = await call({ some_future_option: { enabled: true } });
    assert.equal(result.status, 200, result.text);
  });
});

describe("the events of a streamed call", () => {
  let events: SseEvent[];
  let plain: any;
  before(async () => {
    const body = { input: "Tell me about the weather.", temperature: 0, max_output_tokens: 40 };
    const streamed = await call({ ...body, stream: true });
    assert.equal(streamed.status, 200);
    assert.match(streamed.headers.get("content-type") ?? "", /^text\/event-stream/);
    assert.equal(streamed.headers.get("x-provider-class"), "primary");
    events = parseSse(streamed.text);
    plain = (await call(body)).body;
  });

  test("every event's name equals its data's type, and sequence_number counts from 0", () => {
    events.forEach((event, i) => {
      assert.equal(event.json.type, event.event);
      assert.equal(event.json.sequence_number, i);
    });
  });

  test("the seed's events come in the seed's order; no [DONE]", () => {
    const core = events.map((e) => e.event).filter((name) => !["response.in_progress", "response.content_part.added", "response.content_part.done"].includes(name as string));
    const deltas = core.filter((name) => name === "response.output_text.delta").length;
    assert.ok(deltas > 0);
    assert.deepEqual(core, [
      "response.created",
      "response.output_item.added",
      ...Array(deltas).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.output_item.done",
      "response.completed",
    ]);
    assert.ok(!events.some((e) => e.data === "[DONE]"));
  });

  test("response.created: in_progress, output empty, usage 0, store false", () => {
    const { response } = events[0]?.json;
    assert.equal(response.status, "in_progress");
    assert.deepEqual(response.output, []);
    assert.deepEqual(response.usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0 });
    assert.equal(response.store, false);
  });

  test("the deltas add up to the done text, the item and the final response; equal to the call without stream", () => {
    const text = events.filter((e) => e.event === "response.output_text.delta").map((e) => e.json.delta).join("");
    assert.equal(events.find((e) => e.event === "response.output_text.done")?.json.text, text);
    assert.equal(events.find((e) => e.event === "response.output_item.done")?.json.item.content[0].text, text);
    const final = events.at(-1)?.json.response;
    assert.equal(final.output[0].content[0].text, text);
    assert.equal(text, plain.output[0].content[0].text, "temperature 0: the same text streamed or not");
  });

  test("response.completed ends the stream with the usage, the model and store false", () => {
    const final = events.at(-1)?.json.response;
    assert.equal(events.at(-1)?.event, "response.completed");
    assert.ok(["completed", "incomplete"].includes(final.status));
    assert.equal(final.model, "tiny-chat");
    assert.equal(final.store, false);
    assert.deepEqual(final.usage, plain.usage);
    assert.ok(final.usage.output_tokens > 0);
  });
});

test("streamed and stopped by max_output_tokens: response.completed with status incomplete", async () => {
  const events = parseSse((await call({ input: "Tell me a long story about the sea.", max_output_tokens: 3, stream: true })).text);
  const final = events.at(-1);
  assert.equal(final?.event, "response.completed");
  assert.equal(final?.json.response.status, "incomplete");
  assert.deepEqual(final?.json.response.incomplete_details, { reason: "max_output_tokens" });
  assert.equal(final?.json.response.usage.output_tokens, 3);
});
