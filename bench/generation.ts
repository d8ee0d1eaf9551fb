/**
 * Single-stream generation speed of the embedded model: tokens per second of greedy
 * decoding with the key/value cache, 192 tokens after each of a few prompts, the
 * committed weights against a baseline weights file measured in the same run (rounds
 * alternate, medians compared). Without --baseline it reports the committed weights only.
 *
 * With --forward-steps the baseline is instead the committed weights stepped through the
 * training forward pass one token at a time (as generation did before decode-step.ts), so
 * the step's own gain is measured on the same weights in the same process.
 *
 *   node bench/generation.ts [--baseline path/to/old-tiny-chat.bin | --forward-steps] [--rounds 5]
 *   git show HEAD~1:server/inference/local/weights/tiny-chat.bin > /tmp/old.bin   # e.g.
 */
import { createSampler, generateTokens } from "../server/inference/local/generate.ts";
import { loadModel, type LocalModel } from "../server/inference/local/local-model.ts";
import { createCache, forward } from "../server/inference/local/model.ts";
import { renderPrompt } from "../server/inference/local/template.ts";

const args = process.argv.slice(2);
const baselinePath = args.includes("--baseline") ? args[args.indexOf("--baseline") + 1] : undefined;
const forwardStepsBaseline = args.includes("--forward-steps");
const rounds = args.includes("--rounds") ? Number(args[args.indexOf("--rounds") + 1]) : 5;
const TOKENS = 192;
const PROMPTS = ["What is an API?", "Tell me about the sea.", "Count to twelve.", "What is the capital of France?"];

type Generate = typeof generateTokens;

/** Greedy decoding through `forward` for every token, as generation ran before decode-step.ts. */
function* forwardSteps(...[model, weights, prompt, sampler, , maxTokens]: Parameters<Generate>): ReturnType<Generate> {
  const cache = createCache(model.config);
  let logits = forward(model.config, weights, prompt, cache, "last").logits;
  for (let i = 0; i < maxTokens; i++) {
    const next = sampler(logits);
    yield next;
    logits = forward(model.config, weights, [next], cache, "last").logits;
  }
}

/** Tokens per second over every prompt; generation never stops early (no stop id). */
function tokensPerSecond(model: LocalModel, generate: Generate = generateTokens): number {
  const sampler = createSampler({ temperature: 0, topP: 1, seed: 1 }, new Set([0]));
  let tokens = 0;
  const started = performance.now();
  for (const text of PROMPTS) {
    const prompt = renderPrompt(model.vocab, [{ role: "user", text }], "assistant");
    for (const _ of generate(model, model.weights, prompt, sampler, -1, TOKENS)) tokens++;
  }
  return tokens / ((performance.now() - started) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const current = loadModel();
const baseline = forwardStepsBaseline ? current : baselinePath === undefined ? undefined : loadModel(baselinePath);
const baselineGenerate = forwardStepsBaseline ? forwardSteps : generateTokens;
tokensPerSecond(current); // warm-up (JIT)
if (baseline !== undefined) tokensPerSecond(baseline, baselineGenerate);
const figures = { current: [] as number[], baseline: [] as number[] };
for (let r = 0; r < rounds; r++) {
  figures.current.push(tokensPerSecond(current));
  if (baseline !== undefined) figures.baseline.push(tokensPerSecond(baseline, baselineGenerate));
}
const c = median(figures.current);
console.log(
  `committed weights (vocabulary ${current.config.vocabSize}): ${c.toFixed(0)} tokens/s (median of ${rounds})`,
);
if (baseline !== undefined) {
  const b = median(figures.baseline);
  console.log(
    `baseline ${forwardStepsBaseline ? "the same weights, a forward pass per token" : baselinePath} (vocabulary ${baseline.config.vocabSize}): ${b.toFixed(0)} tokens/s; committed / baseline = ${(c / b).toFixed(2)}×`,
  );
}
