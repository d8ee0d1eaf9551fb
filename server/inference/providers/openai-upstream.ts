/**
 * A provider that forwards to any OpenAI-compatible chat completions API (vLLM,
 * llama.cpp server, Ollama, a hosted endpoint) over undici, always streaming, and
 * turns its chunks into GenerationEvents. Failures become ProviderFailures the router
 * understands: connection errors, 429, 5xx and timeouts are retryable on a standby.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { Pool, errors as undiciErrors } from "undici";
import type { FinishReason, GenerationEvent, GenerationRequest, Provider, Turn, Usage } from "../engine.ts";
import { countInputTokens, countTokens } from "../tokenizer.ts";
import { upstreamCalled } from "../../ops/metrics.ts";
import { forwardedHeaders } from "../../request-context.ts";
import { ProviderFailure } from "./failure.ts";

export interface OpenAiUpstreamOptions {
  name: string;
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Milliseconds to wait for the response headers. */
  timeoutMs: number;
  /** Milliseconds allowed between two body chunks before the stream counts as stalled. */
  stallTimeoutMs: number;
}

type UpstreamMessage = Record<string, unknown>;

interface ToolCallParts {
  id: string;
  name: string;
  arguments: string;
}

export class OpenAiUpstreamProvider implements Provider {
  readonly name: string;
  readonly #options: OpenAiUpstreamOptions;
  /**
   * The upstream's own connection pool, asked by path: `request(url)` through the global
   * agent parsed the URL and looked the origin up on every call (2 % of a CPU profile
   * under `POST /v1/responses`). Idle connections do not hold the process open.
   */
  readonly #pool: Pool;
  readonly #path: string;

  constructor(options: OpenAiUpstreamOptions) {
    this.name = options.name;
    this.#options = options;
    const url = new URL(`${options.baseUrl.replace(/\/$/, "")}/chat/completions`);
    this.#pool = new Pool(url.origin);
    this.#path = `${url.pathname}${url.search}`;
  }

  async *generate(req: GenerationRequest): AsyncIterable<GenerationEvent> {
    const body = await this.#send(req);
    const chunks = parseChunks(body, req.signal);
    const toolCalls = new Map<number, ToolCallParts>();
    let finish: FinishReason = "stop";
    let usage: Usage | undefined;
    let text = "";
    for await (const chunk of chunks) {
      if (chunk.usage) usage = readUsage(chunk.usage);
      const choice = chunk.choices?.[0];
      if (choice === undefined) continue;
      const content = choice.delta?.content;
      if (typeof content === "string" && content !== "") {
        text += content;
        yield { type: "text", delta: content };
      }
      for (const call of choice.delta?.tool_calls ?? []) mergeToolCall(toolCalls, call);
      if (choice.finish_reason === "length") finish = "length";
    }
    for (const call of toolCalls.values()) {
      yield { type: "tool_call", callId: call.id, name: call.name, arguments: call.arguments };
    }
    if (toolCalls.size > 0) finish = "tool_calls";
    // An upstream that reports no usage is counted with our own tokenizer, so calls are never free by accident.
    usage ??= {
      inputTokens: countInputTokens(req),
      outputTokens: countTokens(text + [...toolCalls.values()].map((c) => c.arguments).join("")),
      reasoningTokens: 0,
    };
    yield { type: "done", finishReason: finish, usage };
  }

  async #send(req: GenerationRequest) {
    const { model, apiKey, timeoutMs, stallTimeoutMs } = this.#options;
    let response;
    const started = performance.now();
    try {
      response = await this.#pool.request({
        path: this.#path,
        method: "POST",
        // The caller's request id and trace context go along, so the upstream's logs name the same request.
        headers: {
          "content-type": "application/json",
          ...forwardedHeaders(),
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify(upstreamBody(req, model)),
        signal: req.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: stallTimeoutMs,
      });
    } catch (error) {
      const failure = connectionFailure(error, req.signal);
      upstreamCalled(
        this.name,
        started,
        req.signal.aborted
          ? "aborted"
          : failure instanceof ProviderFailure && failure.code === "UPSTREAM_TIMEOUT"
            ? "timeout"
            : "connection",
      );
      throw failure;
    }
    upstreamCalled(
      this.name,
      started,
      response.statusCode === 429 ? "429" : `${Math.floor(response.statusCode / 100)}xx`,
    );
    if (response.statusCode >= 200 && response.statusCode < 300) return response.body;
    const text = await response.body.text().catch(() => "");
    throw statusFailure(response.statusCode, text, response.headers["retry-after"]);
  }
}

function upstreamBody(req: GenerationRequest, model: string): Record<string, unknown> {
  const tools = req.tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
  const choice = req.toolChoice;
  return {
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: upstreamMessages(req.instructions, req.turns),
    ...(tools.length > 0
      ? {
          tools,
          tool_choice: choice.mode === "function" ? { type: "function", function: { name: choice.name } } : choice.mode,
        }
      : {}),
    ...(req.maxOutputTokens !== undefined ? { max_tokens: req.maxOutputTokens } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { top_p: req.topP } : {}),
    ...(req.seed !== undefined ? { seed: req.seed } : {}),
    ...(req.stop && req.stop.length > 0 ? { stop: req.stop } : {}),
    ...(req.reasoning ? { reasoning_effort: req.reasoning.effort } : {}),
  };
}

/** The conversation in OpenAI chat messages; consecutive function calls share one assistant message. */
export function upstreamMessages(instructions: string | undefined, turns: Turn[]): UpstreamMessage[] {
  const messages: UpstreamMessage[] = instructions ? [{ role: "system", content: instructions }] : [];
  for (const turn of turns) {
    if (turn.kind === "message") {
      messages.push({ role: turn.role === "developer" ? "system" : turn.role, content: turn.text });
    } else if (turn.kind === "function_output") {
      messages.push({ role: "tool", tool_call_id: turn.callId, content: turn.output });
    } else {
      const call = { id: turn.callId, type: "function", function: { name: turn.name, arguments: turn.arguments } };
      const last = messages.at(-1);
      if (last?.role === "assistant" && Array.isArray(last.tool_calls)) last.tool_calls.push(call);
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    }
  }
  return messages;
}

interface UpstreamChunk {
  choices?: {
    delta?: { content?: string | null; tool_calls?: UpstreamToolCallDelta[] };
    finish_reason?: string | null;
  }[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    completion_tokens_details?: { reasoning_tokens?: number };
  };
}

interface UpstreamToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

function mergeToolCall(calls: Map<number, ToolCallParts>, delta: UpstreamToolCallDelta): void {
  const index = delta.index ?? 0;
  const call = calls.get(index) ?? { id: "", name: "", arguments: "" };
  call.id ||= delta.id ?? "";
  call.name += delta.function?.name ?? "";
  call.arguments += delta.function?.arguments ?? "";
  calls.set(index, call);
}

function readUsage(raw: NonNullable<UpstreamChunk["usage"]>): Usage {
  return {
    inputTokens: raw.prompt_tokens ?? 0,
    outputTokens: raw.completion_tokens ?? 0,
    reasoningTokens: raw.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/**
 * Yields the JSON chunks of the upstream's event stream until `[DONE]` or the end of the body.
 *
 * At `[DONE]` the rest of the body (its end, as a rule) is read in the background rather
 * than the body destroyed: a body destroyed before its end builds an AbortError and an
 * undici RequestAbortedError, two stack traces on every request in profiles, and gives up
 * the keep-alive connection. A body left early for any other reason is destroyed as before.
 */
async function* parseChunks(body: AsyncIterable<Buffer | string>, signal: AbortSignal): AsyncIterable<UpstreamChunk> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  const reader = body[Symbol.asyncIterator]();
  let released = false;
  try {
    for (let read = await reader.next(); !read.done; read = await reader.next()) {
      const bytes = read.value;
      parser.feed(typeof bytes === "string" ? bytes : decoder.decode(bytes, { stream: true }));
      while (pending.length > 0) {
        const event = pending.shift() as EventSourceMessage;
        if (event.data === "[DONE]") {
          released = true;
          drainQuietly(reader);
          return;
        }
        yield JSON.parse(event.data) as UpstreamChunk;
      }
    }
    released = true;
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new ProviderFailure("UPSTREAM_UNAVAILABLE", "the upstream sent a malformed stream", {
        retryable: true,
        cause: error,
      });
    throw connectionFailure(error, signal);
  } finally {
    // Left before the end (the consumer stopped, a malformed chunk, a failed read): the body is destroyed.
    if (!released) void reader.return?.();
  }
}

/** Reads what follows `[DONE]` to the body's end; a failure there no longer concerns anyone. */
function drainQuietly(reader: AsyncIterator<Buffer | string>): void {
  void (async () => {
    try {
      while (!(await reader.next()).done);
    } catch {
      // The answer is complete; the connection is undici's to discard.
    }
  })();
}

function connectionFailure(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason ?? error;
  if (error instanceof undiciErrors.HeadersTimeoutError) {
    return new ProviderFailure("UPSTREAM_TIMEOUT", "the upstream did not answer in time", {
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof undiciErrors.BodyTimeoutError) {
    // The words of the engine's own stall timer (generation.ts): one failure, one message, whichever timer fires first.
    return new ProviderFailure("PARTIAL_RESPONSE_TIMEOUT", "The response stream stalled.", {
      retryable: true,
      cause: error,
    });
  }
  return new ProviderFailure("UPSTREAM_UNAVAILABLE", "the upstream could not be reached", {
    retryable: true,
    cause: error,
  });
}

/**
 * The upstream's error answer in the ProviderFailure's cause, for the log: its status and
 * the `error.code` and `error.type` of an OpenAI-format body. Not its message, which may
 * quote the prompt (no body reaches the log).
 */
class UpstreamAnswer extends Error {
  override name = "UpstreamAnswer";
  constructor(status: number, body: string) {
    const error = (jsonOrUndefined(body) as { error?: { code?: unknown; type?: unknown } } | undefined)?.error;
    const named = [error?.code, error?.type].filter((v): v is string => typeof v === "string" && v.length <= 100);
    super(`HTTP ${status}${named.length > 0 ? ` (${named.join(", ")})` : ""}`);
  }
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function statusFailure(status: number, body: string, retryAfterHeader: string | string[] | undefined): ProviderFailure {
  const cause = new UpstreamAnswer(status, body);
  const retryAfter = Number.parseInt(String(retryAfterHeader ?? ""), 10);
  const wait = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined;
  if (status === 429)
    return new ProviderFailure("UPSTREAM_RATE_LIMITED", "the upstream is rate limited", {
      retryable: true,
      cause,
      ...(wait !== undefined ? { retryAfter: wait } : {}),
    });
  if ((status === 400 || status === 422) && /content[_ ]?(filter|policy)|safety|moderation/i.test(body)) {
    return new ProviderFailure("UPSTREAM_CONTENT_REJECTED", "the upstream provider refused the content", {
      retryable: false,
      cause,
    });
  }
  if (status === 504 || status === 408)
    return new ProviderFailure("UPSTREAM_TIMEOUT", "the upstream timed out", { retryable: true, cause });
  return new ProviderFailure("UPSTREAM_UNAVAILABLE", `the upstream answered HTTP ${status}`, {
    retryable: true,
    cause,
  });
}
