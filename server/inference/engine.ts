/**
 * The generation core's vocabulary. Every wire format (responses, chat completions,
 * completions, messages) is translated into one GenerationRequest, and every provider
 * (the local model, an OpenAI-compatible upstream) answers with GenerationEvents, so
 * the formats and the providers never know about each other.
 */

/** A chat role as the engine sees it; `developer` is folded into `system` by providers that lack it. */
export type Role = "system" | "developer" | "user" | "assistant";

/** An image or file input part; text-only models reject these with MEDIA_UNSUPPORTED. */
export interface MediaPart {
  kind: "image" | "file";
  /** An `http(s):` or `data:` URL, when the part was given by reference. */
  url?: string;
  /** Base64 data, when the part was given inline. */
  data?: string;
  mediaType?: string;
  filename?: string;
  /** Where the part sits in the request, as an error `param` (`input[0].content[1]`). */
  param: string;
}

/** One turn of the conversation, in order. */
export type Turn =
  | { kind: "message"; role: Role; text: string; media: MediaPart[] }
  | { kind: "function_call"; callId: string; name: string; arguments: string }
  | { kind: "function_output"; callId: string; output: string };

/** A function the model may call. `parameters` is a JSON Schema object. */
export interface FunctionTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/** Whether and which tool the model must call. */
export type ToolChoice =
  { mode: "auto" } | { mode: "none" } | { mode: "required" } | { mode: "function"; name: string };

export type ReasoningEffort = "low" | "medium" | "high";

export interface GenerationRequest {
  /** The catalog id of the model to run (see catalog.ts), never a provider's own name. */
  model: string;
  /** System-level instructions (the responses `instructions`, the messages `system`). They count as input tokens. */
  instructions?: string;
  turns: Turn[];
  tools: FunctionTool[];
  toolChoice: ToolChoice;
  /** Output token ceiling; reaching it ends generation with finishReason "length". */
  maxOutputTokens?: number;
  /** 0 to 2; 0 is greedy and deterministic. */
  temperature?: number;
  /** 0 to 1, nucleus sampling. */
  topP?: number;
  /** Seed for sampling when temperature > 0; the same seed gives the same text. */
  seed?: number;
  /** Generation stops before any of these strings. */
  stop?: string[];
  /**
   * The legacy completions format: the single user turn is text to continue, not a
   * message to answer, so no chat template is applied around it.
   */
  continuation?: boolean;
  /** Present only for models that reason. */
  reasoning?: { effort: ReasoningEffort };
  /**
   * A fine-tuned model's LoRA adapter, opaque to everything but the local provider
   * (fine-tuned models are always served by it).
   */
  adapter?: unknown;
  /** Aborted when the client goes away or a deadline passes; providers stop at once. */
  signal: AbortSignal;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Tokens of the reasoning summary, included in outputTokens. */
  reasoningTokens: number;
}

/** `stop`: the model ended its turn or hit a stop string (then `stopSequence` names it). */
export type FinishReason = "stop" | "length" | "tool_calls";

/**
 * What a provider yields, in order: at most one `reasoning`, then `text` deltas and/or
 * `tool_call`s, then exactly one `done`.
 */
export type GenerationEvent =
  /** `cut`: the output ceiling ended the answer in (or right after) this summary, so it is not whole. */
  | { type: "reasoning"; summary: string; cut?: boolean }
  | { type: "text"; delta: string }
  | { type: "tool_call"; callId: string; name: string; arguments: string }
  | { type: "done"; finishReason: FinishReason; usage: Usage; stopSequence?: string };

/** Anything that can generate: the local model, an upstream, a test double. */
export interface Provider {
  /** Internal name, used in logs and routing only, never in responses. */
  readonly name: string;
  generate(request: GenerationRequest): AsyncIterable<GenerationEvent>;
}
