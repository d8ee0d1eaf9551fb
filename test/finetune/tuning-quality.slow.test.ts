/**
 * Fine-tuning teaches with the defaults alone: a 24-row dataset trained with the config a
 * job gets when it sends only `outputModelId` makes the served model show the pattern on
 * prompts that were never in the data, without degenerate answers, and leaves answers to
 * unrelated prompts fluent. bench/tuning-quality.ts measures the same on more datasets.
 */
import { test } from "vitest";
import assert from "node:assert/strict";
import { fillConfig, type TrainableModel } from "../../server/finetune/plan.ts";
import { toTrainerConfig } from "../../server/finetune/runner.ts";
import { train } from "../../server/finetune/trainer.ts";
import { findPlatformModel } from "../../server/inference/catalog.ts";
import { isDegenerate, TUNING_CASES } from "../../bench/support/tuning-datasets.ts";
import { answer } from "./trainer-fixtures.ts";

const persona = TUNING_CASES.find((c) => c.name === "persona")!;

test("24 persona rows with the default config: held-out prompts answer in the persona, unrelated ones stay fluent", async () => {
  assert.equal(persona.rows.length, 24);
  const config = toTrainerConfig(
    fillConfig(
      "JOB_TYPE_SFT",
      findPlatformModel("tiny-chat") as TrainableModel,
      { outputModelId: "t" },
      persona.rows.length,
    ),
  );
  assert.equal(config.epochs, 14, "enough epochs for 80 steps of 4 examples");
  const losses: number[] = [];
  const result = await train({
    kind: "SFT",
    baseModel: "tiny-chat",
    config,
    train: persona.rows,
    evaluation: [],
    signal: new AbortController().signal,
    onStep: (p) => void losses.push(p.loss),
    onEpochEnd: async () => undefined,
  });
  assert.ok(losses.every(Number.isFinite));

  const heldOut = persona.heldOut.map((messages) => messages.at(-1)!.content);
  const tuned = await Promise.all(heldOut.map((q) => answer(q, result.adapter)));
  const shown = tuned.filter((a, i) => persona.shows(a, i)).length;
  console.log(`# persona: ${shown}/${tuned.length} held-out answers show it: ${JSON.stringify(tuned)}`);
  assert.ok(shown >= tuned.length - 1, `held-out answers: ${JSON.stringify(tuned)}`);
  for (const q of heldOut) assert.doesNotMatch(await answer(q), /Nova/, "the base model never says it");
  assert.deepEqual(tuned.filter(isDegenerate), []);

  for (const q of ["What is the capital of France?", "Say good morning."]) {
    const [base, after] = [await answer(q), await answer(q, result.adapter)];
    console.log(`# unrelated ${q} base: ${base} | tuned: ${after}`);
    assert.equal(after, base, "an unrelated prompt is answered as the base answers it");
  }
});
