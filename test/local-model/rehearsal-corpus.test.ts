/**
 * The rehearsal corpus is read without holding the event loop (a fine-tuning job awaits
 * it before its first step, in the server's process), and read so it is the same corpus,
 * line for line, as the synchronous reader gives.
 */
import { test } from "vitest";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  corpusDialogues,
  DIALOGUES_PATH,
  loadCorpusDialogues,
  parseDialoguesInParts,
} from "../../server/finetune/local/rehearsal.ts";
import { turnsDuring } from "../support/event-loop.ts";

const text = readFileSync(DIALOGUES_PATH, "utf8");
const lines = text.split("\n").filter((line) => line.trim() !== "");

test("parsing the corpus lets the event loop turn between parts of 512 lines, and keeps every line once, in order", async () => {
  assert.ok(lines.length > 5000, `${lines.length} dialogues in the corpus`);
  // The text is in memory: every turn counted comes from a yield between parts.
  const parsed = await turnsDuring(() => parseDialoguesInParts(text));
  assert.ok(parsed.turns >= Math.floor(lines.length / 512), `${parsed.turns} turns while parsing`);
  assert.deepEqual(
    parsed.result,
    lines.map((line) => JSON.parse(line) as unknown),
  );
});

test("the corpus is loaded once, and the synchronous reader then returns the same dialogues", async () => {
  const loaded = await loadCorpusDialogues();
  assert.equal(loaded.length, lines.length);
  assert.equal(await loadCorpusDialogues(), loaded);
  assert.equal(corpusDialogues(), loaded);
});
