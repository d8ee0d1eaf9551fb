/**
 * Folding stream events into the object the same call would have returned without
 * `stream`, so a caller can print deltas as they come and still get the whole answer at
 * the end. One reducer per wire format; each is fed every event in order.
 */
import type { ChatCompletion, ChatCompletionChunk, Completion, Message, MessageStreamEvent, Schema } from "./types.ts";

type ChatUsage = Schema<"ChatUsage">;
type ChatToolCall = Schema<"ChatToolCall">;

/** A chat completion put together from its chunks; `usage` is null unless the stream sent it. */
export type StreamedChatCompletion = Omit<ChatCompletion, "usage"> & { usage: ChatUsage | null };

export class ChatAccumulator {
  #result: StreamedChatCompletion | null = null;

  add(chunk: ChatCompletionChunk): void {
    const result = (this.#result ??= {
      id: chunk.id,
      object: "chat.completion",
      created: chunk.created,
      model: chunk.model,
      choices: [],
      usage: null,
    });
    if (chunk.usage) result.usage = chunk.usage;
    for (const part of chunk.choices) {
      let choice = result.choices.find((c) => c.index === part.index);
      if (!choice) {
        // finish_reason is filled in by the chunk that ends the choice.
        choice = {
          index: part.index,
          message: { role: "assistant", content: null },
          finish_reason: null as unknown as ChatCompletion["choices"][number]["finish_reason"],
        };
        result.choices.push(choice);
      }
      const { delta } = part;
      if (typeof delta.content === "string") choice.message.content = (choice.message.content ?? "") + delta.content;
      for (const call of delta.tool_calls ?? []) {
        const calls = (choice.message.tool_calls ??= []);
        const existing: ChatToolCall = (calls[call.index] ??= {
          id: "",
          type: "function",
          function: { name: "", arguments: "" },
        });
        if (call.id) existing.id = call.id;
        if (call.function?.name) existing.function.name += call.function.name;
        if (call.function?.arguments) existing.function.arguments += call.function.arguments;
      }
      if (part.finish_reason) choice.finish_reason = part.finish_reason;
    }
  }

  get result(): StreamedChatCompletion | null {
    return this.#result;
  }
}

export class CompletionAccumulator {
  #result: Completion | null = null;

  add(chunk: Completion): void {
    const result = (this.#result ??= {
      id: chunk.id,
      object: "text_completion",
      created: chunk.created,
      model: chunk.model,
      choices: [],
      usage: null,
    });
    if (chunk.usage) result.usage = chunk.usage;
    for (const part of chunk.choices) {
      const choice = result.choices.find((c) => c.index === part.index);
      if (!choice) result.choices.push({ ...part });
      else {
        choice.text += part.text;
        if (part.finish_reason) choice.finish_reason = part.finish_reason;
      }
    }
  }

  get result(): Completion | null {
    return this.#result;
  }
}

export class MessageAccumulator {
  #message: Message | null = null;
  /** Tool input arrives as JSON fragments; it is parsed when its block stops. */
  #partialJson = new Map<number, string>();

  add(event: MessageStreamEvent): void {
    switch (event.type) {
      case "message_start":
        this.#message = { ...event.message, content: [...event.message.content] };
        return;
      case "content_block_start":
        this.#need().content[event.index] = { ...event.content_block };
        return;
      case "content_block_delta": {
        const block = this.#need().content[event.index];
        const { delta } = event;
        if (delta.type === "text_delta" && block?.type === "text") block.text += delta.text;
        else if (delta.type === "thinking_delta" && block?.type === "thinking") block.thinking += delta.thinking;
        else if (delta.type === "input_json_delta")
          this.#partialJson.set(event.index, (this.#partialJson.get(event.index) ?? "") + delta.partial_json);
        return;
      }
      case "content_block_stop": {
        const block = this.#need().content[event.index];
        const json = this.#partialJson.get(event.index);
        if (block?.type === "tool_use" && json) block.input = JSON.parse(json) as Record<string, unknown>;
        return;
      }
      case "message_delta": {
        const message = this.#need();
        message.stop_reason = event.delta.stop_reason;
        message.stop_sequence = event.delta.stop_sequence;
        message.usage = { ...message.usage, output_tokens: event.usage.output_tokens };
        return;
      }
      default:
        return;
    }
  }

  #need(): Message {
    if (!this.#message) throw new Error("The message stream did not start with message_start.");
    return this.#message;
  }

  get result(): Message | null {
    return this.#message;
  }
}
