/**
 * The service's one token counter. Every usage number the server reports
 * (input, output, reasoning tokens) is computed here, so the wire formats, the
 * local model and the fine-tuning estimates always agree.
 *
 * Encoding: o200k_base, the BPE of the current OpenAI model generation (GPT-4o,
 * o-series, GPT-5). Clients that estimate token counts with tiktoken-style tools
 * use it today, so our counts match theirs; it also splits non-English text into
 * fewer tokens than cl100k_base. The local model reuses these ids (a dense subset of
 * them) so what it generates is counted with the same tokenizer.
 */
import { decode as bpeDecode, encode as bpeEncode } from "gpt-tokenizer/encoding/o200k_base";
import type { Turn } from "./engine.ts";

export const ENCODING_NAME = "o200k_base";

/**
 * Special-token strings such as `<|endoftext|>` are treated as ordinary text: user
 * input must never be able to inject control tokens, and the default of the library
 * (throwing on them) would turn a harmless string into a server error.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The longest run of non-space (or of space) characters handed to the BPE at once. Its
 * merges take time quadratic in the length of one pre-tokenized piece (a 256 KiB word
 * held the event loop for 18 s, every other request waiting), and a megabyte-long one
 * overflows the library's stack (a 500). No word is this long; a longer run (a base64
 * blob, a row of one character) is encoded this many characters at a time, which may
 * count a token more per cut than the exact encoding would.
 */
export const MAX_BPE_RUN = 512;

export function encode(text: string): number[] {
  if (text.length <= MAX_BPE_RUN) return bpeEncode(text, PLAIN_TEXT);
  const ids: number[] = [];
  const add = (from: number, to: number) => {
    for (const id of bpeEncode(text.slice(from, to), PLAIN_TEXT)) ids.push(id);
  };
  let segment = 0; // start of the text not encoded yet
  let run = 0; // start of the current run of space or non-space
  let runIsSpace = isSpace(text.charCodeAt(0));
  for (let i = 1; i <= text.length; i++) {
    const space = i < text.length && isSpace(text.charCodeAt(i));
    if (i < text.length && space === runIsSpace) continue;
    if (i - run > MAX_BPE_RUN) {
      if (run > segment) add(segment, run);
      for (let from = run; from < i;) {
        let to = Math.min(i, from + MAX_BPE_RUN);
        if (to < i && isHighSurrogate(text.charCodeAt(to - 1))) to--; // never cut a character in two
        add(from, to);
        from = to;
      }
      segment = i;
    }
    run = i;
    runIsSpace = space;
  }
  if (segment < text.length) add(segment, text.length);
  return ids;
}

/** `\s` of a regular expression, by UTF-16 code unit. */
function isSpace(code: number): boolean {
  return (
    (code >= 9 && code <= 13) ||
    code === 32 ||
    code === 160 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export function decode(ids: readonly number[]): string {
  return bpeDecode(ids);
}

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : encode(text).length;
}

/**
 * Fixed cost of one message in a conversation: its start marker, its role and its
 * end marker, as in the ChatML framing of the OpenAI chat formats.
 */
export const MESSAGE_OVERHEAD_TOKENS = 3;
/** Fixed cost of priming the assistant's reply (`<start>assistant`) once per request. */
export const REPLY_PRIMING_TOKENS = 3;

export interface ConversationInput {
  instructions?: string;
  turns: readonly Turn[];
  /** Tool definitions are sent to the model too, so they count (name, description, schema). */
  tools?: readonly { name: string; description?: string; parameters?: Record<string, unknown> }[];
}

/**
 * Input tokens of a whole request: instructions, every turn (message text, a function
 * call's name and arguments, a function output), every tool definition, plus
 * MESSAGE_OVERHEAD_TOKENS per instructions block / turn / tool and REPLY_PRIMING_TOKENS.
 */
export function countInputTokens(input: ConversationInput): number {
  let total = REPLY_PRIMING_TOKENS;
  if (input.instructions !== undefined && input.instructions.length > 0) {
    total += MESSAGE_OVERHEAD_TOKENS + countTokens(input.instructions);
  }
  for (const turn of input.turns) total += MESSAGE_OVERHEAD_TOKENS + countTokens(turnText(turn));
  for (const tool of input.tools ?? []) {
    const schema = tool.parameters === undefined ? "" : JSON.stringify(tool.parameters);
    total += MESSAGE_OVERHEAD_TOKENS + countTokens(`${tool.name}\n${tool.description ?? ""}\n${schema}`);
  }
  return total;
}

/** The text of a turn that the model reads (and that is counted). */
export function turnText(turn: Turn): string {
  switch (turn.kind) {
    case "message":
      return turn.text;
    case "function_call":
      return `${turn.name} ${turn.arguments}`;
    case "function_output":
      return turn.output;
  }
}
