/** Request builders and event collection shared by the local-model tests. */
import type { GenerationEvent, GenerationRequest } from "../../server/inference/engine.ts";
import { LocalProvider } from "../../server/inference/local/provider.ts";

/** One provider for all tests of a file: the committed weights are loaded once. */
export const provider = new LocalProvider();

export function ask(text: string, extra: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    model: "tiny-chat",
    turns: [{ kind: "message", role: "user", text, media: [] }],
    tools: [],
    toolChoice: { mode: "auto" },
    temperature: 0,
    signal: new AbortController().signal,
    ...extra,
  };
}

export interface Collected {
  events: GenerationEvent[];
  text: string;
  done: Extract<GenerationEvent, { type: "done" }> | undefined;
}

export async function collect(request: GenerationRequest): Promise<Collected> {
  const events: GenerationEvent[] = [];
  for await (const event of provider.generate(request)) events.push(event);
  const text = events.map((e) => (e.type === "text" ? e.delta : "")).join("");
  const done = events.find((e): e is Extract<GenerationEvent, { type: "done" }> => e.type === "done");
  return { events, text, done };
}
