/**
 * Streamed answers as async iterables of typed events, with the whole answer at the end.
 *
 * - `streamResponse`: POST /responses; events `response.created` … `response.completed`
 *   (ResponseStreamEvent); `finalResponse()` is the `response.completed` response.
 * - `streamChatCompletion` / `streamCompletion`: the OpenAI chunk formats ending in
 *   `data: [DONE]`; `finalResponse()` is the chunks put together.
 * - `streamMessage`: POST /messages in the other vendor's event format;
 *   `finalResponse()` is the Message put together from its events.
 *
 * An `error` event part-way throws an ApiError (`midStream: true`) from the loop and from
 * `finalResponse()`. Cancel with the `signal` option or `stream.abort()` (the loop then
 * throws an APIUserAbortError); leaving the loop early also closes the connection. A body
 * cut off part-way throws an APIConnectionError.
 */
import {
  ChatAccumulator,
  CompletionAccumulator,
  MessageAccumulator,
  type StreamedChatCompletion,
} from "./accumulate.ts";
import type { ApiClient } from "./client.ts";
import { APIUserAbortError } from "./connection-errors.ts";
import { errorFromEvent, errorFromResponse } from "./errors.ts";
import { readEvents, type EventSourceMessage } from "./sse.ts";
import type {
  ChatCompletionChunk,
  Completion,
  CreateChatCompletionRequest,
  CreateCompletionRequest,
  CreateMessageRequest,
  CreateResponseRequest,
  Message,
  MessageStreamEvent,
  ResponseObject,
  ResponseStreamEvent,
} from "./types.ts";

export interface StreamOptions {
  /** Cancels the call: before the answer starts, or while its events arrive. */
  signal?: AbortSignal;
  /** The contract's `x-request-timeout-ms`: the most the caller will wait for the whole call. */
  requestTimeoutMs?: number;
}

/** Events of one streamed call. Iterate it once; `finalResponse()` waits for (or reads to) the end. */
export class EventStream<Event, Final> implements AsyncIterable<Event> {
  /** The HTTP answer whose body is being read (status, `x-provider-class`, …). */
  readonly response: Response;
  /** The call's `x-request-id`. */
  readonly requestId: string | null;
  readonly #source: AsyncGenerator<Event, Final, undefined>;
  readonly #controller: AbortController;
  readonly #signal: AbortSignal;
  readonly #final: Promise<Final>;
  #settle!: { resolve: (value: Final) => void; reject: (error: unknown) => void };
  #started = false;

  /** `signal` is the call's (the caller's signal combined with `controller`'s). */
  constructor(
    response: Response,
    source: AsyncGenerator<Event, Final, undefined>,
    controller: AbortController,
    signal: AbortSignal,
  ) {
    this.response = response;
    this.requestId = response.headers.get("x-request-id");
    this.#source = source;
    this.#controller = controller;
    this.#signal = signal;
    this.#final = new Promise<Final>((resolve, reject) => (this.#settle = { resolve, reject }));
    // Nobody may ask for the final answer; its rejection must not count as unhandled.
    this.#final.catch(() => {});
  }

  [Symbol.asyncIterator](): AsyncIterator<Event> {
    if (this.#started) throw new Error("A stream can be iterated once.");
    this.#started = true;
    return this.#iterate();
  }

  async *#iterate(): AsyncGenerator<Event, void, undefined> {
    let ended = false;
    try {
      for (;;) {
        const next = await this.#source.next();
        // An event parsed before the abort is not handed out after it: aborting stops the loop at once.
        this.#signal.throwIfAborted();
        if (next.done) {
          ended = true;
          this.#settle.resolve(next.value);
          return;
        }
        yield next.value;
      }
    } catch (raw) {
      // The caller's signal or abort() stopped the call, whatever the reading threw then.
      const error = this.#signal.aborted ? new APIUserAbortError({ cause: this.#signal.reason }) : raw;
      this.#settle.reject(error);
      throw error;
    } finally {
      if (!ended) {
        // Left early (break, abort, an error event): settle and close the connection.
        this.#settle.reject(new Error("The stream was left before its end, so there is no final response."));
        await this.#source.return(undefined as Final);
      }
    }
  }

  /** The whole answer. Reads the rest of the stream when nobody iterates it. */
  async finalResponse(): Promise<Final> {
    if (!this.#started) for await (const _ of this);
    return this.#final;
  }

  /** Stops the call and closes the connection; the loop then throws an APIUserAbortError whose cause is `reason`. */
  abort(reason?: unknown): void {
    this.#controller.abort(reason);
  }
}

export type ResponseStream = EventStream<ResponseStreamEvent, ResponseObject>;
export type ChatCompletionStream = EventStream<ChatCompletionChunk, StreamedChatCompletion>;
export type CompletionStream = EventStream<Completion, Completion>;
export type MessageStream = EventStream<MessageStreamEvent, Message>;

/** POST /responses with `stream: true`. */
export function streamResponse(
  client: ApiClient,
  body: Omit<CreateResponseRequest, "stream">,
  options: StreamOptions = {},
): Promise<ResponseStream> {
  return open(
    options,
    (signal, header) =>
      client.POST("/responses", { body: { ...body, stream: true }, params: { header }, parseAs: "stream", signal }),
    responseEvents,
  );
}

/** POST /chat/completions with `stream: true`; usage is asked for unless `stream_options` says otherwise. */
export function streamChatCompletion(
  client: ApiClient,
  body: Omit<CreateChatCompletionRequest, "stream">,
  options: StreamOptions = {},
): Promise<ChatCompletionStream> {
  const request = { ...body, stream: true, stream_options: body.stream_options ?? { include_usage: true } };
  return open(
    options,
    (signal, header) =>
      client.POST("/chat/completions", { body: request, params: { header }, parseAs: "stream", signal }),
    (events, id) => chunkEvents<ChatCompletionChunk, StreamedChatCompletion>(events, id, new ChatAccumulator()),
  );
}

/** POST /completions with `stream: true`. */
export function streamCompletion(
  client: ApiClient,
  body: Omit<CreateCompletionRequest, "stream">,
  options: StreamOptions = {},
): Promise<CompletionStream> {
  return open(
    options,
    (signal, header) =>
      client.POST("/completions", { body: { ...body, stream: true }, params: { header }, parseAs: "stream", signal }),
    (events, id) => chunkEvents<Completion, Completion>(events, id, new CompletionAccumulator()),
  );
}

/** POST /messages with `stream: true`. */
export function streamMessage(
  client: ApiClient,
  body: Omit<CreateMessageRequest, "stream">,
  options: StreamOptions = {},
): Promise<MessageStream> {
  return open(
    options,
    (signal, header) =>
      client.POST("/messages", { body: { ...body, stream: true }, params: { header }, parseAs: "stream", signal }),
    messageEvents,
  );
}

type Header = { "x-request-timeout-ms"?: number };
type Call = (
  signal: AbortSignal,
  header: Header,
) => Promise<{ data?: ReadableStream<Uint8Array> | null; error?: unknown; response: Response }>;

/** Sends the call (retried like any other, until the answer starts) and wraps its body. */
async function open<Event, Final>(
  options: StreamOptions,
  call: Call,
  parse: (
    events: AsyncGenerator<EventSourceMessage, void, undefined>,
    requestId: string | null,
  ) => AsyncGenerator<Event, Final, undefined>,
): Promise<EventStream<Event, Final>> {
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  const header: Header =
    options.requestTimeoutMs === undefined ? {} : { "x-request-timeout-ms": options.requestTimeoutMs };
  const { data, error, response } = await call(signal, header);
  if (!response.ok) throw errorFromResponse(response, error);
  if (!data || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    await data?.cancel();
    throw new Error(`Expected an event stream, got ${response.headers.get("content-type") ?? "no body"}.`);
  }
  return new EventStream(response, parse(readEvents(data), response.headers.get("x-request-id")), controller, signal);
}

function json(message: EventSourceMessage): unknown {
  try {
    return JSON.parse(message.data);
  } catch (error) {
    throw new Error(`An event's data is not JSON: ${message.data.slice(0, 200)}`, { cause: error });
  }
}

/** /responses: every event is named after its `type`; `response.completed` ends the stream (no `[DONE]`). */
async function* responseEvents(
  events: AsyncGenerator<EventSourceMessage, void, undefined>,
  requestId: string | null,
): AsyncGenerator<ResponseStreamEvent, ResponseObject, undefined> {
  for await (const message of events) {
    const event = json(message) as ResponseStreamEvent;
    if (event.type === "error") throw errorFromEvent(event, requestId);
    yield event;
    if (event.type === "response.completed") return event.response;
  }
  throw new Error("The stream ended before response.completed.");
}

/** Chat and completions: unnamed `data:` chunks, `event: error` on a failure, `data: [DONE]` last. */
async function* chunkEvents<Chunk, Final>(
  events: AsyncGenerator<EventSourceMessage, void, undefined>,
  requestId: string | null,
  accumulator: { add(chunk: Chunk): void; readonly result: Final | null },
): AsyncGenerator<Chunk, Final, undefined> {
  for await (const message of events) {
    if (message.data === "[DONE]") {
      if (accumulator.result === null) throw new Error("The stream ended without any chunk.");
      return accumulator.result;
    }
    const data = json(message);
    if (message.event === "error" || (typeof data === "object" && data !== null && "error" in data))
      throw errorFromEvent(data, requestId);
    accumulator.add(data as Chunk);
    yield data as Chunk;
  }
  throw new Error("The stream ended before data: [DONE].");
}

/** Messages: named events from `message_start` to `message_stop`; `error` replaces the rest on a failure. */
async function* messageEvents(
  events: AsyncGenerator<EventSourceMessage, void, undefined>,
  requestId: string | null,
): AsyncGenerator<MessageStreamEvent, Message, undefined> {
  const accumulator = new MessageAccumulator();
  for await (const message of events) {
    const event = json(message) as MessageStreamEvent;
    if (event.type === "error") throw errorFromEvent(event, requestId);
    accumulator.add(event);
    yield event;
    if (event.type === "message_stop" && accumulator.result) return accumulator.result;
  }
  throw new Error("The stream ended before message_stop.");
}
