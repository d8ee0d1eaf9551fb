/**
 * Rehearsal: a few dialogues of the base model's own corpus mixed into every
 * fine-tuning step, trained on as the base was. A small dataset pulls an adapter
 * towards its pattern on every prompt (a persona answering arithmetic with its name);
 * rehearsing what the base already answers keeps those answers, at the cost of a few
 * more examples per step. The corpus is the committed `corpus/dialogues.jsonl`.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Dialogue } from "./corpus/compose.ts";
import type { LocalModel } from "./local-model.ts";
import { createRng } from "./math.ts";
import { renderTurns } from "./template.ts";
import type { EncodedExample } from "./train.ts";

export const DIALOGUES_PATH = fileURLToPath(new URL("./corpus/dialogues.jsonl", import.meta.url));

let dialogues: Dialogue[] | undefined;

/** The base model's training dialogues, read once. */
export function corpusDialogues(): Dialogue[] {
  dialogues ??= readFileSync(DIALOGUES_PATH, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Dialogue);
  return dialogues;
}

/**
 * `count` corpus dialogues for optimisation step `step`, in `model`'s vocabulary, with
 * the base training's targets (what the model writes). The choice depends on the step
 * alone, so a resumed job rehearses exactly what it would have.
 */
export function rehearsalExamples(model: LocalModel, step: number, count: number): EncodedExample[] {
  const corpus = corpusDialogues();
  const rng = createRng(0x7e4ea75e + step * 104_729);
  const out: EncodedExample[] = [];
  for (let i = 0; i < count; i++) out.push(renderTurns(model.vocab, corpus[Math.floor(rng() * corpus.length)]!.turns));
  return out;
}
