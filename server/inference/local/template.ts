/**
 * The chat template the local model is trained on and prompted with. Each turn is
 * `<marker> text <|end|>`; the model answers after an `<|assistant|>` marker (or
 * reasons after `<|think|>`) and ends its turn with `<|end|>`. Training and serving
 * both build sequences here, so they can never drift apart.
 */
import type { SpecialToken, Vocabulary } from "./vocab.ts";

/** A turn as the model sees it: chat roles plus its reasoning, tool call and tool output turns. */
export type TemplateRole = "system" | "user" | "assistant" | "think" | "call" | "output";

export interface TemplateTurn {
  role: TemplateRole;
  text: string;
}

const MARKER: Record<TemplateRole, SpecialToken> = {
  system: "<|system|>",
  user: "<|user|>",
  assistant: "<|assistant|>",
  think: "<|think|>",
  call: "<|call|>",
  output: "<|output|>",
};

export function markerId(vocab: Vocabulary, role: TemplateRole): number {
  return vocab.special(MARKER[role]);
}

/** Roles whose tokens the model learns to produce (the loss is on these only in chat training). */
const GENERATED_ROLES: ReadonlySet<TemplateRole> = new Set(["assistant", "think", "call"]);

export interface RenderedSequence {
  tokens: number[];
  /** 1 where tokens[i] is a target the model should learn to produce. */
  targetMask: number[];
}

/** Tokens of a conversation, with a mask marking generated-turn content and end markers. */
export function renderTurns(vocab: Vocabulary, turns: readonly TemplateTurn[]): RenderedSequence {
  const tokens: number[] = [];
  const targetMask: number[] = [];
  const end = vocab.special("<|end|>");
  for (const turn of turns) {
    const learn = GENERATED_ROLES.has(turn.role) ? 1 : 0;
    tokens.push(markerId(vocab, turn.role));
    targetMask.push(0);
    for (const id of vocab.encode(turn.text)) {
      tokens.push(id);
      targetMask.push(learn);
    }
    tokens.push(end);
    targetMask.push(learn);
  }
  return { tokens, targetMask };
}

/** A prompt: the conversation followed by the marker of the turn the model writes next. */
export function renderPrompt(vocab: Vocabulary, turns: readonly TemplateTurn[], next: TemplateRole): number[] {
  const { tokens } = renderTurns(vocab, turns);
  tokens.push(markerId(vocab, next));
  return tokens;
}
