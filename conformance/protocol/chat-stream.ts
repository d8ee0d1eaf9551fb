/**
 * Chat completions and completions streams (the OpenAI wire format): chunks that keep one id
 * and model, one finish_reason and no text after it, usage that adds up (and, when the request
 * asked for it, exactly one usage chunk, last), then `data: [DONE]` once, at the end.
 */
import type { SseEvent } from "../contract.ts";
import { isPlainObject } from "../matchers.ts";
import { checkChatUsage } from "./bodies.ts";
import { problemRecorder, type ProtocolProblem, type Received, received, type Schemas } from "./problems.ts";

export interface StreamOptions {
  /** chat/completions: the request asked for `stream_options.include_usage`. */
  includeUsage?: boolean;
}

/** A chunk of either stream: a chat completion chunk or a completion. */
type ChunkSchema = Schemas["ChatCompletionChunk"] | Schemas["Completion"];
type Choice = Received<Schemas["ChatChunkChoice"] | Schemas["CompletionChoice"]>;

/** Chat completions and completions streams (the OpenAI wire format). */
export function checkChatStream(events: SseEvent[], object: string, options: StreamOptions): ProtocolProblem[] {
  const problems: ProtocolProblem[] = [];
  const add = problemRecorder(problems);
  const doneAt = events.findIndex((e) => e.data.trim() === "[DONE]");
  const errorAt = events.findIndex((e) => e.event === "error");
  if (errorAt >= 0) {
    if (errorAt !== events.length - 1) add("inference.stream-done", errorAt, "the error event ends the stream");
    if (doneAt >= 0) add("inference.stream-done", doneAt, "no [DONE] after an error event");
  } else if (doneAt < 0) add("inference.stream-done", undefined, "the stream must end with data: [DONE]");
  else if (doneAt !== events.length - 1)
    add("inference.stream-done", doneAt, "[DONE] must be the last event", events.length - 1, doneAt);
  if (events.filter((e) => e.data.trim() === "[DONE]").length > 1)
    add("inference.stream-done", undefined, "[DONE] must come once");

  const chunks = events.flatMap((e, i) => {
    const chunk = e.event === "error" ? undefined : received<ChunkSchema>(e.json);
    return chunk === undefined ? [] : [{ c: chunk, i }];
  });
  const first = chunks[0]?.c;
  let finished = false;
  let usageChunks = 0;
  for (const { c, i } of chunks) {
    if (c.object !== object) add("inference.stream-chunks", i, `every chunk has object ${object}`, object, c.object);
    if (first && c.id !== first.id)
      add("inference.stream-chunks", i, "every chunk of a stream has the same id", first.id, c.id);
    if (first && c.model !== first.model)
      add("inference.stream-chunks", i, "every chunk of a stream names the same model", first.model, c.model);
    const choices: unknown[] = Array.isArray(c.choices) ? c.choices : [];
    if (isPlainObject(c.usage)) {
      usageChunks++;
      problems.push(...checkChatUsage(c.usage, `events[${i}].data.usage`));
      if (choices.length !== 0) add("inference.stream-chunks", i, "the usage chunk has choices []", [], choices);
    }
    for (const value of choices) {
      const choice: Choice | undefined = received(value);
      if (!choice) continue;
      const delta = received<Schemas["ChatDelta"]>(choice.delta) ?? {};
      const hasText =
        (typeof delta.content === "string" && delta.content !== "") ||
        (typeof choice.text === "string" && choice.text !== "");
      if (finished && hasText) add("inference.stream-chunks", i, "no content after the chunk with finish_reason");
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        if (finished) add("inference.stream-chunks", i, "finish_reason is set once");
        finished = true;
      }
    }
  }
  if (errorAt < 0 && chunks.length > 0 && !finished)
    add("inference.stream-chunks", undefined, "one chunk must carry the finish_reason");
  if (options.includeUsage && errorAt < 0) {
    if (usageChunks !== 1)
      add(
        "inference.stream-chunks",
        undefined,
        "with stream_options.include_usage exactly one chunk carries usage",
        1,
        usageChunks,
      );
    const last = chunks.at(-1);
    if (last && !isPlainObject(last.c.usage))
      add("inference.stream-chunks", last.i, "the usage chunk is the last before [DONE]");
  }
  return problems;
}
