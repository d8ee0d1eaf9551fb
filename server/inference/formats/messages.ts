/**
 * POST /messages in the other vendor's wire format (its request, content blocks and
 * stream events). One MessageBuilder makes both the final message and the events.
 */
import type { components } from "../../../generated/api.d.ts";
import type { FunctionTool, GenerationEvent, MediaPart, ToolChoice, Turn } from "../engine.ts";
import type { GenerationInput } from "../generation.ts";
import { newId } from "./ids.ts";

type Schemas = components["schemas"];
type Request = Schemas["CreateMessageRequest"];
type Message = Schemas["Message"];
type Block = Schemas["MessageContentBlock"];
/** A stream event as the builder makes it: one member of the contract's union, so every field is checked. */
export type MessageStreamEvent = Schemas["MessageStreamEvent"];
type BlockDelta = Extract<MessageStreamEvent, { type: "content_block_delta" }>["delta"];

export function messagesInput(body: Request): GenerationInput {
  const system = typeof body.system === "string" ? body.system : (body.system ?? []).map((b) => b.text).join("\n");
  return {
    model: body.model,
    instructions: system === "" ? undefined : system,
    turns: body.messages.flatMap((m, i) => messageTurns(m, `messages[${i}]`)),
    tools: (body.tools ?? []).map((t): FunctionTool => ({
      name: t.name,
      description: t.description,
      parameters: t.input_schema,
    })),
    toolChoice: messagesToolChoice(body.tool_choice),
    maxOutputTokens: body.max_tokens,
    ceilingField: "max_tokens",
    inputField: "messages",
    temperature: body.temperature,
    topP: body.top_p,
    stop: body.stop_sequences,
  };
}

function messageTurns(message: Schemas["MessageParam"], param: string): Turn[] {
  if (typeof message.content === "string")
    return [{ kind: "message", role: message.role, text: message.content, media: [] }];
  const turns: Turn[] = [];
  const texts: string[] = [];
  const media: MediaPart[] = [];
  message.content.forEach((block, i) => {
    if (block.type === "text") texts.push(block.text);
    else if (block.type === "image") media.push(imagePart(block.source, `${param}.content[${i}]`));
    else if (block.type === "tool_use")
      turns.push({ kind: "function_call", callId: block.id, name: block.name, arguments: JSON.stringify(block.input) });
    else
      turns.push({
        kind: "function_output",
        callId: block.tool_use_id,
        output: typeof block.content === "string" ? block.content : (block.content ?? []).map((b) => b.text).join("\n"),
      });
  });
  // Tool results answer earlier calls, so they come before the text that follows them.
  if (texts.length > 0 || media.length > 0 || turns.length === 0)
    turns.push({ kind: "message", role: message.role, text: texts.join("\n"), media });
  return turns;
}

function imagePart(source: Record<string, unknown>, param: string): MediaPart {
  const data = typeof source.data === "string" ? source.data : undefined;
  const url = typeof source.url === "string" ? source.url : undefined;
  const mediaType = typeof source.media_type === "string" ? source.media_type : undefined;
  return { kind: "image", data, url, mediaType, param };
}

function messagesToolChoice(choice: Request["tool_choice"]): ToolChoice {
  switch (choice?.type) {
    case "any":
      return { mode: "required" };
    case "none":
      return { mode: "none" };
    case "tool":
      return { mode: "function", name: choice.name ?? "" };
    default:
      return { mode: "auto" };
  }
}

const STOP_REASON = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" } as const;

export class MessageBuilder {
  readonly message: Message;
  #open: { index: number; type: "text" } | undefined;

  constructor(model: string, inputTokens: number) {
    this.message = {
      id: newId("msg"),
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: inputTokens, output_tokens: 0 },
    };
  }

  start(): MessageStreamEvent[] {
    // Later changes replace fields or push onto content, so a copy with its own content is a snapshot.
    const opening = { ...this.message, content: [...this.message.content] };
    return [{ type: "message_start", message: opening }, { type: "ping" }];
  }

  apply(event: GenerationEvent): MessageStreamEvent[] {
    switch (event.type) {
      case "reasoning":
        return this.#whole(
          { type: "thinking", thinking: event.summary },
          { type: "thinking_delta", thinking: event.summary },
        );
      case "text":
        return this.#text(event.delta);
      case "tool_call": {
        const input = parseObject(event.arguments);
        const closing = this.#close();
        return [
          ...closing,
          ...this.#whole(
            { type: "tool_use", id: event.callId, name: event.name, input },
            { type: "input_json_delta", partial_json: event.arguments },
            { type: "tool_use", id: event.callId, name: event.name, input: {} },
          ),
        ];
      }
      case "done": {
        const closing = this.#close();
        const stopSequence = event.stopSequence ?? null;
        this.message.stop_reason = stopSequence !== null ? "stop_sequence" : STOP_REASON[event.finishReason];
        this.message.stop_sequence = stopSequence;
        this.message.usage = { input_tokens: event.usage.inputTokens, output_tokens: event.usage.outputTokens };
        return [
          ...closing,
          {
            type: "message_delta",
            delta: { stop_reason: this.message.stop_reason, stop_sequence: stopSequence },
            usage: { output_tokens: event.usage.outputTokens },
          },
          { type: "message_stop" },
        ];
      }
    }
  }

  #text(delta: string): MessageStreamEvent[] {
    const opening: MessageStreamEvent[] = [];
    if (this.#open === undefined) {
      const index = this.message.content.push({ type: "text", text: "" }) - 1;
      this.#open = { index, type: "text" };
      opening.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    }
    const block = this.message.content[this.#open.index] as Schemas["MessageResponseTextBlock"];
    block.text += delta;
    return delta === ""
      ? opening
      : [
          ...opening,
          { type: "content_block_delta", index: this.#open.index, delta: { type: "text_delta", text: delta } },
        ];
  }

  #close(): MessageStreamEvent[] {
    if (this.#open === undefined) return [];
    const index = this.#open.index;
    this.#open = undefined;
    return [{ type: "content_block_stop", index }];
  }

  /** A block sent whole: start (with `empty` as its first state), one delta, stop. */
  #whole(block: Block, delta: BlockDelta, empty?: Block): MessageStreamEvent[] {
    const index = this.message.content.push(block) - 1;
    const first = empty ?? (block.type === "thinking" ? { type: "thinking", thinking: "" } : block);
    return [
      { type: "content_block_start", index, content_block: first },
      { type: "content_block_delta", index, delta },
      { type: "content_block_stop", index },
    ];
  }
}

/** Tool arguments as the object this format carries; arguments that are not an object become `{}`. */
function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
