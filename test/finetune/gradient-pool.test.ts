/**
 * The worker threads that compute fine-tuning gradients (server/finetune/gradient-pool.ts):
 * the same numbers on one thread as on two, the in-thread arithmetic shard by shard (and
 * log-probabilities as this thread computes them), the event loop free while they work,
 * and a task that fails rejects its step with the cause.
 */
import { afterAll, test } from "vitest";
import assert from "node:assert/strict";
import { cutShards, GradientPool, gradientPool } from "../../server/finetune/gradient-pool.ts";
import { encodeRow, localBaseModel } from "../../server/finetune/trainer-data.ts";
import { adaptModel, createAdapter } from "../../server/inference/local/index.ts";
import {
  adapterTaskGradients,
  rehearsalExamples,
  sequenceLogProb,
  type GradientTask,
} from "../../server/finetune/local/index.ts";
import { createRng } from "../../server/inference/local/math.ts";
import { TUNING_CASES } from "../../bench/support/tuning-datasets.ts";
import { turnsDuring } from "../support/event-loop.ts";

const model = localBaseModel();
const pools: GradientPool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

function pool(threads: number): GradientPool {
  const p = new GradientPool(model, threads);
  pools.push(p);
  return p;
}

/** An adapter part-way through training (B not zero), and a step's worth of tasks. */
function stepOf(rows: number) {
  const adapter = createAdapter(model, 4, 1);
  const rng = createRng(2);
  for (const m of Object.values(adapter.matrices)) for (let i = 0; i < m.B.length; i++) m.B[i] = (rng() - 0.5) * 0.02;
  const voice = TUNING_CASES.find((c) => c.name === "voice")!;
  const examples = voice.rows.slice(0, rows).map((row) => {
    const e = encodeRow(model, row);
    assert.equal(e.format, "SFT");
    return e.example;
  });
  const all = [...examples, ...rehearsalExamples(adaptModel(model, adapter), 0, 4)];
  const tasks = all.map((example): GradientTask => ({ kind: "crossEntropy", example, scale: 1 / 100 }));
  return { adapter, tasks };
}

test("one thread and two give the same gradient and losses, bit for bit", async () => {
  const { adapter, tasks } = stepOf(8);
  const one = await pool(1).gradients(adapter, tasks);
  const two = await pool(2).gradients(adapter, tasks);
  assert.deepEqual(two.losses, one.losses);
  assert.deepEqual(Object.keys(two.grads).sort(), Object.keys(one.grads).sort());
  for (const [name, g] of Object.entries(one.grads)) assert.deepEqual(two.grads[name], g, name);
});

test("the pool's gradient is each shard's in-thread gradient, added in shard order", async () => {
  const { adapter, tasks } = stepOf(6);
  const shards = cutShards(tasks, 2);
  assert.ok(shards.every((s) => s.length > 0));
  assert.deepEqual(shards.flat(), tasks, "contiguous shards, in order");
  const parts = shards.map((shard) => adapterTaskGradients(model, adapter, shard));
  const expected = parts[0]!.grads;
  for (const [name, g] of Object.entries(parts[1]!.grads))
    for (let i = 0; i < g!.length; i++) expected[name]![i]! += g![i]!;
  const got = await pool(2).gradients(adapter, tasks);
  assert.deepEqual(got.losses, [...parts[0]!.losses, ...parts[1]!.losses]);
  for (const [name, g] of Object.entries(expected)) assert.deepEqual(got.grads[name], g, name);
});

test("log-probabilities of sequences under an adapter, in order, as computed on this thread", async () => {
  const { adapter, tasks } = stepOf(5);
  const sequences = tasks.map((t) => (t.kind === "crossEntropy" ? t.example : t.pair.chosen));
  const adapted = adaptModel(model, adapter);
  const expected = sequences.map((s) => sequenceLogProb(adapted, adapted.weights, s));
  assert.deepEqual(await pool(2).logProbs(adapter, sequences), expected);
  assert.deepEqual(await pool(1).logProbs(adapter, sequences.slice(0, 1)), expected.slice(0, 1));
});

test("the event loop turns while the threads compute a step", async () => {
  const { adapter, tasks } = stepOf(8);
  const { turns } = await turnsDuring(() => pool(2).gradients(adapter, tasks));
  // Computed on this thread, the step would run to its end before the first tick.
  assert.ok(turns > 10, `${turns} turns of the event loop during the step`);
});

test("a task that cannot be computed rejects the step with the worker's error, and the pool still works", async () => {
  const { adapter, tasks } = stepOf(2);
  const p = pool(2);
  // No target mask: the worker's loss reads it and throws.
  const example = { tokens: [1, 2, 3], targetMask: null };
  const broken = [...tasks, { kind: "crossEntropy", example, scale: 1 } as unknown as GradientTask];
  await assert.rejects(p.gradients(adapter, broken), /gradient worker: TypeError/);
  assert.equal(p.broken, false);
  const again = await p.gradients(adapter, tasks);
  assert.equal(again.losses.length, tasks.length);
});

test("a pool whose threads have stopped fails every request, and the process gets a new one", async () => {
  const { adapter, tasks } = stepOf(2);
  const first = gradientPool("tiny-chat");
  assert.equal(gradientPool("tiny-chat"), first, "one pool per base model");
  await first.close();
  assert.equal(first.broken, true);
  await assert.rejects(first.gradients(adapter, tasks), /closed/);
  const second = gradientPool("tiny-chat");
  pools.push(second);
  assert.notEqual(second, first);
  assert.equal((await second.gradients(adapter, tasks)).losses.length, tasks.length);
});
