/**
 * A row's numbers do not depend on the rows computed with it: matmulT gives each row
 * what a one-row product gives it, bit for bit, for every row count (full blocks of four
 * and the tail), and a forward pass that computes only the logits its targets need
 * gives those rows the logits of a full forward pass, and zeros elsewhere. Training
 * relies on both: it skips the output layer on prompt rows, and generation must see the
 * numbers training saw.
 */
import { test } from "vitest";
import assert from "node:assert/strict";
import { createRng, gaussian, matmulT } from "../../server/inference/local/math.ts";
import { createCache, forward, initWeights, type ModelConfig } from "../../server/inference/local/model.ts";

function randomArray(rng: () => number, n: number): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = gaussian(rng);
  return a;
}

test("matmulT: every row equals the one-row product, for 1 to 9 rows and output sizes off the block of four", () => {
  const rng = createRng(5);
  for (const [inDim, outDim] of [
    [16, 7],
    [24, 9],
    [64, 2070 % 64],
  ] as const) {
    const w = randomArray(rng, inDim * outDim);
    for (let rows = 1; rows <= 9; rows++) {
      const x = randomArray(rng, rows * inDim);
      const all = new Float32Array(rows * outDim);
      matmulT(all, x, w, rows, inDim, outDim);
      for (let r = 0; r < rows; r++) {
        const one = new Float32Array(outDim);
        matmulT(one, x.subarray(r * inDim, (r + 1) * inDim), w, 1, inDim, outDim);
        assert.deepEqual(all.subarray(r * outDim, (r + 1) * outDim), one, `${rows} rows, row ${r}, ${inDim}×${outDim}`);
      }
    }
  }
});

test("forward with a target mask: the logits of target rows as a full pass gives them, 0 on the others", () => {
  const cfg: ModelConfig = { vocabSize: 37, dModel: 16, nLayers: 2, nHeads: 2, dFF: 32, contextLength: 24 };
  const weights = initWeights(cfg, 7);
  const rng = createRng(3);
  const tokens = Array.from({ length: 19 }, () => Math.floor(rng() * cfg.vocabSize));
  // Two answers of different lengths, as a chat example has: runs of 1 and 6 target rows.
  const targetMask = tokens.map((_, i) => (i === 5 || (i >= 11 && i <= 16) ? 1 : 0));
  const full = forward(cfg, weights, tokens, createCache(cfg)).logits;
  const part = forward(cfg, weights, tokens, createCache(cfg), { targetMask }).logits;
  const v = cfg.vocabSize;
  let computed = 0;
  for (let t = 0; t < tokens.length; t++) {
    const row = part.subarray(t * v, (t + 1) * v);
    if (targetMask[t + 1] === 1) {
      computed++;
      assert.deepEqual(row, full.subarray(t * v, (t + 1) * v), `row ${t}`);
    } else {
      assert.ok(
        row.every((x) => x === 0),
        `row ${t} predicts no target and is not computed`,
      );
    }
  }
  assert.equal(computed, 7);
});
