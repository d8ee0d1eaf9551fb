/**
 * Trainer benchmark: a 200-example SFT job and a 200-pair DPO job with tiny-chat's
 * default config and one epoch (each step also rehearses four corpus dialogues), timed against a baseline measured in the
 * same run: one forward pass over the same sequences with the frozen base model (what
 * serving the examples once would cost). Reports examples/second, the ratio, the
 * longest event-loop stall while training (what a request served meanwhile can wait)
 * and the peak RSS of the process.
 *
 *   node bench/training.ts [examples]
 */
import { readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { sequenceLogProb } from "../server/finetune/local/index.ts";
import type { ChatMessage, ParsedRow } from "../server/datasets/rows.ts";
import { fillConfig, type TrainableModel } from "../server/finetune/plan.ts";
import { toTrainerConfig } from "../server/finetune/runner.ts";
import { train, type TrainerConfig } from "../server/finetune/trainer.ts";
import { findPlatformModel } from "../server/inference/catalog.ts";
import { encodeRow, localBaseModel } from "../server/finetune/trainer-data.ts";

/** tiny-chat's catalogue defaults for the job type, with one epoch: the figure is per pass over the data. */
function defaults(kind: "SFT" | "DPO"): TrainerConfig {
  const base = findPlatformModel("tiny-chat") as TrainableModel;
  return toTrainerConfig(
    fillConfig(kind === "SFT" ? "JOB_TYPE_SFT" : "JOB_TYPE_DPO", base, { outputModelId: "bench", epochs: 1 }, count),
  );
}

const count = Number(process.argv[2] ?? 200);

/** Chats of the local model's own corpus (user/system/assistant turns only): realistic lengths. */
function corpusChats(n: number): ChatMessage[][] {
  const path = fileURLToPath(new URL("../server/inference/local/corpus/dialogues.jsonl", import.meta.url));
  const chats: ChatMessage[][] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (chats.length === n || line.trim() === "") break;
    const turns = (JSON.parse(line) as { turns: { role: string; text: string }[] }).turns;
    if (turns.some((t) => t.role !== "user" && t.role !== "assistant" && t.role !== "system")) continue;
    chats.push(turns.map((t) => ({ role: t.role as ChatMessage["role"], content: t.text })));
  }
  return chats;
}

function sftRows(n: number): ParsedRow[] {
  return corpusChats(n).map((messages) => ({ format: "SFT", row: { messages } }));
}

/** Pairs: the corpus answer preferred over the answer of the next chat. */
function preferenceRows(n: number): ParsedRow[] {
  const chats = corpusChats(n + 1);
  return chats.slice(0, n).map((chat, i) => ({
    format: "PREFERENCE",
    row: {
      input: { messages: chat.slice(0, -1) },
      preferred_output: [chat.at(-1)!],
      non_preferred_output: [{ role: "assistant", content: chats[i + 1]!.at(-1)!.content }],
    },
  }));
}

/** One forward pass of the base model over every sequence the job trains on. */
function baselineMs(rows: ParsedRow[]): { ms: number; tokens: number } {
  const model = localBaseModel();
  const sequences = rows.flatMap((row) => {
    const e = encodeRow(model, row);
    return e.format === "SFT" ? [e.example] : [e.pair.chosen, e.pair.rejected];
  });
  const start = performance.now();
  for (const s of sequences) sequenceLogProb(model, model.weights, s);
  return { ms: performance.now() - start, tokens: sequences.reduce((n, s) => n + s.tokens.length, 0) };
}

async function bench(kind: "SFT" | "DPO", rows: ParsedRow[]): Promise<void> {
  const baseline = baselineMs(rows);
  const stalls = monitorEventLoopDelay({ resolution: 1 });
  const losses: number[] = [];
  stalls.enable();
  const start = performance.now();
  const result = await train({
    kind,
    baseModel: "tiny-chat",
    config: defaults(kind),
    train: rows,
    evaluation: [],
    signal: new AbortController().signal,
    onStep: (p) => void losses.push(p.loss),
    onEpochEnd: async () => undefined,
  });
  const ms = performance.now() - start;
  stalls.disable();
  console.log(
    `${kind}: ${result.examplesTrained} examples (${result.examplesSkipped} skipped), ${losses.length} steps in ${(ms / 1000).toFixed(2)} s` +
      ` = ${((1000 * result.examplesTrained) / ms).toFixed(1)} examples/s, ${(ms / losses.length).toFixed(0)} ms/step;` +
      ` loss ${losses[0]!.toFixed(3)} → ${losses.at(-1)!.toFixed(3)}`,
  );
  console.log(
    `  baseline (one base-model forward over the same ${baseline.tokens} tokens): ${baseline.ms.toFixed(0)} ms;` +
      ` training / baseline = ${(ms / baseline.ms).toFixed(1)}×; longest event-loop stall ${(stalls.max / 1e6).toFixed(1)} ms`,
  );
}

localBaseModel();
await bench("SFT", sftRows(count));
await bench("DPO", preferenceRows(count));
console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
