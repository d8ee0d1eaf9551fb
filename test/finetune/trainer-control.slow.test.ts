/**
 * The trainer's contract with the job runner: skipping (never truncating) long examples,
 * abort, checkpoints and resume, reported learning rates, early stopping, determinism,
 * and yielding to the event loop while it trains.
 */
import { test } from "vitest";
import assert from "node:assert/strict";
import { loadAdapter, serializeAdapter } from "../../server/inference/local/index.ts";
import { learningRateAt } from "../../server/finetune/local/index.ts";
import {
  exampleTokens,
  fitsContext,
  loadCheckpoint,
  serializeCheckpoint,
  train,
  type EpochEnd,
  type StepPoint,
  type TrainerCheckpoint,
} from "../../server/finetune/trainer.ts";
import type { ParsedRow } from "../../server/datasets/rows.ts";
import { ahoyRows, greetingPairs, PLAIN_GREETING, runOf } from "./trainer-fixtures.ts";

const sft = (user: string, assistant: string): ParsedRow => ({
  format: "SFT",
  row: {
    messages: [
      { role: "user", content: user },
      { role: "assistant", content: assistant },
    ],
  },
});

/** Smallest maxContextLength the row fits (fitsContext is monotonic in it). */
function sequenceLength(row: ParsedRow): number {
  let n = 1;
  while (!fitsContext(row, n)) n++;
  return n;
}

test("examples longer than maxContextLength are skipped and counted, never truncated", async () => {
  const short = ahoyRows(16);
  const long = [sft("Tell me a long story. ".repeat(20), "Ahoy!"), sft("Hi", "Ahoy! ".repeat(60))];
  const limit = Math.max(...short.map(sequenceLength));
  assert.ok(long.every((r) => !fitsContext(r, limit)) && short.every((r) => fitsContext(r, limit)));

  // Exactly at the limit fits; one token less does not.
  const edge = short[0]!;
  assert.ok(fitsContext(edge, sequenceLength(edge)) && !fitsContext(edge, sequenceLength(edge) - 1));

  const points: StepPoint[] = [];
  const result = await train(
    runOf([...long, ...short], { config: { maxContextLength: limit, epochs: 2 }, onStep: (p) => void points.push(p) }),
  );
  assert.equal(result.examplesTrained, 16);
  assert.equal(result.examplesSkipped, 2);
  assert.equal(points.length, 4, "2 epochs of 16 examples in batches of 8");
  assert.equal(
    points.at(-1)!.processedTokens,
    2 * short.reduce((n, r) => n + exampleTokens(r), 0),
    "skipped examples are not trained on",
  );

  // The model's 256 positions bound the context whatever maxContextLength says.
  const tooLongForModel = sft("word ".repeat(300), "Ahoy!");
  assert.equal(fitsContext(tooLongForModel, 100_000), false);

  // Nothing fits: no step, no epoch end, examplesTrained 0 for the runner to report.
  let calls = 0;
  const none = await train(
    runOf(long, {
      config: { maxContextLength: limit },
      onStep: () => void calls++,
      onEpochEnd: async () => void calls++,
    }),
  );
  assert.deepEqual([none.examplesTrained, none.examplesSkipped, calls], [0, 2, 0]);
});

test("abort stops within one optimisation step and rejects with the signal's reason", async () => {
  const controller = new AbortController();
  const reason = new Error("cancelled by test");
  let stepsAfterAbort = 0;
  const run = runOf(ahoyRows(80), {
    signal: controller.signal,
    onStep: (p) => {
      if (controller.signal.aborted) stepsAfterAbort++;
      if (p.step === 3) controller.abort(reason);
    },
  });
  await assert.rejects(train(run), (error) => error === reason);
  assert.equal(stepsAfterAbort, 0);

  // An abort from elsewhere (a timer, as a cancel request would) lands mid-step.
  const timed = new AbortController();
  let steps = 0;
  let afterTimedAbort = 0;
  setTimeout(() => timed.abort(new Error("timer")), 100);
  await assert.rejects(
    train(
      runOf(ahoyRows(200), {
        signal: timed.signal,
        onStep: () => void (timed.signal.aborted ? afterTimedAbort++ : steps++),
      }),
    ),
    /timer/,
  );
  assert.ok(afterTimedAbort <= 1, `${afterTimedAbort} steps reported after the abort`);
  assert.ok(steps < 25, "stopped before the end");

  const early = new AbortController();
  early.abort(new Error("before start"));
  await assert.rejects(train(runOf(ahoyRows(8), { signal: early.signal })), /before start/);
});

test("resume from a serialized checkpoint continues at the next epoch and ends exactly like an uninterrupted run", async () => {
  const rows = ahoyRows(40);
  const config = { epochs: 3, lrSchedule: "cosine" as const, warmupSteps: 2 };
  const full: StepPoint[] = [];
  const ends: EpochEnd[] = [];
  const uninterrupted = await train(
    runOf(rows, { config, onStep: (p) => void full.push(p), onEpochEnd: async (e) => void ends.push(e) }),
  );
  assert.deepEqual(
    ends.map((e) => [e.epoch, e.checkpoint.step]),
    [
      [1, 5],
      [2, 10],
      [3, 15],
    ],
  );

  const bytes = serializeCheckpoint(ends[0]!.checkpoint);
  const checkpoint: TrainerCheckpoint = loadCheckpoint(bytes);
  const resumed: StepPoint[] = [];
  const result = await train(runOf(rows, { config, resume: checkpoint, onStep: (p) => void resumed.push(p) }));
  assert.deepEqual(
    resumed.map((p) => p.step),
    [6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  );
  assert.deepEqual(
    resumed.map((p) => p.epoch),
    [2, 2, 2, 2, 2, 3, 3, 3, 3, 3],
  );
  assert.deepEqual(resumed, full.slice(5), "same losses, rates and token counts");
  assert.deepEqual(result.adapter, uninterrupted.adapter, "same final adapter");
  assert.deepEqual(serializeCheckpoint(checkpoint), bytes, "training did not change the checkpoint it resumed from");
  assert.deepEqual(serializeCheckpoint(loadCheckpoint(serializeCheckpoint(ends[0]!.checkpoint))), bytes);
});

test("the learning rate of every step is learningRateAt with warmup and the schedule", async () => {
  for (const lrSchedule of ["constant", "cosine", "linear_decay"] as const) {
    const points: StepPoint[] = [];
    await train(
      runOf(ahoyRows(40), {
        config: { epochs: 2, lrSchedule, warmupSteps: 3, learningRate: 0.02 },
        onStep: (p) => void points.push(p),
      }),
    );
    const expected = points.map((p) =>
      learningRateAt(p.step - 1, { learningRate: 0.02, warmupSteps: 3, totalSteps: 10, schedule: lrSchedule }),
    );
    assert.deepEqual(
      points.map((p) => p.learningRate),
      expected,
      lrSchedule,
    );
    assert.ok(points[0]!.learningRate < points[2]!.learningRate, "warmup rises");
  }
});

test("earlyStop ends training when the evaluation loss stops improving and keeps the best epoch's adapter", async () => {
  // Training teaches "Ahoy"; the evaluation rows answer the same greetings plainly, so
  // their loss rises as soon as the model has learnt the training data.
  const rows = ahoyRows(40);
  const evaluation = ahoyRows(16).map((r) =>
    r.format === "SFT" ? sft(r.row.messages.at(-2)!.content, PLAIN_GREETING) : r,
  );
  const ends: EpochEnd[] = [];
  const result = await train(
    runOf(rows, { evaluation, config: { epochs: 6, earlyStop: true }, onEpochEnd: async (e) => void ends.push(e) }),
  );
  const losses = ends.map((e) => e.evaluationLoss!);
  console.log(`# evaluation loss by epoch: ${losses.map((l) => l.toFixed(3)).join(", ")}`);
  assert.ok(result.stoppedEarly);
  assert.equal(result.evalExamples, 16);
  assert.ok(ends.length < 6);
  const best = losses.indexOf(Math.min(...losses));
  assert.ok(losses.at(-1)! >= losses[best]!, "the last epoch did not improve");
  assert.deepEqual(result.adapter, serializeAdapter(ends[best]!.checkpoint.adapter), "the best epoch's adapter");

  // Without earlyStop every epoch runs; without evaluation rows earlyStop has no effect.
  const all: EpochEnd[] = [];
  const noStop = await train(
    runOf(rows, { evaluation, config: { epochs: 3 }, onEpochEnd: async (e) => void all.push(e) }),
  );
  assert.deepEqual([all.length, noStop.stoppedEarly], [3, false]);
  assert.ok(all.every((e) => e.evaluationLoss !== undefined));
  const blind: EpochEnd[] = [];
  const noEval = await train(
    runOf(rows, { config: { epochs: 3, earlyStop: true }, onEpochEnd: async (e) => void blind.push(e) }),
  );
  assert.deepEqual([blind.length, noEval.stoppedEarly, noEval.evalExamples], [3, false, 0]);
  assert.ok(blind.every((e) => e.evaluationLoss === undefined));
});

test("DPO checkpoints and evaluation: evaluation loss is the mean DPO loss of the evaluation pairs", async () => {
  const pairs = greetingPairs(24);
  const ends: EpochEnd[] = [];
  const result = await train(
    runOf(pairs.slice(0, 16), {
      evaluation: pairs.slice(16),
      config: { epochs: 2, learningRate: 5e-4 },
      onEpochEnd: async (e) => void ends.push(e),
    }),
  );
  assert.equal(result.evalExamples, 8);
  assert.equal(ends.length, 2);
  assert.ok(ends[0]!.evaluationLoss! < Math.log(2) && ends[1]!.evaluationLoss! < ends[0]!.evaluationLoss!);
  assert.equal(ends[1]!.checkpoint.kind, "DPO");
  await assert.rejects(train(runOf(pairs, { kind: "SFT" })), /PREFERENCE row/);
});

test("the same inputs give the same losses and adapter", async () => {
  const run = () => {
    const losses: number[] = [];
    return train(runOf(ahoyRows(24), { config: { epochs: 2 }, onStep: (p) => void losses.push(p.loss) })).then((r) => ({
      losses,
      adapter: r.adapter,
    }));
  };
  const [a, b] = [await run(), await run()];
  assert.deepEqual(a, b);
  assert.ok(Object.values(loadAdapter(a.adapter).matrices).some((m) => m.B.some((x) => x !== 0)));
});

test("training yields to the event loop between examples", async () => {
  let ticks = 0;
  let longestGap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
    ticks++;
  }, 1);
  const points: StepPoint[] = [];
  try {
    await train(runOf(ahoyRows(64), { onStep: (p) => void points.push(p) }));
  } finally {
    clearInterval(timer);
  }
  assert.ok(ticks > points.length, `${ticks} timer ticks during ${points.length} steps`);
  console.log(`# longest event-loop gap while training: ${longestGap.toFixed(1)} ms`);
});
