/**
 * POST /completions, the legacy text completion: the prompt is text to continue. One
 * CompletionBuilder makes both the final object and the stream chunks.
 */
import type { components } from "../../../generated/api.d.ts";
import { ApiError } from "../../api-error.ts";
import type { GenerationEvent } from "../engine.ts";
import type { GenerationInput } from "../generation.ts";
import { newId, unixSeconds } from "./ids.ts";

type Schemas = components["schemas"];
type Request = Schemas["CreateCompletionRequest"];
type Completion = Schemas["Completion"];

/** The OpenAI format's default output ceiling for this endpoint. */
const DEFAULT_MAX_TOKENS = 16;

export function completionsInput(body: Request): GenerationInput {
  return {
    model: body.model,
    turns: [{ kind: "message", role: "user", text: singlePrompt(body.prompt), media: [] }],
    tools: [],
    toolChoice: { mode: "none" },
    maxOutputTokens: body.max_tokens ?? DEFAULT_MAX_TOKENS,
    ceilingField: "max_tokens",
    inputField: "prompt",
    temperature: body.temperature,
    topP: body.top_p,
    stop: typeof body.stop === "string" ? [body.stop] : body.stop,
    continuation: true,
  };
}

/** One prompt per call, because the service returns one choice (docs/decisions.md). */
function singlePrompt(prompt: string | string[]): string {
  if (typeof prompt === "string") return prompt;
  if (prompt.length !== 1)
    throw new ApiError(
      "INVALID_REQUEST",
      `prompt must be a string or a list of exactly one string; got ${prompt.length}.`,
      { param: "prompt" },
    );
  return prompt[0] as string;
}

export class CompletionBuilder {
  readonly #id = newId("cmpl");
  readonly #created = unixSeconds();
  readonly #model: string;
  readonly #includeUsage: boolean;
  #text = "";
  #completion: Completion | undefined;

  constructor(model: string, includeUsage: boolean) {
    this.#model = model;
    this.#includeUsage = includeUsage;
  }

  get completion(): Completion {
    if (this.#completion === undefined) throw new Error("the generation has not finished");
    return this.#completion;
  }

  apply(event: GenerationEvent): Completion[] {
    if (event.type === "text") {
      this.#text += event.delta;
      return event.delta === ""
        ? []
        : [this.#object([{ index: 0, text: event.delta, finish_reason: null, logprobs: null }])];
    }
    if (event.type !== "done") return [];
    const usage = {
      prompt_tokens: event.usage.inputTokens,
      completion_tokens: event.usage.outputTokens,
      total_tokens: event.usage.inputTokens + event.usage.outputTokens,
    };
    const finish = event.finishReason === "length" ? "length" : "stop";
    this.#completion = {
      ...this.#object([{ index: 0, text: this.#text, finish_reason: finish, logprobs: null }]),
      usage,
    };
    const last = this.#object([{ index: 0, text: "", finish_reason: finish, logprobs: null }]);
    return this.#includeUsage ? [last, { ...this.#object([]), usage }] : [last];
  }

  #object(choices: Schemas["CompletionChoice"][]): Completion {
    return { id: this.#id, object: "text_completion", created: this.#created, model: this.#model, choices };
  }
}
