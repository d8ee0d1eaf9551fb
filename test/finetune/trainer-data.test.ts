/**
 * A job's data preparation (choosing added tokens, encoding every row) lets the event
 * loop turn as it goes: a job of thousands of rows must not hold the requests the server
 * answers meanwhile. The result is the same as in one go.
 */
import { test } from "vitest";
import assert from "node:assert/strict";
import { chooseAddedTokens, encodeRow, localBaseModel, prepareRows } from "../../server/finetune/trainer-data.ts";
import { adaptModel, createAdapter } from "../../server/inference/local/index.ts";
import { TUNING_CASES } from "../../bench/support/tuning-datasets.ts";
import { turnsDuring } from "../support/event-loop.ts";

const model = localBaseModel();
const voice = TUNING_CASES.find((c) => c.name === "voice")!;
const rows = Array.from({ length: 1000 }, (_, i) => voice.rows[i % voice.rows.length]!);

test("choosing the added tokens and encoding 1 000 rows let the event loop turn, rows in dataset order", async () => {
  const chosen = await turnsDuring(() => chooseAddedTokens(model, rows));
  assert.ok(chosen.result.length > 0, "the pirate rows add tokens");
  assert.ok(chosen.turns >= 10, `${chosen.turns} turns while choosing tokens`);
  const adapted = adaptModel(model, createAdapter(model, 8, 1, { addedTokens: chosen.result }));
  const prepared = await turnsDuring(() => prepareRows(model, adapted, rows, "SFT", 256, "training"));
  assert.ok(prepared.turns >= 10, `${prepared.turns} turns while encoding`);
  assert.equal(prepared.result.items.length, rows.length);
  assert.equal(prepared.result.skipped, 0);
  for (const i of [0, 1, 517, 999]) assert.deepEqual(prepared.result.items[i]!.encoded, encodeRow(adapted, rows[i]!));
});
