/**
 * Finite-difference checks of the backward pass: the analytic gradient of the training
 * loss must match (L(w+h) − L(w−h)) / 2h, for base weights of every kind and for
 * LoRA factors through the merge. Runs in float64-free Float32 math, so tolerances are
 * relative and the step is fairly large.
 */
import { test } from "vitest";
import assert from "node:assert/strict";
import { initWeights, type ModelConfig } from "../../server/inference/local/model.ts";
import { Vocabulary } from "../../server/inference/local/vocab.ts";
import type { LocalModel } from "../../server/inference/local/local-model.ts";
import {
  accumulateGradients,
  batchTargetCount,
  fullGradientBuffers,
  evaluateLoss,
} from "../../server/finetune/local/train.ts";
import type { EncodedExample } from "../../server/finetune/local/example.ts";
import {
  adapterGradients,
  adapterParameters,
  adaptModel,
  createAdapter,
  mergedGradientBuffers,
} from "../../server/inference/local/lora.ts";
import { createRng } from "../../server/inference/local/math.ts";

const config: ModelConfig = { vocabSize: 40, dModel: 16, nLayers: 2, nHeads: 2, dFF: 32, contextLength: 12 };

function tinyModel(): LocalModel {
  const bpeIds = Array.from({ length: config.vocabSize - 8 }, (_, i) => 1000 + i);
  return { config, vocab: new Vocabulary(bpeIds), weights: initWeights(config, 3) };
}

function batch(vocabSize = config.vocabSize): EncodedExample[] {
  const rng = createRng(9);
  return [10, 7].map((n) => ({
    tokens: Array.from({ length: n }, () => Math.floor(rng() * vocabSize)),
    targetMask: Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 0 : 1)),
  }));
}

/** Central difference of the mean batch loss with respect to one entry of `tensor`. */
function numeric(loss: () => number, tensor: Float32Array, i: number, h = 1e-2): number {
  const saved = tensor[i]!;
  tensor[i] = saved + h;
  const up = loss();
  tensor[i] = saved - h;
  const down = loss();
  tensor[i] = saved;
  return (up - down) / (2 * h);
}

function assertClose(analytic: number, numericValue: number, label: string): void {
  const tolerance = 2e-3 + 0.05 * Math.max(Math.abs(analytic), Math.abs(numericValue));
  assert.ok(
    Math.abs(analytic - numericValue) <= tolerance,
    `${label}: analytic ${analytic} vs numeric ${numericValue}`,
  );
}

test("backward matches finite differences for every kind of base parameter", () => {
  const model = tinyModel();
  const examples = batch();
  const grads = fullGradientBuffers(model);
  accumulateGradients(model, model.weights, examples, grads, 1 / batchTargetCount(examples));
  const loss = () => evaluateLoss(model, null, examples);
  const rng = createRng(5);
  let checked = 0;
  for (const name of [
    "tok_emb",
    "pos_emb",
    "layers.0.attn_norm",
    "layers.0.wq",
    "layers.0.wk",
    "layers.1.wv",
    "layers.1.wo",
    "layers.0.w1",
    "layers.1.w2",
    "layers.1.mlp_norm",
    "final_norm",
    "out",
  ]) {
    const g = grads[name]!;
    // Probe the entries with the largest gradients (small ones drown in float32 noise) plus one random one.
    const order = [...g.keys()].sort((a, b) => Math.abs(g[b]!) - Math.abs(g[a]!));
    for (const i of [order[0]!, order[1]!, Math.floor(rng() * g.length)]) {
      assertClose(g[i]!, numeric(loss, model.weights[name]!, i), `${name}[${i}]`);
      checked++;
    }
  }
  assert.equal(checked, 36);
});

test("LoRA factor gradients and added token rows match finite differences through the merge", () => {
  const model = tinyModel();
  // Three added tokens: dense ids 40–42, which the batch uses as inputs and targets.
  const adapter = createAdapter(model, 2, 4, { addedTokens: [2000, 2001, 2002] });
  // Give B non-zero values so that dA is not trivially zero.
  const rng = createRng(8);
  for (const m of Object.values(adapter.matrices)) for (let i = 0; i < m.B.length; i++) m.B[i] = (rng() - 0.5) * 0.2;
  const examples = batch(config.vocabSize + 3);
  assert.ok(
    examples.some((e) => e.tokens.some((t) => t >= config.vocabSize)),
    "the batch uses an added token",
  );
  const adapted = adaptModel(model, adapter);
  const merged = mergedGradientBuffers(adapted, adapter);
  accumulateGradients(adapted, adapted.weights, examples, merged, 1 / batchTargetCount(examples));
  const grads = adapterGradients(model, adapter, merged);
  const loss = () => evaluateLoss(model, adapter, examples);
  const params = adapterParameters(adapter);
  assert.ok("tokens.embeddings" in params && "tokens.outputs" in params);
  for (const [name, tensor] of Object.entries(params)) {
    const g = grads[name]!;
    const i = [...g.keys()].sort((a, b) => Math.abs(g[b]!) - Math.abs(g[a]!))[0]!;
    assertClose(g[i]!, numeric(loss, tensor, i), `${name}[${i}]`);
  }
});
