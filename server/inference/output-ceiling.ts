/**
 * The output ceiling, enforced by the service itself on every path (docs/contract-decisions.md,
 * The output ceiling): text, a reasoning summary and function calls, from the embedded model
 * or from an upstream that ignored the forwarded `max_tokens`. Output is counted with the
 * service's tokenizer; what would pass the ceiling is cut there, the answer ends as
 * `length` (reported incomplete), and its usage never counts more than the ceiling.
 */
import type { GenerationEvent, Usage } from "./engine.ts";
import { countTokens, decode, encode } from "./tokenizer.ts";

type DoneEvent = Extract<GenerationEvent, { type: "done" }>;

export class OutputCeiling {
  readonly #limit: number;
  /** Tokens of the reasoning summary and of the function calls passed on. */
  #otherTokens = 0;
  #reasoningTokens = 0;
  /** The text passed on: `#counted` (whose tokens are `#countedTokens`), then `#pending`. */
  #counted = "";
  #countedTokens = 0;
  #pending = "";
  /** UTF-8 bytes of `#pending` and of the last three runs of `#counted` (see `#bound`). */
  #pendingBytes = 0;
  #tailBytes = 0;
  #reached = false;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** True once the ceiling stopped the answer: nothing more is passed on, `done()` ends it. */
  get reached(): boolean {
    return this.#reached;
  }

  /** The event as far as it fits: unchanged, shortened, or undefined when nothing of it fits. */
  admit(event: GenerationEvent): GenerationEvent | undefined {
    if (this.#reached) return undefined;
    switch (event.type) {
      case "text":
        return this.#admitText(event.delta);
      case "reasoning":
        return this.#admitReasoning(event);
      case "tool_call":
        return this.#admitCall(event);
      case "done":
        return this.#clamped(event);
    }
  }

  /** The end of an answer the ceiling stopped: `length`, with the ceiling as its output tokens. */
  done(inputTokens: number): DoneEvent {
    return {
      type: "done",
      finishReason: "length",
      usage: { inputTokens, outputTokens: this.#limit, reasoningTokens: Math.min(this.#reasoningTokens, this.#limit) },
    };
  }

  #room(): number {
    return this.#limit - this.#otherTokens;
  }

  get #text(): string {
    return this.#counted + this.#pending;
  }

  /**
   * A bound on the text's tokens without counting them all again (counting the whole text on
   * every delta cost 16 ms per 256-token answer). The tokenizer encodes each piece of its
   * pre-tokenisation alone, and a piece spans at most three runs (of white space or not: a
   * space, punctuation, line breaks); so appended text can only change the pieces of the
   * last three runs of the counted text, and every token is at least one byte:
   * tokens(counted + pending) ≤ countedTokens + bytes(last three runs) + bytes(pending).
   */
  #bound(): number {
    return this.#countedTokens + this.#tailBytes + this.#pendingBytes;
  }

  #admitText(delta: string): GenerationEvent | undefined {
    this.#pending += delta;
    this.#pendingBytes += Buffer.byteLength(delta);
    if (this.#bound() <= this.#room()) return { type: "text", delta };
    const text = this.#text;
    const tokens = countTokens(text);
    if (tokens <= this.#room()) {
      this.#counted = text;
      this.#countedTokens = tokens;
      this.#pending = "";
      this.#pendingBytes = 0;
      this.#tailBytes = Buffer.byteLength(lastRuns(text, 3));
      return { type: "text", delta };
    }
    this.#reached = true;
    const sent = text.slice(0, text.length - delta.length);
    const kept = decode(encode(text).slice(0, Math.max(0, this.#room())));
    // A cut inside a character can decode to other text than was sent: then nothing more is sent.
    const piece = kept.startsWith(sent) ? kept.slice(sent.length) : "";
    return piece === "" ? undefined : { type: "text", delta: piece };
  }

  /** A summary that does not fit is cut there and marked `cut`; one that fits passes as it came (its own mark kept). */
  #admitReasoning(event: Extract<GenerationEvent, { type: "reasoning" }>): GenerationEvent | undefined {
    const { summary } = event;
    const tokens = countTokens(summary);
    const room = this.#room() - countTokens(this.#text);
    if (tokens <= room) {
      this.#otherTokens += tokens;
      this.#reasoningTokens += tokens;
      return event;
    }
    this.#reached = true;
    this.#reasoningTokens += Math.max(0, room);
    const kept = room > 0 ? decode(encode(summary).slice(0, room)) : "";
    return kept === "" ? undefined : { type: "reasoning", summary: kept, cut: true };
  }

  /**
   * A call counts its name and arguments, as the embedded model reports them. A call that
   * does not fit is not passed on at all: cut arguments are not JSON, and a client would
   * try to run them.
   */
  #admitCall(event: Extract<GenerationEvent, { type: "tool_call" }>): GenerationEvent | undefined {
    const tokens = countTokens(`${event.name} ${event.arguments}`);
    if (tokens <= this.#room() - countTokens(this.#text)) {
      this.#otherTokens += tokens;
      return event;
    }
    this.#reached = true;
    return undefined;
  }

  /** The provider's own end, its usage never above the ceiling (billed at most the ceiling). */
  #clamped(event: DoneEvent): DoneEvent {
    if (event.usage.outputTokens <= this.#limit) return event;
    const usage: Usage = {
      ...event.usage,
      outputTokens: this.#limit,
      reasoningTokens: Math.min(event.usage.reasoningTokens, this.#limit),
    };
    return { ...event, usage };
  }
}

/** The last `count` runs of white space or of other characters of a text (all of it when it has fewer). */
export function lastRuns(text: string, count: number): string {
  let start = text.length;
  for (let runs = 0; runs < count && start > 0; runs++) {
    const space = /\s/.test(text[start - 1]!);
    while (start > 0 && /\s/.test(text[start - 1]!) === space) start--;
  }
  return text.slice(start);
}
