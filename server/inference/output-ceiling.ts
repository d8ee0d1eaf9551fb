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
  #text = "";
  /**
   * UTF-8 bytes of the text passed on: every token is at least one byte, so while the bytes
   * fit, the tokens do, and the text need not be counted (counting all of it again on every
   * delta is what costs).
   */
  #textBytes = 0;
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
        return this.#admitReasoning(event.summary);
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

  #admitText(delta: string): GenerationEvent | undefined {
    const next = this.#text + delta;
    const bytes = this.#textBytes + Buffer.byteLength(delta);
    if (bytes <= this.#room() || countTokens(next) <= this.#room()) {
      this.#text = next;
      this.#textBytes = bytes;
      return { type: "text", delta };
    }
    this.#reached = true;
    const kept = decode(encode(next).slice(0, Math.max(0, this.#room())));
    // A cut inside a character can decode to other text than was sent: then nothing more is sent.
    const piece = kept.startsWith(this.#text) ? kept.slice(this.#text.length) : "";
    return piece === "" ? undefined : { type: "text", delta: piece };
  }

  #admitReasoning(summary: string): GenerationEvent | undefined {
    const tokens = countTokens(summary);
    const room = this.#room() - countTokens(this.#text);
    if (tokens <= room) {
      this.#otherTokens += tokens;
      this.#reasoningTokens += tokens;
      return { type: "reasoning", summary };
    }
    this.#reached = true;
    this.#reasoningTokens += Math.max(0, room);
    const kept = room > 0 ? decode(encode(summary).slice(0, room)) : "";
    return kept === "" ? undefined : { type: "reasoning", summary: kept };
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
