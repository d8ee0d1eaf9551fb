/**
 * Validates an uploaded JSONL file line by line from disk, so memory stays bounded
 * whatever the file's size. Structure is checked on every row; tokens are counted
 * exactly on every row of a small file and on an even sample of a large one (the
 * document calls the field an estimate), because tokenizing is ~10× slower than parsing.
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { countTokens, MESSAGE_OVERHEAD_TOKENS } from "../inference/tokenizer.ts";
import { checkRow, type ParsedRow, type RowFormat, rowMessages } from "./rows.ts";

export interface ValidationResult {
  /** Non-blank lines. */
  totalLines: number;
  validLines: number;
  firstInvalidLine?: { lineNumber: number; reason: string };
  /** Sorted top-level keys over all valid rows. */
  topLevelKeys: string[];
  /** The format of the rows; undefined when no row was valid. */
  format?: RowFormat;
  exampleCount: number;
  estimatedTokenCount: number;
}

export interface ValidationOptions {
  /** Count tokens of every row up to this many rows; beyond it, of every n-th row, scaled up. */
  exactTokenRows: number;
}

const DEFAULTS: ValidationOptions = { exactTokenRows: 20_000 };

export async function validateFile(path: string, options: ValidationOptions = DEFAULTS): Promise<ValidationResult> {
  const state = { total: 0, valid: 0, keys: new Set<string>(), format: undefined as RowFormat | undefined, tokens: 0, counted: 0, firstInvalid: undefined as ValidationResult["firstInvalidLine"] };
  const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Number.POSITIVE_INFINITY });
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === "") continue;
    state.total++;
    const check = checkRow(line);
    const problem = !check.ok ? check.reason : state.format !== undefined && check.parsed.format !== state.format ? mixedFormats(state.format, check.parsed.format) : undefined;
    if (problem !== undefined || !check.ok) {
      state.firstInvalid ??= { lineNumber, reason: problem ?? "invalid row" };
      continue;
    }
    state.format = check.parsed.format;
    state.valid++;
    for (const key of Object.keys(JSON.parse(line) as object)) state.keys.add(key);
    if (shouldCount(state.valid, options)) {
      state.tokens += rowTokens(check.parsed);
      state.counted++;
    }
  }
  const estimated = state.counted === 0 ? 0 : Math.round((state.tokens / state.counted) * state.valid);
  return {
    totalLines: state.total,
    validLines: state.valid,
    ...(state.firstInvalid ? { firstInvalidLine: state.firstInvalid } : {}),
    topLevelKeys: [...state.keys].sort(),
    ...(state.format ? { format: state.format } : {}),
    exampleCount: state.valid,
    estimatedTokenCount: estimated,
  };
}

/** Every row up to the exact limit; then a sample that thins as the file grows. */
function shouldCount(validIndex: number, options: ValidationOptions): boolean {
  if (validIndex <= options.exactTokenRows) return true;
  const stride = Math.ceil(validIndex / options.exactTokenRows);
  return validIndex % stride === 0;
}

/** Tokens of one row, counted like a conversation's input (tokenizer.ts). */
export function rowTokens(parsed: ParsedRow): number {
  return rowMessages(parsed).reduce((sum, m) => sum + MESSAGE_OVERHEAD_TOKENS + countTokens(m.content), 0);
}

function mixedFormats(first: RowFormat, now: RowFormat): string {
  const name = (f: RowFormat) => (f === "SFT" ? "supervised" : "preference");
  return `this row is in the ${name(now)} format but earlier rows are ${name(first)}; a dataset holds one format`;
}
