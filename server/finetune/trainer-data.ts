/**
 * From dataset rows to what the local trainer optimises: token sequences in the local
 * model's own vocabulary and chat template (the same one serving uses), the rule that
 * skips examples too long for the context, and the o200k token count that billing and
 * estimates use (the dataset validator's count, so the three always agree).
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { findPlatformModel } from "../inference/catalog.ts";
import { loadModel, type LocalModel } from "../inference/local/index.ts";
import {
  encodePreference,
  renderChat,
  targetCount,
  type EncodedExample,
  type EncodedPreference,
  type ReferenceLogProbs,
} from "./local/index.ts";
import { countTokens, decode, encode } from "../inference/tokenizer.ts";
import type { ParsedRow } from "../datasets/rows.ts";
import { rowTokens } from "../datasets/validate-file.ts";

/** The trainer of every trainable base model in the catalogue (`training.trainer`). */
export const LOCAL_TRAINER = "local-lora";

/** Thrown for rows of the other job type's format (the job's dataset checks should prevent it). */
export class TrainingDataError extends Error {
  override name = "TrainingDataError";
}

let baseModel: LocalModel | undefined;

/** The frozen base model: every local model id is served from the same committed weights. */
export function localBaseModel(): LocalModel {
  baseModel ??= loadModel();
  return baseModel;
}

/** The base model a job names (`tiny-chat` or `accounts/maas/models/tiny-chat`), if it is trained here. */
export function trainableLocalModel(name: string): LocalModel {
  const spec = findPlatformModel(name);
  if (spec?.training?.trainer !== LOCAL_TRAINER) throw new Error(`${name} is not a base model of the local trainer`);
  return localBaseModel();
}

/** An example ready to train on. */
export type Encoded = { format: "SFT"; example: EncodedExample } | { format: "PREFERENCE"; pair: EncodedPreference };

export interface TrainingItem {
  encoded: Encoded;
  /** o200k tokens of the row: what processedTokens (and the bill) counts. */
  tokens: number;
  /** DPO only: log π_ref of both answers, computed on first use (the reference never changes). */
  reference?: ReferenceLogProbs;
}

/** The row in the local model's template, whole. SFT targets: assistant messages without weight 0. */
export function encodeRow(model: LocalModel, row: ParsedRow): Encoded {
  if (row.format === "SFT") return { format: "SFT", example: renderChat(model, row.row.messages) };
  const { input, preferred_output, non_preferred_output } = row.row;
  return {
    format: "PREFERENCE",
    pair: encodePreference(model, input.messages, preferred_output, non_preferred_output),
  };
}

/** Longest sequence the example needs (for a pair: the longer of its two answers with the prompt). */
export function sequenceLength(encoded: Encoded): number {
  return encoded.format === "SFT"
    ? encoded.example.tokens.length
    : Math.max(encoded.pair.chosen.tokens.length, encoded.pair.rejected.tokens.length);
}

/**
 * The skip rule: an example is trained on only when its whole sequence fits both the
 * job's maxContextLength and the positions the model has (a longer maxContextLength
 * cannot make the model see more). Nothing is ever truncated.
 */
export function fits(model: LocalModel, encoded: Encoded, maxContextLength: number): boolean {
  return sequenceLength(encoded) <= Math.min(maxContextLength, model.config.contextLength);
}

/**
 * fits() for a dataset row. Every o200k token is at least one token of the local model,
 * so a row with more o200k tokens than the limit cannot fit: it is skipped without being
 * encoded (a megabyte row would take seconds to spell out).
 */
export function fitsRow(model: LocalModel, row: ParsedRow, maxContextLength: number): boolean {
  if (contentTokens(row) > Math.min(maxContextLength, model.config.contextLength)) return false;
  return fits(model, encodeRow(model, row), maxContextLength);
}

/** o200k tokens of the message texts of the row's longest sequence: a lower bound of its length in the model. */
function contentTokens(row: ParsedRow): number {
  const sum = (messages: readonly { content: string }[]) => messages.reduce((n, m) => n + countTokens(m.content), 0);
  if (row.format === "SFT") return sum(row.row.messages);
  const { input, preferred_output, non_preferred_output } = row.row;
  return sum(input.messages) + Math.max(sum(preferred_output), sum(non_preferred_output));
}

export function exampleTokens(row: ParsedRow): number {
  return rowTokens(row);
}

/** Target tokens of an SFT example (0 when every assistant message has weight 0). */
export function targets(encoded: Encoded): number {
  return encoded.format === "SFT"
    ? targetCount(encoded.example)
    : targetCount(encoded.pair.chosen) + targetCount(encoded.pair.rejected);
}

export interface PreparedRows {
  items: TrainingItem[];
  skipped: number;
}

/**
 * Rows tokenized between two turns of the event loop while a job prepares its data
 * (some 5 ms of work): a job of 10 000 rows otherwise held every request for 0.8 s.
 */
const ROWS_PER_TURN = 64;

/** Calls `each` for every row, letting the event loop turn every ROWS_PER_TURN rows. */
async function forEachRow(rows: readonly ParsedRow[], each: (row: ParsedRow, i: number) => void): Promise<void> {
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && i % ROWS_PER_TURN === 0) await yieldToEventLoop();
    each(rows[i]!, i);
  }
}

/**
 * Encodes rows in dataset order for `adapted` (the base model with the job's added
 * tokens), dropping (and counting) those that do not fit. Whether a row fits is judged
 * in the base vocabulary, as the estimate judges it (fitsContext), so the two always agree;
 * added tokens only make the trained sequences shorter.
 */
export async function prepareRows(
  base: LocalModel,
  adapted: LocalModel,
  rows: readonly ParsedRow[],
  format: ParsedRow["format"],
  maxContextLength: number,
  what: string,
): Promise<PreparedRows> {
  const items: TrainingItem[] = [];
  let skipped = 0;
  await forEachRow(rows, (row, i) => {
    if (row.format !== format)
      throw new TrainingDataError(`${what} row ${i + 1} is a ${row.format} row; this job trains on ${format} rows`);
    if (fitsRow(base, row, maxContextLength))
      items.push({ encoded: encodeRow(adapted, row), tokens: exampleTokens(row) });
    else skipped++;
  });
  return { items, skipped };
}

/** Most tokens an adapter adds, and how often a token must occur in the data to be added. */
export const MAX_ADDED_TOKENS = 256;
export const MIN_ADDED_TOKEN_COUNT = 2;

/**
 * The o200k tokens the job's adapter adds to the vocabulary: those of the training
 * rows that the base vocabulary lacks (it would spell them letter by letter), occurring
 * at least MIN_ADDED_TOKEN_COUNT times, most frequent first, at most MAX_ADDED_TOKENS.
 * A token seen once is rarely worth a row: the model could not learn it from one example.
 */
export async function chooseAddedTokens(base: LocalModel, rows: readonly ParsedRow[]): Promise<number[]> {
  const counts = new Map<number, number>();
  const known = new Set<number>();
  await forEachRow(rows, (row) => {
    for (const text of rowTexts(row)) {
      for (const id of encode(text)) {
        if (known.has(id)) continue;
        if (!counts.has(id) && base.vocab.encode(decode([id])).length === 1) {
          known.add(id);
          continue;
        }
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
    }
  });
  return [...counts]
    .filter(([, n]) => n >= MIN_ADDED_TOKEN_COUNT)
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, MAX_ADDED_TOKENS)
    .map(([id]) => id);
}

function rowTexts(row: ParsedRow): string[] {
  if (row.format === "SFT") return row.row.messages.map((m) => m.content);
  const { input, preferred_output, non_preferred_output } = row.row;
  return [...input.messages, ...preferred_output, ...non_preferred_output].map((m) => m.content);
}
