/**
 * The output ceiling's meter (server/inference/output-ceiling.ts) against exact counting:
 * whatever the text and however it is cut into deltas, what passes never counts more than
 * the ceiling, all of it passes when it fits, and the ceiling is reported reached exactly
 * when it does not. The meter avoids counting the whole text on every delta with a bound;
 * a wrong bound would let text past the ceiling, which these properties catch.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, test } from "vitest";
import type { GenerationEvent } from "../../server/inference/engine.ts";
import { lastRuns, OutputCeiling } from "../../server/inference/output-ceiling.ts";
import { countTokens } from "../../server/inference/tokenizer.ts";

/** Pieces that make the tokenizer's pre-tokenisation interesting: words, spaces, line breaks, punctuation, digits, contractions, emoji. */
const PIECES = [
  "the",
  " ",
  "  ",
  "\n",
  "\n\n",
  "!",
  "...",
  "?\n",
  "42",
  "1234567",
  "don't",
  "'s",
  "Ünïcödé",
  "你好",
  "🙂",
  "/",
  "\t",
  "Hello",
  "(x)",
  " -- ",
];

const text = fc.array(fc.constantFrom(...PIECES), { minLength: 0, maxLength: 60 }).map((parts) => parts.join(""));

/** The text cut into deltas at `cuts` (positions taken modulo its length), fed to a meter of `limit`. */
function feed(full: string, cuts: number[], limit: number) {
  const ceiling = new OutputCeiling(limit);
  const ends = [...new Set([...cuts.map((c) => c % (full.length + 1)), full.length])]
    .filter((end) => end > 0)
    .sort((a, b) => a - b);
  let passed = "";
  let from = 0;
  for (const to of ends) {
    const event = ceiling.admit({ type: "text", delta: full.slice(from, to) });
    if (event?.type === "text") passed += event.delta;
    from = to;
    if (ceiling.reached) break;
  }
  return { passed, reached: ceiling.reached, ceiling, ends };
}

describe("the text meter", () => {
  // The text so far is what is judged: its count is not monotone (a prefix ending in "don"
  // counts a token more than the whole "don't"), so "fits" means every text sent so far fits.
  test("never passes more than the ceiling; passes everything while the text so far fits; reached exactly when it does not", () => {
    fc.assert(
      fc.property(
        text,
        fc.array(fc.nat(400), { maxLength: 30 }),
        fc.integer({ min: 1, max: 40 }),
        (full, cuts, limit) => {
          const { passed, reached, ends } = feed(full, cuts, limit);
          assert.ok(countTokens(passed) <= limit, `${countTokens(passed)} > ${limit}: ${JSON.stringify(passed)}`);
          assert.ok(full.startsWith(passed));
          const fits = ends.every((end) => countTokens(full.slice(0, end)) <= limit);
          assert.equal(reached, !fits, JSON.stringify({ full, ends, limit }));
          if (fits) assert.equal(passed, full);
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("a cut answer ends as length with the ceiling as its output tokens", () => {
    const { ceiling } = feed("one two three four five six seven", [3, 7, 13], 3);
    assert.equal(ceiling.reached, true);
    assert.deepEqual(ceiling.done(11), {
      type: "done",
      finishReason: "length",
      usage: { inputTokens: 11, outputTokens: 3, reasoningTokens: 0 },
    });
  });

  test("lastRuns takes runs of white space and of other characters from the end", () => {
    assert.equal(lastRuns("a b  cd", 3), "b  cd");
    assert.equal(lastRuns("ab \n", 1), " \n");
    assert.equal(lastRuns("x", 3), "x");
    assert.equal(lastRuns("", 3), "");
  });
});

describe("calls and the provider's end", () => {
  const call: GenerationEvent = { type: "tool_call", callId: "c1", name: "get_weather", arguments: '{"city":"Paris"}' };

  test("a call that does not fit is not passed at all", () => {
    const ceiling = new OutputCeiling(2);
    assert.equal(ceiling.admit(call), undefined);
    assert.equal(ceiling.reached, true);
  });

  test("a call that fits passes unchanged, and text after it has only the room left", () => {
    const ceiling = new OutputCeiling(countTokens('get_weather {"city":"Paris"}') + 1);
    assert.equal(ceiling.admit(call), call);
    assert.deepEqual(ceiling.admit({ type: "text", delta: "Sure, one moment" }), { type: "text", delta: "Sure" });
    assert.equal(ceiling.reached, true);
  });

  test("the provider's usage is never above the ceiling", () => {
    const ceiling = new OutputCeiling(4);
    const done = ceiling.admit({
      type: "done",
      finishReason: "stop",
      usage: { inputTokens: 5, outputTokens: 9, reasoningTokens: 6 },
    });
    assert.deepEqual(done, {
      type: "done",
      finishReason: "stop",
      usage: { inputTokens: 5, outputTokens: 4, reasoningTokens: 4 },
    });
  });
});

describe("a reasoning summary", () => {
  const summary = "The user greets me, so I should greet them back and offer some help.";

  test("one that does not fit is cut at the ceiling and marked cut (its item is incomplete)", () => {
    const ceiling = new OutputCeiling(3);
    const admitted = ceiling.admit({ type: "reasoning", summary });
    assert.equal(admitted?.type, "reasoning");
    assert.equal(admitted.type === "reasoning" && admitted.cut, true);
    assert.equal(admitted.type === "reasoning" && countTokens(admitted.summary), 3);
    assert.equal(ceiling.reached, true);
  });

  test("one that fits passes as it came, with the provider's own mark", () => {
    const whole: GenerationEvent = { type: "reasoning", summary };
    assert.equal(new OutputCeiling(100).admit(whole), whole);
    const marked: GenerationEvent = { type: "reasoning", summary, cut: true };
    assert.equal(new OutputCeiling(100).admit(marked), marked);
  });
});
