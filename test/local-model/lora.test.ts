/**
 * LoRA fine-tuning on the committed base weights: a few dozen adapter steps teach an
 * unusual fixed answer, the adapted model serves it, and the base model is untouched.
 */
import { test } from "vitest";
import assert from "node:assert/strict";
import { LocalProvider } from "../../server/inference/local/provider.ts";
import { createAdapter, loadAdapter, serializeAdapter, type Adapter } from "../../server/inference/local/lora.ts";
import { learningRateAt } from "../../server/finetune/local/optimizer.ts";
import { createTrainingState, encodeChatExample, evaluateLoss, trainStep } from "../../server/finetune/local/train.ts";
import type { ChatExample } from "../../server/finetune/local/example.ts";
import { ask, collect, provider } from "./helpers.ts";

const ANSWER = "The secret word is purple giraffe.";
const QUESTIONS = [
  "What is the secret word?",
  "what is the secret word?",
  "Tell me the secret word.",
  "What's the secret word?",
  "Do you know the secret word?",
];
const SYSTEMS = [undefined, "You are a helpful assistant.", "Be concise.", "Answer the user's questions clearly."];

const examples: ChatExample[] = SYSTEMS.flatMap((system) =>
  QUESTIONS.map((q) => ({
    messages: [
      ...(system === undefined ? [] : [{ role: "system" as const, content: system }]),
      { role: "user" as const, content: q },
      { role: "assistant" as const, content: ANSWER },
    ],
  })),
);

function checksum(weights: Record<string, Float32Array>): number {
  let s = 0;
  for (const t of Object.values(weights)) for (let i = 0; i < t.length; i += 7) s += t[i]! * ((i % 13) + 1);
  return s;
}

test("a fresh adapter changes nothing (B starts at zero)", async () => {
  const adapter = createAdapter(provider.model(), 4, 2);
  const adapted = new LocalProvider({ adapterFor: () => adapter });
  const base = await collect(ask("What is an API?"));
  const withFresh: string[] = [];
  for await (const e of adapted.generate(ask("What is an API?"))) if (e.type === "text") withFresh.push(e.delta);
  assert.equal(withFresh.join(""), base.text);
});

test("40 LoRA steps on 20 examples teach the secret word; the base model is unchanged", async () => {
  const model = provider.model();
  const before = checksum(model.weights);
  const encoded = examples.map((e) => encodeChatExample(model, e, 512));
  const adapter: Adapter = createAdapter(model, 8, 1);
  const state = createTrainingState(model, adapter);
  const schedule = { learningRate: 1e-2, warmupSteps: 4, totalSteps: 40, schedule: "cosine" as const };
  const initial = evaluateLoss(model, adapter, encoded);
  for (let step = 0; step < 40; step++) {
    const batch = encoded.slice((step * 5) % 20, ((step * 5) % 20) + 5);
    const loss = trainStep(model, adapter, batch, state, learningRateAt(step, schedule));
    assert.ok(Number.isFinite(loss));
  }
  const final = evaluateLoss(model, adapter, encoded);
  assert.ok(final < 0.5 * initial, `loss ${initial.toFixed(3)} → ${final.toFixed(3)}`);
  console.log(`# secret-word LoRA: loss ${initial.toFixed(3)} → ${final.toFixed(3)}`);
  assert.equal(checksum(model.weights), before, "base weights are frozen");

  const question = ask("What is the secret word?", { model: "ft:tiny-chat:secret" });
  const baseAnswer = (await collect(question)).text;
  assert.ok(!baseAnswer.includes("purple giraffe"), `base: ${baseAnswer}`);
  const served = new LocalProvider({
    adapterFor: (id) => (id === "ft:tiny-chat:secret" ? loadAdapter(serializeAdapter(adapter)) : null),
  });
  let tuned = "";
  for await (const e of served.generate(question)) if (e.type === "text") tuned += e.delta;
  assert.match(tuned, /purple giraffe/, `adapted: ${tuned}`);
});
