/**
 * scripts/train-local-model.ts is resumable: a run stopped and resumed gives the same
 * weights as a run never stopped, and a state from another run is refused. Six steps
 * of the real model and corpus, written to a temp dir (the corpus too, via --corpus-out).
 */
import { afterAll, test } from "vitest";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { loadModel } from "../../server/inference/local/local-model.ts";

const SCRIPT = new URL("../../scripts/train-local-model.ts", import.meta.url).pathname;
const dir = mkdtempSync(path.join(os.tmpdir(), "train-script-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How many entries differ (assert.deepEqual on two large typed arrays that differ builds a diff too big to print). */
function differing(x: Float32Array, y: Float32Array): number {
  if (x.length !== y.length) return Math.max(x.length, y.length);
  let n = 0;
  for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) n++;
  return n;
}

const run = (...args: string[]) =>
  promisify(execFile)(process.execPath, [SCRIPT, "--corpus-out", path.join(dir, "corpus.jsonl"), ...args]);

test("a run stopped after step 3 and resumed ends with the weights of a run never stopped", async () => {
  const whole = path.join(dir, "whole.bin");
  const split = path.join(dir, "split.bin");
  await run("--steps", "6", "--out", whole);
  const stopped = await run("--steps", "6", "--out", split, "--stop-after", "3");
  assert.match(stopped.stdout, /stopped after step 3/);
  assert.ok(existsSync(`${split}.train-state`));
  const atStop = loadModel(split).weights["layers.0.wq"]!;
  const resumed = await run("--steps", "6", "--out", split, "--resume");
  assert.match(resumed.stdout, /resumed at step 3/);
  assert.equal(existsSync(`${split}.train-state`), false, "a finished run leaves no state behind");

  const a = loadModel(whole).weights;
  const b = loadModel(split).weights;
  for (const name of Object.keys(a)) assert.equal(differing(b[name]!, a[name]!), 0, `${name} differs`);
  // The steps after the stop moved the weights: the comparison above is not of two copies of step 3.
  assert.ok(differing(atStop, a["layers.0.wq"]!) > 0);
}, 120_000);

test("--resume refuses a state saved for another step count, and a missing one", async () => {
  const out = path.join(dir, "other.bin");
  await run("--steps", "6", "--out", out, "--stop-after", "2");
  await assert.rejects(run("--steps", "8", "--out", out, "--resume"), /another corpus, model size or --steps \(6\)/);
  await assert.rejects(run("--steps", "6", "--out", path.join(dir, "none.bin"), "--resume"), /no training state/);
}, 120_000);
