/**
 * Single-stream generation speed of the embedded model: tokens per second of greedy
 * decoding with the key/value cache, 192 tokens after each of a few prompts, the
 * committed weights against a baseline weights file measured in the same run (rounds
 * alternate, medians compared). Without --baseline it reports the committed weights only.
 *
 *   node bench/generation.ts [--baseline path/to/old-tiny-chat.bin] [--rounds 5]
 *   git show HEAD~1:server/inference/local/weights/tiny-chat.bin > /tmp/old.bin   # e.g.
 */
import { createSampler, generateTokens } from "../server/inference/local/generate.ts";
import { loadModel, type LocalModel } from "../server/inference/local/local-model.ts";
import { renderPrompt } from "../server/inference/local/template.ts";

const args = process.argv.slice(2);
const baselinePath = args.includes("--baseline") ? args[args.indexOf("--baseline") + 1] : undefined;
const rounds = args.includes("--rounds") ? Number(args[args.indexOf("--rounds") + 1]) : 5;
const TOKENS = 192;
const PROMPTS = ["What is an API?", "Tell me about the sea.", "Count to twelve.", "What is the capital of France?"];

/** Tokens per second over every prompt; generation never stops early (no stop id). */
function tokensPerSecond(model: LocalModel): number {
  const sampler = createSampler({ temperature: 0, topP: 1, seed: 1 }, new Set([0]));
  let tokens = 0;
  const started = performance.now();
  for (const text of PROMPTS) {
    const prompt = renderPrompt(model.vocab, [{ role: "user", text }], "assistant");
    for (const _ of generateTokens(model, model.weights, prompt, sampler, -1, TOKENS)) tokens++;
  }
  return tokens / ((performance.now() - started) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const current = loadModel();
const baseline = baselinePath === undefined ? undefined : loadModel(baselinePath);
tokensPerSecond(current); // warm-up (JIT)
const figures = { current: [] as number[], baseline: [] as number[] };
for (let r = 0; r < rounds; r++) {
  figures.current.push(tokensPerSecond(current));
  if (baseline !== undefined) figures.baseline.push(tokensPerSecond(baseline));
}
const c = median(figures.current);
console.log(
  `committed weights (vocabulary ${current.config.vocabSize}): ${c.toFixed(0)} tokens/s (median of ${rounds})`,
);
if (baseline !== undefined) {
  const b = median(figures.baseline);
  console.log(
    `baseline ${baselinePath} (vocabulary ${baseline.config.vocabSize}): ${b.toFixed(0)} tokens/s; committed / baseline = ${(c / b).toFixed(2)}×`,
  );
}
