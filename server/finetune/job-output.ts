/**
 * The JOB_OUTPUT dataset of a job with evaluation data: the tuned model's answer to each
 * evaluation prompt, written as SFT rows, so a user can read what training changed.
 */
import type { Turn } from "../inference/engine.ts";
import { LocalProvider, type Adapter } from "../inference/local/index.ts";
import type { ChatMessage, ParsedRow } from "../datasets/rows.ts";

/** Answers are short: the dataset is for reading, not for a benchmark. */
const MAX_ANSWER_TOKENS = 64;

/** The prompt of an evaluation row: a preference row's input, or an SFT row up to its last answer. */
export function promptOf(parsed: ParsedRow): ChatMessage[] {
  if (parsed.format === "PREFERENCE") return parsed.row.input.messages;
  const messages = parsed.row.messages;
  const lastAnswer = messages.findLastIndex((m) => m.role === "assistant");
  return messages.slice(0, lastAnswer);
}

export async function* tunedAnswers(
  baseModel: string,
  adapter: Adapter,
  rows: ParsedRow[],
  signal: AbortSignal,
): AsyncIterable<{ messages: ChatMessage[] }> {
  const provider = new LocalProvider();
  for (const row of rows) {
    const prompt = promptOf(row);
    const turns: Turn[] = prompt.map((m) => ({ kind: "message", role: m.role, text: m.content, media: [] }));
    let answer = "";
    const events = provider.generate({
      model: baseModel,
      turns,
      tools: [],
      toolChoice: { mode: "auto" },
      temperature: 0,
      maxOutputTokens: MAX_ANSWER_TOKENS,
      adapter,
      signal,
    });
    for await (const event of events) if (event.type === "text") answer += event.delta;
    yield { messages: [...prompt, { role: "assistant", content: answer }] };
  }
}
