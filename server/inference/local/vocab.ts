/**
 * The local model's compact vocabulary: the o200k_base ids that occur in its corpus,
 * mapped to a dense index after a few special (role and turn marker) tokens. A small
 * vocabulary keeps the embedding and output layers small; o200k ids keep the model's
 * text identical to what tokenizer.ts counts.
 *
 * A BPE token that is not in the vocabulary is spelled as its single characters
 * (every printable ASCII character is always in the vocabulary), so any ASCII text,
 * including new words in fine-tuning data, can be read and written exactly. Only
 * non-ASCII characters outside the vocabulary become `<unk>`.
 */
import { decode, encode } from "../tokenizer.ts";

export const SPECIAL_TOKENS = [
  "<unk>",
  "<|system|>",
  "<|user|>",
  "<|assistant|>",
  "<|end|>",
  "<|think|>",
  "<|call|>",
  "<|output|>",
] as const;

export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

export const UNK = 0;

export class Vocabulary {
  /** o200k id of each dense index ≥ SPECIAL_TOKENS.length. */
  readonly bpeIds: readonly number[];
  readonly size: number;
  private readonly denseOf: Map<number, number>;

  constructor(bpeIds: readonly number[]) {
    this.bpeIds = bpeIds;
    this.size = SPECIAL_TOKENS.length + bpeIds.length;
    this.denseOf = new Map(bpeIds.map((id, i) => [id, SPECIAL_TOKENS.length + i]));
  }

  special(name: SpecialToken): number {
    return SPECIAL_TOKENS.indexOf(name);
  }

  isSpecial(dense: number): boolean {
    return dense < SPECIAL_TOKENS.length;
  }

  /** Dense ids of a text, spelling unknown BPE tokens character by character. */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const id of encode(text)) {
      const dense = this.denseOf.get(id);
      if (dense !== undefined) out.push(dense);
      else this.spell(decode([id]), out);
    }
    return out;
  }

  /** The o200k id of a dense id, or undefined for special tokens. */
  bpeId(dense: number): number | undefined {
    return this.isSpecial(dense) ? undefined : this.bpeIds[dense - SPECIAL_TOKENS.length];
  }

  /** Text of dense ids; special tokens are dropped. */
  decode(dense: readonly number[]): string {
    const ids: number[] = [];
    for (const d of dense) {
      const id = this.bpeId(d);
      if (id !== undefined) ids.push(id);
    }
    return decode(ids);
  }

  private spell(piece: string, out: number[]): void {
    for (const ch of piece) {
      const ids = encode(ch);
      const dense = ids.length === 1 ? this.denseOf.get(ids[0]!) : undefined;
      out.push(dense ?? UNK);
    }
  }
}

/**
 * The vocabulary of a corpus: every o200k id in its texts plus every printable ASCII
 * character and newline (so spelling always works), sorted for a stable layout.
 */
export function buildVocabulary(texts: Iterable<string>): Vocabulary {
  const ids = new Set<number>();
  for (const text of texts) for (const id of encode(text)) ids.add(id);
  const chars = ["\n", "\t"];
  for (let c = 32; c < 127; c++) chars.push(String.fromCharCode(c));
  for (const ch of chars) for (const id of encode(ch)) ids.add(id);
  return new Vocabulary([...ids].sort((a, b) => a - b));
}
