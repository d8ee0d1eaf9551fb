/**
 * Generation's one-token step (decode-step.ts) must give exactly the logits of `forward`
 * (model.ts), which training uses: otherwise a model would answer differently from what
 * it was trained and measured to write. Compared bit for bit over a whole generation of
 * the committed weights, and of a model whose weights differ from them (random ones, two
 * layers of other sizes), so a step that skips or reorders any part of the arithmetic fails.
 */
import assert from "node:assert/strict";
import { test } from "vitest";
import { createDecodeState, decodeStep } from "../../server/inference/local/decode-step.ts";
import { loadModel } from "../../server/inference/local/local-model.ts";
import {
  createCache,
  forward,
  initWeights,
  type ModelConfig,
  type Weights,
} from "../../server/inference/local/model.ts";

function argmax(logits: Float32Array): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
  return best;
}

/** Greedy tokens after `prompt`, stepping both ways side by side; asserts equal logits at every step. */
function compare(cfg: ModelConfig, weights: Weights, prompt: number[], steps: number): void {
  const byForward = createCache(cfg);
  const byStep = createCache(cfg);
  let expected = forward(cfg, weights, prompt, byForward, "last").logits;
  forward(cfg, weights, prompt, byStep, "last");
  const state = createDecodeState(cfg, weights);
  for (let i = 0; i < steps; i++) {
    const next = argmax(expected);
    expected = forward(cfg, weights, [next], byForward, "last").logits;
    const actual = decodeStep(state, next, byStep);
    assert.deepEqual(actual, expected, `logits differ at step ${i}`);
    assert.equal(byStep.length, byForward.length);
  }
  for (let l = 0; l < cfg.nLayers; l++) {
    assert.deepEqual(byStep.k[l], byForward.k[l], `keys of layer ${l}`);
    assert.deepEqual(byStep.v[l], byForward.v[l], `values of layer ${l}`);
  }
}

test("a generation step gives forward's logits, bit for bit, with the committed weights", () => {
  const model = loadModel();
  compare(
    model.config,
    model.weights,
    [1, 2, 3, 4, 5].map((t) => t % model.config.vocabSize),
    60,
  );
});

test("a generation step gives forward's logits with other weights and sizes", () => {
  const cfg: ModelConfig = { vocabSize: 97, dModel: 32, nLayers: 3, nHeads: 2, dFF: 48, contextLength: 40 };
  compare(cfg, initWeights(cfg, 5), [3, 1, 4, 1, 5, 9, 2, 6], 30);
});

test("a generation step past the context length is refused", () => {
  const cfg: ModelConfig = { vocabSize: 11, dModel: 8, nLayers: 1, nHeads: 2, dFF: 8, contextLength: 4 };
  const weights = initWeights(cfg, 1);
  const cache = createCache(cfg);
  forward(cfg, weights, [1, 2, 3, 4], cache, "last");
  assert.throws(() => decodeStep(createDecodeState(cfg, weights), 5, cache), /context length 4/);
});
