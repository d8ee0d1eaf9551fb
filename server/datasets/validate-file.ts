/**
 * Validates an uploaded JSONL file line by line from disk, so memory stays bounded
 * whatever the file's size. Structure is checked on every row; tokens are counted
 * exactly on the first rows (all of a small file) and on a random sample of about as
 * many rows of the rest (the document calls the field an estimate), because tokenizing
 * is ~10× slower than parsing.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createRng } from "../inference/local/math.ts";
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
  /** Count tokens of every row up to this many rows; beyond it, of a random sample of about as many, scaled up. */
  exactTokenRows: number;
}

const DEFAULTS: ValidationOptions = { exactTokenRows: 20_000 };

/**
 * A row longer than this is refused without being held whole: one line with no newline
 * must not be able to take the server's memory. Far above any context window.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

export async function validateFile(path: string, options: ValidationOptions = DEFAULTS): Promise<ValidationResult> {
  const state = {
    total: 0,
    valid: 0,
    keys: new Set<string>(),
    format: undefined as RowFormat | undefined,
    firstInvalid: undefined as ValidationResult["firstInvalidLine"],
  };
  const tokens = new TokenEstimate(options.exactTokenRows, (await stat(path)).size);
  for await (const batch of jsonlLines(path)) {
    for (const line of batch) {
      if (line.text !== undefined && line.text.trim() === "") continue;
      state.total++;
      const check = line.text === undefined ? { ok: false as const, reason: tooLong() } : checkRow(line.text);
      const problem = !check.ok
        ? check.reason
        : state.format !== undefined && check.parsed.format !== state.format
          ? mixedFormats(state.format, check.parsed.format)
          : undefined;
      if (problem !== undefined || !check.ok) {
        state.firstInvalid ??= { lineNumber: line.lineNumber, reason: problem ?? "invalid row" };
        continue;
      }
      state.format = check.parsed.format;
      state.valid++;
      for (const key of check.keys) state.keys.add(key);
      tokens.add(check.parsed, line.bytes);
    }
  }
  const estimated = tokens.estimate(state.valid);
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

/** One line of a JSONL file; `text` is undefined for a line over MAX_LINE_BYTES. */
export interface JsonlLine {
  /** 1-based, blank lines included. */
  lineNumber: number;
  text: string | undefined;
  /** Its size in the file, newline included. */
  bytes: number;
}

/**
 * The lines of a file in order, in batches (one per chunk read), without a trailing `\r`
 * and without a leading byte order mark. Splitting bytes at `\n` is safe for UTF-8 (the
 * byte never occurs inside a multi-byte character) and much faster than node:readline.
 */
/**
 * Bytes read at a time. Each chunk's lines, their text and parsed rows, are alive together
 * until the batch is checked: with 1 MiB chunks that was several MiB at once, enough to
 * outlive the young generation, so garbage was promoted and the old space grew with the file
 * (1 GiB: 351 MiB peak RSS, heap mostly garbage). With 64 KiB a batch dies young: 163 MiB
 * peak, and twice as fast, fewer objects being copied and collected by full GCs
 * (bench/dataset-validation.ts).
 */
const READ_CHUNK_BYTES = 64 * 1024;

export async function* jsonlLines(path: string, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<JsonlLine[]> {
  const line = new LineBuilder(maxLineBytes);
  for await (const chunk of createReadStream(path, { highWaterMark: READ_CHUNK_BYTES }) as AsyncIterable<Buffer>) {
    const batch: JsonlLine[] = [];
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      line.append(chunk.subarray(start, end));
      batch.push(line.end(true));
      start = end + 1;
    }
    line.append(chunk.subarray(start)); // continues in the next chunk
    if (batch.length > 0) yield batch;
  }
  if (line.size > 0) yield [line.end(false)];
}

/** The line being read: its pieces from one or more chunks, dropped once it is too long to keep. */
class LineBuilder {
  readonly #maxBytes: number;
  #pieces: Buffer[] = [];
  #overlong = false;
  #lineNumber = 0;
  size = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  append(bytes: Buffer): void {
    this.size += bytes.length;
    if (this.size > this.#maxBytes) {
      this.#overlong = true;
      this.#pieces = [];
    } else if (bytes.length > 0) {
      this.#pieces.push(bytes);
    }
  }

  /** The finished line; the builder starts the next one. */
  end(newline: boolean): JsonlLine {
    this.#lineNumber++;
    const bytes = this.#pieces.length === 1 ? (this.#pieces[0] as Buffer) : Buffer.concat(this.#pieces);
    const line = {
      lineNumber: this.#lineNumber,
      text: this.#overlong ? undefined : lineText(bytes, this.#lineNumber),
      bytes: this.size + (newline ? 1 : 0),
    };
    this.#pieces = [];
    this.#overlong = false;
    this.size = 0;
    return line;
  }
}

function lineText(bytes: Buffer, lineNumber: number): string {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
  const text = bytes.toString("utf8", 0, end);
  return lineNumber === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function tooLong(): string {
  return `the line is longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB; split it into smaller rows (one JSON object per line)`;
}

/**
 * The token estimate: exact over the first `exactRows` valid rows; after them, over a
 * random sample of about as many rows of the rest, its mean scaled to the rows it stands
 * for. How likely a later row is sampled follows from the file's size and the mean row
 * size seen so far, so the work stays about 2 × `exactRows` rows whatever the size. A
 * random (not every n-th) sample cannot fall in step with periodic rows; its fixed seed
 * gives the same estimate for the same file every time.
 */
class TokenEstimate {
  readonly #exactRows: number;
  readonly #fileBytes: number;
  #rows = 0;
  #bytesSeen = 0;
  #exactTokens = 0;
  #sampleTokens = 0;
  #sampled = 0;
  #probability = 1;
  #random = createRng(0x5eed);

  constructor(exactRows: number, fileBytes: number) {
    this.#exactRows = exactRows;
    this.#fileBytes = fileBytes;
  }

  add(parsed: ParsedRow, bytes: number): void {
    this.#rows++;
    this.#bytesSeen += bytes;
    if (this.#rows <= this.#exactRows) {
      this.#exactTokens += rowTokens(parsed);
      if (this.#rows === this.#exactRows) this.#probability = this.#sampleProbability();
    } else if (this.#random() < this.#probability) {
      this.#sampleTokens += rowTokens(parsed);
      this.#sampled++;
    }
  }

  /** Exact tokens plus the sample's mean for every later valid row. */
  estimate(validRows: number): number {
    const later = validRows - Math.min(validRows, this.#exactRows);
    const mean =
      this.#sampled === 0 ? this.#exactTokens / Math.max(1, this.#exactRows) : this.#sampleTokens / this.#sampled;
    return Math.round(this.#exactTokens + mean * later);
  }

  #sampleProbability(): number {
    const rowsLeft = ((this.#fileBytes - this.#bytesSeen) / this.#bytesSeen) * this.#rows;
    return rowsLeft <= this.#exactRows ? 1 : this.#exactRows / rowsLeft;
  }
}

/** Tokens of one row, counted like a conversation's input (tokenizer.ts). */
export function rowTokens(parsed: ParsedRow): number {
  return rowMessages(parsed).reduce((sum, m) => sum + MESSAGE_OVERHEAD_TOKENS + countTokens(m.content), 0);
}

function mixedFormats(first: RowFormat, now: RowFormat): string {
  const name = (f: RowFormat) => (f === "SFT" ? "supervised" : "preference");
  return `this row is in the ${name(now)} format but earlier rows are ${name(first)}; a dataset holds one format`;
}
