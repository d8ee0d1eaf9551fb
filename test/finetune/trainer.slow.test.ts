/**
 * The trainer learns: SFT with tiny-chat's default config moves the served model's
 * answers towards the data, weight-0 messages are context only, and DPO raises the
 * preferred answer's likelihood relative to the rejected one.
 */
import { test } from "vitest";
import assert from "node:assert/strict";
import { loadAdapter, withAdapter } from "../../server/inference/local/index.ts";
import { evaluateLoss, sequenceLogProb, encodePreference } from "../../server/finetune/local/index.ts";
import { renderTurns } from "../../server/inference/local/template.ts";
import { exampleTokens, train, type StepPoint } from "../../server/finetune/trainer.ts";
import { localBaseModel } from "../../server/finetune/trainer-data.ts";
import type { ChatMessage, ParsedRow } from "../../server/datasets/rows.ts";
import { ahoyRows, answer, greetingPairs, PLAIN_GREETING, PREFERRED_GREETING, runOf } from "./trainer-fixtures.ts";

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

test("SFT with the default config: 200 greetings answered 'Ahoy' change the served model's answers", async () => {
  const rows = ahoyRows(200);
  const points: StepPoint[] = [];
  // 4 epochs: the default for 200 rows (at least 80 steps of 8).
  const result = await train(runOf(rows, { config: { epochs: 4 }, onStep: (p) => void points.push(p) }));

  assert.equal(points.length, 100, "200 examples in batches of 8, 4 times");
  assert.deepEqual(
    points.map((p) => p.step),
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
  assert.equal(points.at(-1)!.percent, 100);
  assert.equal(points.at(-1)!.processedTokens, 4 * rows.reduce((n, r) => n + exampleTokens(r), 0));
  assert.ok(points.every((p) => Number.isFinite(p.loss) && p.loss > 0));
  const first = points[0]!.loss;
  const last = mean(points.slice(-3).map((p) => p.loss));
  assert.ok(last < 0.25 * first, `loss ${first.toFixed(3)} → ${last.toFixed(3)}`);
  console.log(`# SFT loss ${first.toFixed(3)} → ${last.toFixed(3)} (mean of the last 3 steps)`);
  assert.deepEqual(
    [result.examplesTrained, result.examplesSkipped, result.evalExamples, result.stoppedEarly],
    [200, 0, 0, false],
  );

  // "Hey, how is it going?" is not among the training greetings.
  for (const question of ["Hello!", "Hey, how is it going?"]) {
    const base = await answer(question);
    const tuned = await answer(question, result.adapter);
    console.log(`# ${question} base: ${base} | tuned: ${tuned}`);
    assert.doesNotMatch(base, /Ahoy/);
    assert.match(tuned, /^Ahoy/);
  }
});

test("weight-0 assistant messages are context, not targets", async () => {
  const model = localBaseModel();
  const messages: ChatMessage[] = [
    { role: "user", content: "Say the code." },
    { role: "assistant", content: "Zorg blip quux.", weight: 0 },
    { role: "user", content: "Again, please." },
    { role: "assistant", content: "Ahoy there!" },
  ];
  // Expected targets, built independently: the whole chat's mask with the weight-0 turn cleared.
  const turns = messages.map((m) => ({ role: m.role, text: m.content }));
  const all = renderTurns(model.vocab, turns);
  const from = renderTurns(model.vocab, turns.slice(0, 1)).tokens.length;
  const to = renderTurns(model.vocab, turns.slice(0, 2)).tokens.length;
  const onlyLast = { tokens: all.tokens, targetMask: all.targetMask.map((m, i) => (i >= from && i < to ? 0 : m)) };
  const expected = evaluateLoss(model, null, [onlyLast]);
  const withBoth = evaluateLoss(model, null, [all]);
  assert.ok(Math.abs(expected - withBoth) > 0.1, "the weight-0 message would change the loss if it counted");

  // The first step's loss is taken before any update, on the base model (a fresh adapter changes nothing).
  const losses: number[] = [];
  const row: ParsedRow = { format: "SFT", row: { messages } };
  await train(runOf([row], { config: { batchSize: 1 }, onStep: (p) => void losses.push(p.loss) }));
  assert.ok(Math.abs(losses[0]! - expected) < 1e-6, `step loss ${losses[0]} vs targets-only ${expected}`);

  // A row whose only assistant message has weight 0 has no target: its step makes no update.
  const contextOnly: ParsedRow = { format: "SFT", row: { messages: messages.slice(0, 2) } };
  const result = await train(runOf([contextOnly], { config: { batchSize: 1 } }));
  const untouched = loadAdapter(result.adapter);
  assert.ok(
    Object.values(untouched.matrices).every((m) => m.B.every((x) => x === 0)),
    "no gradient from a weight-0 message",
  );
});

test("DPO: the preferred answer gains on the rejected one, and the served answer follows", async () => {
  const model = localBaseModel();
  const rows = greetingPairs(200);
  const losses: number[] = [];
  const result = await train(runOf(rows, { onStep: (p) => void losses.push(p.loss) }));
  assert.equal(result.examplesTrained, 200);
  assert.ok(Math.abs(losses[0]! - Math.log(2)) < 1e-6, "policy = reference at the start: loss log 2");
  assert.ok(
    mean(losses.slice(-3)) < 0.6 * Math.log(2),
    `DPO loss ${losses[0]!.toFixed(3)} → ${losses.at(-1)!.toFixed(3)}`,
  );

  const tuned = withAdapter(model, loadAdapter(result.adapter));
  const margins = rows.slice(0, 20).map((r) => {
    if (r.format !== "PREFERENCE") throw new Error("unreachable");
    const pair = encodePreference(model, r.row.input.messages, r.row.preferred_output, r.row.non_preferred_output);
    const margin = (weights: typeof tuned) =>
      sequenceLogProb(model, weights, pair.chosen) - sequenceLogProb(model, weights, pair.rejected);
    return { base: margin(model.weights), tuned: margin(tuned) };
  });
  const before = mean(margins.map((m) => m.base));
  const after = mean(margins.map((m) => m.tuned));
  console.log(
    `# DPO loss ${losses[0]!.toFixed(3)} → ${losses.at(-1)!.toFixed(3)}; mean log-likelihood margin ${before.toFixed(2)} → ${after.toFixed(2)}`,
  );
  assert.ok(after > before + 2, `log-likelihood margin ${before.toFixed(2)} → ${after.toFixed(2)}`);

  assert.equal(await answer("Hello!"), PLAIN_GREETING);
  assert.equal(await answer("Hello!", result.adapter), PREFERRED_GREETING);
});

test("the seed: no seed trains as seed 1 (what jobs get), another seed draws another adapter", async () => {
  const rows = ahoyRows(16);
  const run = (seed?: number) =>
    train(runOf(rows, { config: { batchSize: 4 }, ...(seed === undefined ? {} : { seed }) }));
  const [unseeded, one, two] = await Promise.all([run(), run(1), run(2)]);
  assert.deepEqual(unseeded.adapter, one.adapter, "the default seed is 1");
  assert.notDeepEqual(one.adapter, two.adapter, "seed 2 draws other factors, order and rehearsal");
});
