/**
 * Token-by-token generation with a key/value cache: greedy at temperature 0 (ties go to
 * the lowest id, so it is bit-for-bit repeatable), otherwise temperature + top-p
 * sampling from a seeded PRNG. Control tokens other than `<|end|>` are never sampled
 * inside a turn, so a reply cannot open a fake user turn.
 */
import { createRng } from "./math.ts";
import { createDecodeState, decodeStep } from "./decode-step.ts";
import { createCache, forward, type KvCache, type Weights } from "./model.ts";
import type { LocalModel } from "./local-model.ts";

export interface SamplingOptions {
  /** 0 is greedy. */
  temperature: number;
  /** Nucleus mass in (0, 1]. */
  topP: number;
  seed: number;
}

export type Sampler = (logits: Float32Array) => number;

/** A sampler over logits with the disallowed ids removed. */
export function createSampler(options: SamplingOptions, disallowed: ReadonlySet<number>): Sampler {
  if (options.temperature <= 0) return (logits) => argmax(logits, disallowed);
  const rng = createRng(options.seed);
  return (logits) => sampleTopP(logits, disallowed, options.temperature, options.topP, rng);
}

/**
 * The first id of the largest allowed logit. The set is asked only about an id that would
 * become the best, not about every id of the vocabulary (about 3 % of a greedy step).
 */
function argmax(logits: Float32Array, disallowed: ReadonlySet<number>): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const value = logits[i]!;
    if ((best < 0 || value > bestValue) && !disallowed.has(i)) {
      best = i;
      bestValue = value;
    }
  }
  return best;
}

function sampleTopP(
  logits: Float32Array,
  disallowed: ReadonlySet<number>,
  temperature: number,
  topP: number,
  rng: () => number,
): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (!disallowed.has(i)) max = Math.max(max, logits[i]! / temperature);
  const probs = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    if (disallowed.has(i)) continue;
    probs[i] = Math.exp(logits[i]! / temperature - max);
    sum += probs[i]!;
  }
  // Candidates in id order, or (for top-p) most likely first with ties in id order, so the cut is deterministic.
  let candidates = [...probs.keys()].filter((i) => probs[i]! > 0);
  if (topP < 1) {
    candidates.sort((a, b) => probs[b]! - probs[a]! || a - b);
    let mass = 0;
    let n = 0;
    while (n < candidates.length && mass < topP * sum) mass += probs[candidates[n++]!]!;
    candidates = candidates.slice(0, Math.max(1, n));
  }
  let r = rng() * candidates.reduce((s, i) => s + probs[i]!, 0);
  for (const i of candidates) {
    r -= probs[i]!;
    if (r <= 0) return i;
  }
  return candidates[candidates.length - 1]!;
}

/**
 * Generates after `prompt` until `stopId` (not yielded) or `maxTokens` tokens. The
 * prompt must already fit the context; when the context fills up during generation the
 * window slides: the last half of the tokens are re-encoded as a fresh prefix.
 */
export function* generateTokens(
  model: LocalModel,
  weights: Weights,
  prompt: readonly number[],
  sampler: Sampler,
  stopId: number,
  maxTokens: number,
): Generator<number, void, void> {
  const cfg = model.config;
  const tokens = [...prompt];
  let cache: KvCache = createCache(cfg);
  let logits = forward(cfg, weights, tokens, cache, "last").logits;
  // One token at a time after the prompt: the same logits as forward, without its allocations.
  const step = createDecodeState(cfg, weights);
  for (let produced = 0; produced < maxTokens; produced++) {
    const next = sampler(logits);
    if (next === stopId) return;
    yield next;
    tokens.push(next);
    if (cache.length >= cfg.contextLength) {
      cache = createCache(cfg);
      logits = forward(cfg, weights, tokens.slice(-Math.floor(cfg.contextLength / 2)), cache, "last").logits;
    } else {
      logits = decodeStep(step, next, cache);
    }
  }
}

/** Keeps the last `limit` tokens of a prompt, so the most recent turns survive. */
export function fitPrompt(prompt: readonly number[], limit: number): number[] {
  return prompt.length <= limit ? [...prompt] : prompt.slice(prompt.length - limit);
}

/**
 * Incremental text of generated tokens: returns each token's new text, holding back a
 * trailing incomplete UTF-8 sequence (decoded as U+FFFD) until the next token completes it.
 */
export class TextStream {
  private readonly ids: number[] = [];
  private emitted = "";
  private readonly decode: (ids: readonly number[]) => string;

  constructor(decode: (ids: readonly number[]) => string) {
    this.decode = decode;
  }

  push(id: number): string {
    this.ids.push(id);
    let text = this.decode(this.ids);
    while (text.endsWith("\uFFFD")) text = text.slice(0, -1);
    if (text.length <= this.emitted.length) return "";
    const delta = text.slice(this.emitted.length);
    this.emitted = text;
    return delta;
  }
}
