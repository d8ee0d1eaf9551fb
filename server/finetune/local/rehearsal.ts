/**
 * Rehearsal: a few dialogues of the base model's own corpus mixed into every
 * fine-tuning step, trained on as the base was. A small dataset pulls an adapter
 * towards its pattern on every prompt (a persona answering arithmetic with its name);
 * rehearsing what the base already answers keeps those answers, at the cost of a few
 * more examples per step. The corpus is the committed `corpus/dialogues.jsonl`.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { Dialogue } from "../../inference/local/corpus/compose.ts";
import type { LocalModel } from "../../inference/local/local-model.ts";
import { createRng } from "../../inference/local/math.ts";
import { renderTurns } from "../../inference/local/template.ts";
import type { EncodedExample } from "./example.ts";

export const DIALOGUES_PATH = fileURLToPath(new URL("../../inference/local/corpus/dialogues.jsonl", import.meta.url));

let dialogues: Dialogue[] | undefined;
let loading: Promise<Dialogue[]> | undefined;

/** The base model's training dialogues, read once (at once, if `loadCorpusDialogues` has not read them yet). */
export function corpusDialogues(): Dialogue[] {
  dialogues ??= parseDialogues(readFileSync(DIALOGUES_PATH, "utf8").split("\n"));
  return dialogues;
}

/** Lines parsed between two turns of the event loop while loading. */
const LINES_PER_TURN = 512;

/**
 * The same dialogues, read and parsed without holding the event loop: a fine-tuning job
 * awaits this before its first step, so that reading the 1.4 MB corpus (about 20 ms, half
 * of what held a server's event loop when its first job started) does not delay the
 * requests the process serves meanwhile.
 */
export function loadCorpusDialogues(): Promise<Dialogue[]> {
  loading ??= (async () => {
    const parsed = await parseDialoguesInParts(await readFile(DIALOGUES_PATH, "utf8"));
    dialogues ??= parsed;
    return dialogues;
  })().catch((error: unknown) => {
    loading = undefined; // a failed read (too many open files) is tried again by the next job
    throw error;
  });
  return loading;
}

/** The dialogues of a corpus file's text, LINES_PER_TURN lines at a time with a turn of the event loop between. */
export async function parseDialoguesInParts(text: string): Promise<Dialogue[]> {
  const lines = text.split("\n");
  const parsed: Dialogue[] = [];
  for (let i = 0; i < lines.length; i += LINES_PER_TURN) {
    if (i > 0) await yieldToEventLoop();
    parsed.push(...parseDialogues(lines.slice(i, i + LINES_PER_TURN)));
  }
  return parsed;
}

function parseDialogues(lines: string[]): Dialogue[] {
  return lines.filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Dialogue);
}

/**
 * `count` corpus dialogues for optimisation step `step`, in `model`'s vocabulary, with
 * the base training's targets (what the model writes). The choice depends on the run's
 * seed and the step alone, so a resumed job rehearses exactly what it would have (seed 1
 * draws what jobs always drew). The trainer awaits `loadCorpusDialogues` first; otherwise
 * the corpus is read here, synchronously.
 */
export function rehearsalExamples(model: LocalModel, step: number, count: number, seed = 1): EncodedExample[] {
  const corpus = corpusDialogues();
  const rng = createRng(0x7e4ea75e + step * 104_729 + (seed - 1) * 7_919_317);
  const out: EncodedExample[] = [];
  for (let i = 0; i < count; i++) out.push(renderTurns(model.vocab, corpus[Math.floor(rng() * corpus.length)]!.turns));
  return out;
}
