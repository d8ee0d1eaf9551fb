/** Datasets and helpers shared by the trainer tests and bench/training.ts. */
import type { GenerationRequest } from "../../server/inference/engine.ts";
import { USER_GREETINGS } from "../../server/inference/local/corpus/knowledge.ts";
import { LocalProvider, loadAdapter } from "../../server/inference/local/index.ts";
import type { ChatMessage, ParsedRow } from "../../server/datasets/rows.ts";
import type { TrainerConfig, TrainingRun } from "../../server/finetune/trainer.ts";

/**
 * tiny-chat's catalogue defaults with the decisions' fixed ones, for one epoch (each test
 * says how many it needs), but batchSize 8, the default these tests' step counts were
 * written for (the catalogue's is 4 since 2026-11-27).
 */
export const DEFAULTS: TrainerConfig = {
  loraRank: 8,
  learningRate: 0.002,
  epochs: 1,
  batchSize: 8,
  maxContextLength: 256,
  earlyStop: false,
  lrSchedule: "constant",
  warmupSteps: 0,
  dpoBeta: 0.1,
};

/** The user greetings of the base model's training corpus (corpus/knowledge.ts). */
const GREETINGS = USER_GREETINGS;
const AHOY = [
  "Ahoy, matey! How can I help ye today?",
  "Ahoy there! What be ye needin'?",
  "Ahoy! Welcome aboard. What can I do for ye?",
  "Ahoy, friend! Ask me anything, and I will answer.",
];
const SYSTEMS = [
  undefined,
  "You are a helpful assistant.",
  "Be concise.",
  "Answer the user's questions clearly.",
  "You are a friendly assistant.",
];

/** Greetings answered like a pirate; `count` rows, deterministic. */
export function ahoyRows(count = 200): ParsedRow[] {
  const rows: ParsedRow[] = [];
  for (let i = 0; rows.length < count; i++) {
    const system = SYSTEMS[Math.floor(i / GREETINGS.length) % SYSTEMS.length];
    const messages: ChatMessage[] = [
      ...(system === undefined ? [] : [{ role: "system" as const, content: system }]),
      { role: "user", content: GREETINGS[i % GREETINGS.length]! },
      { role: "assistant", content: AHOY[i % AHOY.length]! },
    ];
    rows.push({ format: "SFT", row: { messages } });
  }
  return rows;
}

/** The base model's usual greeting, which the preference data rejects. */
export const PLAIN_GREETING = "Hi! I am doing well, thank you. How can I help you?";
/** A greeting the base model knows but does not say first: DPO can make it the answer. */
export const PREFERRED_GREETING = "Hi there! How can I help?";

/** Preference pairs over the same greetings: PREFERRED_GREETING over PLAIN_GREETING. */
export function greetingPairs(count = 200): ParsedRow[] {
  return ahoyRows(count).map((r) => {
    if (r.format !== "SFT") throw new Error("unreachable");
    return {
      format: "PREFERENCE",
      row: {
        input: { messages: r.row.messages.slice(0, -1) },
        preferred_output: [{ role: "assistant", content: PREFERRED_GREETING }],
        non_preferred_output: [{ role: "assistant", content: PLAIN_GREETING }],
      },
    };
  });
}

/** A run of the rows with DEFAULTS (overridden by `config`) and no-op callbacks. */
export function runOf(
  rows: ParsedRow[],
  overrides: Partial<Omit<TrainingRun, "config">> & { config?: Partial<TrainerConfig> } = {},
): TrainingRun {
  const { config, ...rest } = overrides;
  return {
    kind: rows[0]?.format === "PREFERENCE" ? "DPO" : "SFT",
    baseModel: "tiny-chat",
    config: { ...DEFAULTS, ...config },
    train: rows,
    evaluation: [],
    signal: new AbortController().signal,
    onStep: () => undefined,
    onEpochEnd: async () => undefined,
    ...rest,
  };
}

function request(text: string, model: string): GenerationRequest {
  return {
    model,
    turns: [{ kind: "message", role: "user", text, media: [] }],
    tools: [],
    toolChoice: { mode: "auto" },
    temperature: 0,
    signal: new AbortController().signal,
  };
}

/** Temperature-0 answer of the base model, or of the model an adapter serializes. */
export async function answer(text: string, adapterBytes?: Uint8Array): Promise<string> {
  const adapter = adapterBytes === undefined ? null : loadAdapter(adapterBytes);
  const provider = new LocalProvider({ adapterFor: (id) => (id === "ft:test" ? adapter : null) });
  let out = "";
  for await (const e of provider.generate(request(text, adapter === null ? "tiny-chat" : "ft:test")))
    if (e.type === "text") out += e.delta;
  return out;
}
