/**
 * POST /chat/completions in the OpenAI wire format: messages become turns, and one
 * ChatBuilder turns generation events into the final completion and the stream chunks
 * (`data: [DONE]` ends the stream; `stream_options.include_usage` adds a usage chunk).
 */
import type { components } from "../../../generated/api.d.ts";
import type { FinishReason, FunctionTool, GenerationEvent, MediaPart, Role, ToolChoice, Turn } from "../engine.ts";
import type { GenerationInput } from "../generation.ts";
import { newId, unixSeconds } from "./ids.ts";

type Schemas = components["schemas"];
type Request = Schemas["CreateChatCompletionRequest"];
type Chunk = Schemas["ChatCompletionChunk"];
type Completion = Schemas["ChatCompletion"];

export function chatInput(body: Request): GenerationInput {
  return {
    model: body.model,
    turns: body.messages.flatMap((m, i) => chatTurns(m, `messages[${i}]`)),
    tools: chatTools(body.tools ?? []),
    toolChoice: chatToolChoice(body.tool_choice),
    // max_completion_tokens is the newer name and wins when both are sent.
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens,
    ceilingField: body.max_completion_tokens !== undefined ? "max_completion_tokens" : "max_tokens",
    inputField: "messages",
    temperature: body.temperature,
    topP: body.top_p,
    stop: typeof body.stop === "string" ? [body.stop] : body.stop,
    reasoning:
      body.reasoning_effort === undefined
        ? undefined
        : { effort: body.reasoning_effort === "high" ? "high" : body.reasoning_effort === "medium" ? "medium" : "low" },
  };
}

/** Text of a content that may be a string or a list of parts. */
export function partsText(content: string | { type: string; text?: string }[] | null | undefined): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.flatMap((p) => (p.type === "text" && typeof p.text === "string" ? [p.text] : [])).join("\n");
}

function chatTurns(message: Schemas["ChatMessage"], param: string): Turn[] {
  switch (message.role) {
    case "tool":
      return [{ kind: "function_output", callId: message.tool_call_id, output: partsText(message.content) }];
    case "assistant": {
      const text = partsText(message.content);
      const calls: Turn[] = (message.tool_calls ?? []).map((c) => ({
        kind: "function_call",
        callId: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      }));
      return [
        ...(text !== "" || calls.length === 0
          ? [{ kind: "message" as const, role: "assistant" as const, text, media: [] }]
          : []),
        ...calls,
      ];
    }
    case "user": {
      const media: MediaPart[] =
        typeof message.content === "string"
          ? []
          : message.content.flatMap((p, i) =>
              p.type === "image_url"
                ? [{ kind: "image" as const, url: p.image_url.url, param: `${param}.content[${i}]` }]
                : [],
            );
      return [
        {
          kind: "message",
          role: "user",
          text: partsText(message.content as { type: string; text?: string }[] | string),
          media,
        },
      ];
    }
    default:
      return [{ kind: "message", role: message.role as Role, text: partsText(message.content), media: [] }];
  }
}

/** Seed rule 5 holds here too: tools other than functions are dropped. */
function chatTools(tools: Schemas["ChatTool"][]): FunctionTool[] {
  return tools.flatMap((t) =>
    t.type === "function" && t.function
      ? [{ name: t.function.name, description: t.function.description, parameters: t.function.parameters }]
      : [],
  );
}

function chatToolChoice(choice: Request["tool_choice"]): ToolChoice {
  if (choice === undefined || choice === "auto") return { mode: "auto" };
  if (choice === "none" || choice === "required") return { mode: choice };
  return { mode: "function", name: choice.function.name };
}

const FINISH: Record<FinishReason, Schemas["ChatFinishReason"]> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
};

export class ChatBuilder {
  readonly #id = newId("chatcmpl");
  readonly #created = unixSeconds();
  readonly #model: string;
  readonly #includeUsage: boolean;
  #content = "";
  readonly #toolCalls: Schemas["ChatToolCall"][] = [];
  #completion: Completion | undefined;

  constructor(model: string, includeUsage: boolean) {
    this.#model = model;
    this.#includeUsage = includeUsage;
  }

  /** The completion, once `done` has been applied. */
  get completion(): Completion {
    if (this.#completion === undefined) throw new Error("the generation has not finished");
    return this.#completion;
  }

  /** The first chunk: the assistant role with empty content. */
  start(): Chunk[] {
    return [this.#chunk({ role: "assistant", content: "" }, null)];
  }

  apply(event: GenerationEvent): Chunk[] {
    switch (event.type) {
      case "reasoning":
        return []; // this format has no place for a reasoning summary; its tokens count in usage
      case "text":
        this.#content += event.delta;
        return event.delta === "" ? [] : [this.#chunk({ content: event.delta }, null)];
      case "tool_call": {
        const call = {
          id: event.callId,
          type: "function" as const,
          function: { name: event.name, arguments: event.arguments },
        };
        const index = this.#toolCalls.push(call) - 1;
        return [this.#chunk({ tool_calls: [{ index, ...call }] }, null)];
      }
      case "done": {
        const usage = {
          prompt_tokens: event.usage.inputTokens,
          completion_tokens: event.usage.outputTokens,
          total_tokens: event.usage.inputTokens + event.usage.outputTokens,
        };
        const finish = FINISH[event.finishReason];
        this.#completion = {
          id: this.#id,
          object: "chat.completion",
          created: this.#created,
          model: this.#model,
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: this.#content === "" && this.#toolCalls.length > 0 ? null : this.#content,
                ...(this.#toolCalls.length > 0 ? { tool_calls: this.#toolCalls } : {}),
                refusal: null,
              },
              finish_reason: finish,
              logprobs: null,
            },
          ],
          usage,
        };
        const last = this.#chunk({}, finish);
        return this.#includeUsage ? [last, { ...this.#chunk({}, null), choices: [], usage }] : [last];
      }
    }
  }

  #chunk(delta: Schemas["ChatDelta"], finish: Schemas["ChatFinishReason"] | null): Chunk {
    return {
      id: this.#id,
      object: "chat.completion.chunk",
      created: this.#created,
      model: this.#model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    };
  }
}
