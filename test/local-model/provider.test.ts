/**
 * LocalProvider behaviour on the committed weights: determinism, seeded sampling,
 * output limits, stop strings, aborts, reasoning, usage.
 */
import { test } from "vitest";
import assert from "node:assert/strict";
import { countInputTokens, countTokens } from "../../server/inference/tokenizer.ts";
import { ask, collect, provider } from "./helpers.ts";

test("temperature 0 is bit-for-bit deterministic and ends with one done event", async () => {
  const first = await collect(ask("What is an API?"));
  const second = await collect(ask("What is an API?"));
  assert.ok(first.text.length > 0);
  assert.deepEqual(second.events, first.events);
  assert.equal(first.events.filter((e) => e.type === "done").length, 1);
  assert.equal(first.events.at(-1)?.type, "done");
  assert.equal(first.done?.finishReason, "stop");
});

test("seeded sampling is reproducible and different seeds give different text", async () => {
  const sample = (seed: number) => collect(ask("Tell me about the ocean.", { temperature: 1.2, topP: 1, seed }));
  const a = await sample(1);
  const again = await sample(1);
  assert.equal(again.text, a.text);
  const others = await Promise.all([2, 3, 4].map((s) => sample(s)));
  assert.ok(
    others.some((o) => o.text !== a.text),
    "some other seed changes the text",
  );
});

test("maxOutputTokens ends with finishReason length and exactly that many output tokens", async () => {
  for (const max of [1, 5, 12]) {
    const r = await collect(ask("Explain the internet.", { maxOutputTokens: max }));
    assert.equal(r.done?.finishReason, "length");
    assert.equal(r.done?.usage.outputTokens, max);
    assert.equal(countTokens(r.text), max);
  }
});

test("generation stops before a stop string", async () => {
  const full = await collect(ask("What is JSON?"));
  const words = full.text.split(" ");
  assert.ok(words.length > 4, `a long enough answer: ${full.text}`);
  const stop = ` ${words[3]}`;
  const cut = await collect(ask("What is JSON?", { stop: ["NEVER-SEEN", stop] }));
  assert.equal(cut.text, full.text.slice(0, full.text.indexOf(stop)));
  assert.equal(cut.done?.finishReason, "stop");
  assert.equal(cut.done?.usage.outputTokens, countTokens(cut.text));
});

test("an abort ends the stream at once, without a done event", async () => {
  const controller = new AbortController();
  const events = [];
  for await (const event of provider.generate(
    ask("Tell me about machine learning.", { signal: controller.signal, temperature: 0.8, seed: 1 }),
  )) {
    events.push(event);
    if (events.length === 2) controller.abort();
  }
  assert.equal(events.length, 2);
  assert.ok(events.every((e) => e.type === "text"));

  const early = new AbortController();
  early.abort();
  const none = [];
  for await (const event of provider.generate(ask("Hello!", { signal: early.signal }))) none.push(event);
  assert.deepEqual(none, []);
});

test("reasoning yields one summary of model text first, counted in the usage", async () => {
  const request = ask("What is 3 plus 4?", { model: "tiny-reasoner", reasoning: { effort: "medium" } });
  const r = await collect(request);
  assert.equal(r.events[0]?.type, "reasoning");
  assert.equal(r.events.filter((e) => e.type === "reasoning").length, 1);
  const summary = r.events[0]!.type === "reasoning" ? r.events[0]!.summary : "";
  assert.ok(summary.length > 0);
  assert.equal(r.done?.usage.reasoningTokens, countTokens(summary));
  assert.equal(r.done?.usage.outputTokens, countTokens(summary) + countTokens(r.text));
  const low = await collect({ ...request, reasoning: { effort: "low" } });
  const lowSummary = low.events[0]!.type === "reasoning" ? low.events[0]!.summary : "";
  assert.ok(countTokens(lowSummary) <= 16);
});

test("usage counts come from tokenizer.ts over the whole input and the emitted text", async () => {
  const request = ask("Hello!", {
    instructions: "You are a helpful assistant.",
    turns: [
      { kind: "message", role: "user", text: "Hi", media: [] },
      { kind: "message", role: "assistant", text: "Hello! How can I help you today?", media: [] },
      { kind: "message", role: "user", text: "What is Git?", media: [] },
    ],
  });
  const r = await collect(request);
  assert.equal(r.done?.usage.inputTokens, countInputTokens(request));
  assert.equal(r.done?.usage.outputTokens, countTokens(r.text));
  assert.equal(r.done?.usage.reasoningTokens, 0);
});

test("a prompt longer than the model's context is cut from the left and still answered", async () => {
  const long = "Tell me about the sun. ".repeat(120);
  const r = await collect(ask(`${long} What is an API?`, { maxOutputTokens: 30 }));
  assert.ok(r.done !== undefined);
  assert.ok(r.done.usage.inputTokens > 600);
});

test("the committed weights answer greetings and simple questions on topic", async () => {
  assert.match((await collect(ask("Hello!"))).text, /\b(hello|hi|hey)\b/i);
  assert.match((await collect(ask("What is an API?"))).text, /^An API is /);
  assert.match((await collect(ask("What is the capital of Japan?"))).text, /Tokyo/);
  assert.match((await collect(ask("Say the server is running."))).text, /^The server is running/);
});
