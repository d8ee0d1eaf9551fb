/** The training API on a tiny random model: schedules, base training, DPO, serialization. */
import { test } from "vitest";
import assert from "node:assert/strict";
import { deserializeModel, serializeModel, type LocalModel } from "../../server/inference/local/local-model.ts";
import { createAdapter } from "../../server/inference/local/lora.ts";
import { initWeights, type ModelConfig } from "../../server/inference/local/model.ts";
import { learningRateAt } from "../../server/finetune/local/optimizer.ts";
import {
  createTrainingState,
  dpoStep,
  encodeChatExample,
  evaluateLoss,
  trainStep,
} from "../../server/finetune/local/train.ts";
import { buildVocabulary } from "../../server/inference/local/vocab.ts";

function tinyModel(): LocalModel {
  const vocab = buildVocabulary(["Hello! How can I help you today? Goodbye."]);
  const config: ModelConfig = { vocabSize: vocab.size, dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, contextLength: 32 };
  return { config, vocab, weights: initWeights(config, 1) };
}

test("learning-rate schedules: warmup, then constant, cosine or linear decay to zero", () => {
  const base = { learningRate: 1, warmupSteps: 10, totalSteps: 110 };
  assert.equal(learningRateAt(0, { ...base, schedule: "constant" }), 0.1);
  assert.equal(learningRateAt(9, { ...base, schedule: "constant" }), 1);
  assert.equal(learningRateAt(60, { ...base, schedule: "constant" }), 1);
  assert.ok(Math.abs(learningRateAt(60, { ...base, schedule: "cosine" }) - 0.5) < 1e-9);
  assert.ok(Math.abs(learningRateAt(60, { ...base, schedule: "linear_decay" }) - 0.5) < 1e-9);
  assert.ok(learningRateAt(110, { ...base, schedule: "cosine" }) < 1e-9);
  assert.equal(learningRateAt(110, { ...base, schedule: "linear_decay" }), 0);
});

test("base training (no adapter) lowers the loss on assistant tokens only", () => {
  const model = tinyModel();
  const example = encodeChatExample(model, {
    messages: [
      { role: "user", content: "Hello!" },
      { role: "assistant", content: "How can I help you today?" },
    ],
  });
  assert.deepEqual(example.targetMask.slice(0, 4), [0, 0, 0, 0], "user turn is not a target");
  const state = createTrainingState(model, null);
  const initial = evaluateLoss(model, null, [example]);
  for (let i = 0; i < 30; i++) trainStep(model, null, [example], state, 1e-2);
  assert.ok(evaluateLoss(model, null, [example]) < 0.3 * initial);
});

test("a DPO step moves the adapter towards the chosen answer", () => {
  const model = tinyModel();
  const adapter = createAdapter(model, 4, 3);
  const state = createTrainingState(model, adapter);
  const pair = {
    prompt: [{ role: "user" as const, content: "Hello!" }],
    chosen: "How can I help you today?",
    rejected: "Goodbye.",
  };
  const first = dpoStep(model, adapter, [pair], state, 1e-2, 0.5);
  assert.ok(Math.abs(first - Math.log(2)) < 1e-6, "policy = reference at the start, so the loss is log 2");
  let last = first;
  for (let i = 0; i < 20; i++) last = dpoStep(model, adapter, [pair], state, 1e-2, 0.5);
  assert.ok(last < 0.5 * first, `DPO loss ${first} → ${last}`);
});

test("a model serializes and loads back identically", () => {
  const model = tinyModel();
  const copy = deserializeModel(serializeModel(model, { note: "test" }));
  assert.deepEqual(copy.config, model.config);
  assert.deepEqual(copy.vocab.bpeIds, model.vocab.bpeIds);
  for (const [name, t] of Object.entries(model.weights)) assert.deepEqual(copy.weights[name], t);
});
