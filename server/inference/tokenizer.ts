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

export function encode(text: string): number[] {
  return bpeEncode(text, PLAIN_TEXT);
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
