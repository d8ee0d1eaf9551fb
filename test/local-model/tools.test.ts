/** Tool calls from the local provider: choice modes, and arguments valid against the tool's schema. */
import { test } from "vitest";
import assert from "node:assert/strict";
import { Ajv } from "ajv";
import type { FunctionTool, GenerationRequest } from "../../server/inference/engine.ts";
import { requestedTool, subjectWords } from "../../server/inference/local/prompt.ts";
import { buildArguments } from "../../server/inference/local/tool-args.ts";
import { countTokens } from "../../server/inference/tokenizer.ts";
import { ask, collect } from "./helpers.ts";

const weather: FunctionTool = {
  name: "get_weather",
  description: "Current weather of a city",
  parameters: {
    type: "object",
    properties: {
      city: { type: "string" },
      unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      days: { type: "integer", minimum: 1, maximum: 7 },
    },
    required: ["city", "unit"],
    additionalProperties: false,
  },
};

const booking: FunctionTool = {
  name: "book_table",
  parameters: {
    type: "object",
    properties: {
      restaurant: { type: "string", minLength: 1 },
      guests: { type: "number" },
      outdoor: { type: "boolean" },
      tags: { type: "array", items: { type: "string" }, minItems: 1 },
      contact: {
        type: "object",
        properties: { name: { type: "string" }, phone: { type: "string" } },
        required: ["name"],
        additionalProperties: false,
      },
      time: { type: ["string", "null"] },
    },
    required: ["restaurant", "guests", "outdoor", "tags", "contact", "time"],
    additionalProperties: false,
  },
};

const ajv = new Ajv({ strict: false });

async function callOf(request: GenerationRequest) {
  const r = await collect(request);
  const calls = r.events.filter((e) => e.type === "tool_call");
  return { r, calls };
}

function assertValidCall(
  call: { name: string; arguments: string; callId: string },
  tool: FunctionTool,
): Record<string, unknown> {
  assert.equal(call.name, tool.name);
  assert.match(call.callId, /^call_[0-9a-f]+$/);
  const args = JSON.parse(call.arguments) as Record<string, unknown>;
  const validate = ajv.compile(tool.parameters!);
  assert.ok(validate(args), `${call.arguments}: ${ajv.errorsText(validate.errors)}`);
  return args;
}

test("required: one tool_call with schema-valid arguments taken from the message, then done tool_calls", async () => {
  const { r, calls } = await callOf(
    ask("What is the weather in Paris in fahrenheit for 3 days?", {
      tools: [weather],
      toolChoice: { mode: "required" },
    }),
  );
  assert.equal(calls.length, 1);
  const call = calls[0]!;
  assert.ok(call.type === "tool_call");
  const args = assertValidCall(call, weather);
  assert.deepEqual(args, { city: "Paris", unit: "fahrenheit", days: 3 });
  assert.equal(r.text, "");
  assert.equal(r.done?.finishReason, "tool_calls");
  assert.equal(r.done?.usage.outputTokens, countTokens(`${call.name} ${call.arguments}`));
});

test("function mode calls the named tool; nested, array, boolean and nullable properties validate", async () => {
  const { calls } = await callOf(
    ask('Book "Chez Marie" for 4 guests, outdoor please, contact name Anna', {
      tools: [weather, booking],
      toolChoice: { mode: "function", name: "book_table" },
    }),
  );
  assert.equal(calls.length, 1);
  const call = calls[0]!;
  assert.ok(call.type === "tool_call");
  const args = assertValidCall(call, booking);
  assert.equal(args.restaurant, "Chez Marie");
  assert.equal(args.guests, 4);
  assert.equal(args.outdoor, true);
});

test("required strings without a value in the message are filled from model text", async () => {
  const { calls } = await callOf(ask("hi", { tools: [booking], toolChoice: { mode: "required" } }));
  const call = calls[0]!;
  assert.ok(call.type === "tool_call");
  const args = assertValidCall(call, booking);
  assert.ok(typeof args.restaurant === "string" && args.restaurant.length > 0);
});

test("auto calls a tool the last user message names or asks about, and none otherwise", async () => {
  const named = await callOf(
    ask("Please use get_weather for London.", { tools: [weather, booking], toolChoice: { mode: "auto" } }),
  );
  assert.equal(named.calls.length, 1);
  const call = named.calls[0]!;
  assert.ok(call.type === "tool_call");
  assert.equal(assertValidCall(call, weather).city, "London");

  // The Open Responses compliance suite's question: the subject of get_weather, not its name.
  const asked = await callOf(
    ask("What's the weather like in Paris?", { tools: [booking, weather], toolChoice: { mode: "auto" } }),
  );
  assert.equal(asked.calls.length, 1);
  const askedCall = asked.calls[0]!;
  assert.ok(askedCall.type === "tool_call");
  assert.equal(askedCall.name, "get_weather");
  assert.equal(assertValidCall(askedCall, weather).city, "Paris");

  const unrelated = await callOf(
    ask("What is two plus two?", { tools: [weather, booking], toolChoice: { mode: "auto" } }),
  );
  assert.equal(unrelated.calls.length, 0);
  assert.equal(unrelated.r.done?.finishReason, "stop");
  assert.ok(unrelated.r.text.length > 0);
});

test("a tool's subject is its name less the verb, in any case style, singular", () => {
  assert.deepEqual(subjectWords("get_weather"), ["weather"]);
  assert.deepEqual(subjectWords("searchFlights"), ["flight"]);
  assert.deepEqual(subjectWords("list-open-tickets"), ["open", "ticket"]);
  assert.equal(requestedTool([weather, booking], "Any cheap flights to Rome?"), null);
  assert.equal(requestedTool([weather, booking], "Can you book a table for two?")?.name, "book_table");
});

test("none never calls, even when the tool is named", async () => {
  const { r, calls } = await callOf(
    ask("Use get_weather for Paris.", { tools: [weather], toolChoice: { mode: "none" } }),
  );
  assert.equal(calls.length, 0);
  assert.equal(r.done?.finishReason, "stop");
});

test("after a function_output turn the model answers in text", async () => {
  const { r, calls } = await callOf(
    ask("", {
      tools: [weather],
      toolChoice: { mode: "required" },
      turns: [
        { kind: "message", role: "user", text: "What is the weather in Tokyo?", media: [] },
        { kind: "function_call", callId: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' },
        { kind: "function_output", callId: "call_1", output: '{"city":"Tokyo","temperature":21,"conditions":"sunny"}' },
      ],
    }),
  );
  assert.equal(calls.length, 0);
  assert.ok(r.text.length > 0);
  assert.equal(r.done?.finishReason, "stop");
});

test("buildArguments: enums take the first value mentioned, numbers clamp, optional values need the message", () => {
  const schema = weather.parameters!;
  assert.deepEqual(buildArguments(schema, { message: "weather for Oslo please", generated: "x" }), {
    city: "Oslo",
    unit: "celsius",
  });
  assert.deepEqual(
    buildArguments(schema, { message: "weather in Oslo in celsius or fahrenheit for 12 days", generated: "x" }),
    { city: "Oslo", unit: "celsius", days: 7 },
  );
  assert.deepEqual(buildArguments(schema, { message: "city: new york", generated: "x" }), {
    city: "new york",
    unit: "celsius",
  });
  assert.deepEqual(buildArguments(schema, { message: "what now", generated: "model text" }), {
    city: "model text",
    unit: "celsius",
  });
});
