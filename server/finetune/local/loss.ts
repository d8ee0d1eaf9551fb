/**
 * Next-token cross-entropy over a sequence's logits, with its gradient. Row t of the
 * logits predicts tokens[t+1]; only targets whose mask is 1 count (assistant tokens in
 * chat training, every token in base training).
 */
import type { EncodedExample } from "./example.ts";

/** Number of target tokens of a sequence (the mask of its first token never counts: nothing predicts it). */
export function targetCount(example: EncodedExample): number {
  let n = 0;
  for (let t = 1; t < example.targetMask.length; t++) n += example.targetMask[t]!;
  return n;
}

/**
 * Σ −log p(target) over the sequence's targets. When dLogits is given it receives
 * scale·(softmax − onehot) on target rows and 0 elsewhere, i.e. the gradient of
 * scale·Σ −log p.
 */
export function nextTokenLoss(
  logits: Float32Array,
  example: EncodedExample,
  vocabSize: number,
  scale: number,
  dLogits: Float32Array | null,
): number {
  const { tokens, targetMask } = example;
  let lossSum = 0;
  if (dLogits !== null) dLogits.fill(0);
  for (let t = 0; t + 1 < tokens.length; t++) {
    if (targetMask[t + 1] !== 1) continue;
    const o = t * vocabSize;
    let max = -Infinity;
    for (let i = 0; i < vocabSize; i++) if (logits[o + i]! > max) max = logits[o + i]!;
    let sum = 0;
    for (let i = 0; i < vocabSize; i++) sum += Math.exp(logits[o + i]! - max);
    const logZ = max + Math.log(sum);
    const target = tokens[t + 1]!;
    lossSum += logZ - logits[o + target]!;
    if (dLogits !== null) {
      for (let i = 0; i < vocabSize; i++) dLogits[o + i] = Math.exp(logits[o + i]! - logZ) * scale;
      dLogits[o + target]! -= scale;
    }
  }
  return lossSum;
}
