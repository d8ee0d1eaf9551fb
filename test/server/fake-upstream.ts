/**
 * A real OpenAI-compatible upstream on an ephemeral port that misbehaves on purpose, for
 * testing routing, fallback and failures over HTTP. Each request to /v1/chat/completions
 * is answered by the current `behaviour`; the server counts requests and records when
 * the router closed a connection.
 */
import http from "node:http";
import { listenLocally } from "../../harness/listen.ts";

export type Behaviour =
  /** Streams the text in word chunks, `delayMs` apart, then usage and [DONE]. */
  | { kind: "stream"; text: string; delayMs?: number }
  /** Streams `chunk` every `delayMs` until the client goes away. */
  | { kind: "endless"; chunk: string; delayMs: number }
  /** Sends the first chunks of the text, then goes quiet without closing. */
  | { kind: "stall"; text: string }
  /** Sends the first chunk, then destroys the connection. */
  | { kind: "cut"; text: string }
  /** Answers with this status and body at once. */
  | { kind: "status"; status: number; body?: string; retryAfter?: string }
  /** Never sends headers. */
  | { kind: "hang" }
  /** Streams one function call (its arguments in two chunks), then usage and [DONE]; ignores max_tokens. */
  | { kind: "tool_call"; name: string; arguments: string };

export interface FakeUpstream {
  /** `http://127.0.0.1:port/v1`, for a routing file's baseUrl. */
  baseUrl: string;
  behaviour: Behaviour;
  requests: number;
  /** Resolves when a request made after this call closes its connection before the upstream finished it. */
  nextClientClose(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeUpstream(initial: Behaviour): Promise<FakeUpstream> {
  const waiters: { after: number; resolve: () => void }[] = [];
  const state: FakeUpstream = {
    baseUrl: "",
    behaviour: initial,
    requests: 0,
    nextClientClose: () => new Promise((resolve) => waiters.push({ after: state.requests, resolve })),
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const number = ++state.requests;
    res.on("close", () => {
      if (res.writableFinished) return;
      for (const waiter of waiters.filter((w) => number > w.after)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
    req.resume();
    req.on("end", () => void answer(state.behaviour, res));
  });
  const listening = await listenLocally(server);
  state.baseUrl = `${listening.origin}/v1`;
  state.close = listening.close;
  return state;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", created: 0, model: "up", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const words = (text: string) => text.match(/\S+\s*/g) ?? [];

async function answer(behaviour: Behaviour, res: http.ServerResponse): Promise<void> {
  if (behaviour.kind === "hang") return;
  if (behaviour.kind === "status") {
    if (behaviour.retryAfter !== undefined) res.setHeader("retry-after", behaviour.retryAfter);
    res
      .writeHead(behaviour.status, { "content-type": "application/json" })
      .end(behaviour.body ?? '{"error":{"message":"failing on purpose"}}');
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  if (behaviour.kind === "tool_call") {
    const half = Math.floor(behaviour.arguments.length / 2);
    const call = (fn: Record<string, string>, id?: string) =>
      chunk({ tool_calls: [{ index: 0, ...(id ? { id, type: "function" } : {}), function: fn }] });
    res.write(call({ name: behaviour.name, arguments: behaviour.arguments.slice(0, half) }, "call_up_1"));
    res.write(call({ arguments: behaviour.arguments.slice(half) }));
    res.write(chunk({}, "tool_calls"));
    res.end("data: [DONE]\n\n");
    return;
  }
  if (behaviour.kind === "endless") {
    while (!res.destroyed) {
      res.write(chunk({ content: behaviour.chunk }));
      await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
    }
    return;
  }
  const parts = words(behaviour.text);
  if (behaviour.kind === "stall") {
    res.write(chunk({ role: "assistant", content: parts[0] ?? "" }));
    return;
  }
  if (behaviour.kind === "cut") {
    res.write(chunk({ role: "assistant", content: parts[0] ?? "" }));
    setTimeout(() => res.destroy(), 20);
    return;
  }
  for (const part of parts) {
    res.write(chunk({ content: part }));
    if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
  }
  res.write(chunk({}, "stop"));
  const usage = { prompt_tokens: 7, completion_tokens: parts.length, total_tokens: 7 + parts.length };
  res.write(
    `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", created: 0, model: "up", choices: [], usage })}\n\n`,
  );
  res.end("data: [DONE]\n\n");
}
