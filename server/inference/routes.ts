/**
 * The inference endpoints: each handler translates its wire format with a builder from
 * formats/, runs the shared engine, and answers as JSON or as server-sent events.
 */
import type { Request, Response } from "express";
import type { components } from "../../generated/api.d.ts";
import { ApiError } from "../api-error.ts";
import type { OperationHandlers } from "../http/operation-routes.ts";
import { causeChain } from "../failure-causes.ts";
import { log } from "../log.ts";
import { SseWriter } from "../http/sse-writer.ts";
import { meantApiError } from "../http/store-errors.ts";
import type { OpenStreams } from "../ops/drain.ts";
import { recordGeneration } from "./generation-record.ts";
import type { GenerationEvent } from "./engine.ts";
import { ChatBuilder, chatInput } from "./formats/chat.ts";
import { CompletionBuilder, completionsInput } from "./formats/completions.ts";
import { MessageBuilder, messagesInput } from "./formats/messages.ts";
import { ResponseBuilder, responsesInput } from "./formats/responses.ts";
import type { GenerationInput, GenerationRun, InferenceEngine } from "./generation.ts";
import type { Tenant } from "./resolved-model.ts";

type Schemas = components["schemas"];

/** One event on the wire: its `event:` name (undefined for unnamed) and its data. */
type WireEvent = [name: string | undefined, data: unknown];

/** What each wire format contributes to a call; the runner does the rest. */
interface WireFormat {
  input: GenerationInput;
  stream: boolean;
  /** Events sent when the stream opens. */
  open(run: GenerationRun): WireEvent[];
  /** Events for one generation event, on a stream. */
  events(event: GenerationEvent): WireEvent[];
  /** Takes one generation event into the JSON body: no wire events are made when nothing is streamed. */
  take(event: GenerationEvent): void;
  /** The JSON body once generation is done. */
  json(): unknown;
  /** The event that reports a failure part-way. */
  errorEvent(error: ApiError): WireEvent;
  /** Sent after the last event on success (`[DONE]` in the OpenAI formats). */
  terminal?: string;
}

export interface InferenceRouteDeps {
  engine: InferenceEngine;
  /** The caller's tenant, from what authentication put in res.locals. */
  tenantFor(res: Response): Tenant;
  /** The server's open streams, which a shutdown ends with their error event (ops/drain.ts). */
  streams?: OpenStreams;
}

export function registerInferenceRoutes(handlers: OperationHandlers, deps: InferenceRouteDeps): void {
  handlers.on("createResponse", (req, res) => run(req, res, deps, responsesFormat(req.body)));
  handlers.on("createChatCompletion", (req, res) => run(req, res, deps, chatFormat(req.body)));
  handlers.on("createCompletion", (req, res) => run(req, res, deps, completionsFormat(req.body)));
  handlers.on("createMessage", (req, res) => run(req, res, deps, messagesFormat(req.body)));
}

// ---------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------

async function run(
  req: Request,
  res: Response,
  deps: InferenceRouteDeps,
  format: (run: () => GenerationRun) => WireFormat,
): Promise<void> {
  const disconnect = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) disconnect.abort(new Error("client closed the connection"));
  });
  let started: GenerationRun | undefined;
  const wire = format(() => {
    if (started === undefined) throw new Error("generation has not started");
    return started;
  });
  try {
    started = await deps.engine.start({
      tenant: deps.tenantFor(res),
      input: wire.input,
      signal: disconnect.signal,
      deadlineMs: requestTimeout(req),
    });
    const record = recordGeneration(res, started);
    const headers = { "x-provider-class": started.providerClass, "x-config-version": started.configVersion };
    if (wire.stream) return await streamRun(res, started, record, wire, headers, disconnect, deps.streams);
    for await (const event of started.events) {
      record(event);
      wire.take(event);
    }
    res.set(headers).status(200).json(wire.json());
  } catch (error) {
    if (disconnect.signal.aborted) return; // the client left: there is no one to answer
    throw error;
  }
}

async function streamRun(
  res: Response,
  started: GenerationRun,
  record: (event: GenerationEvent) => void,
  wire: WireFormat,
  headers: Record<string, string>,
  disconnect: AbortController,
  streams?: OpenStreams,
): Promise<void> {
  const writer = new SseWriter(res, { headers });
  writer.signal.addEventListener("abort", () => disconnect.abort(writer.signal.reason), { once: true });
  const send = (events: WireEvent[]) => events.forEach(([name, data]) => writer.send(name, data));
  const unregister = streams?.add(() => {
    // The server is stopping and the stream ran past the drain's deadline: say so, end it, stop generating.
    const error = new ApiError(
      "UPSTREAM_UNAVAILABLE",
      "The server is shutting down and ended this stream; retry the request.",
      { retryAfter: 1 },
    );
    res.locals.errorCode = error.code;
    res.locals.closedByServer = true;
    send([wire.errorEvent(error)]);
    writer.end();
    disconnect.abort(new Error("the server is stopping"));
  });
  try {
    send(wire.open(started));
    for await (const event of started.events) {
      record(event);
      send(wire.events(event));
      if (!writer.open) return; // the client left; leaving the loop stops generation
    }
    if (wire.terminal !== undefined) writer.send(undefined, wire.terminal);
  } catch (error) {
    if (disconnect.signal.aborted) return; // the client left: no one to tell
    const meant = meantApiError(error);
    if (meant !== undefined && meant.status >= 500) logMeantFailure(res, meant);
    const failure = meant ?? internalError(res, error);
    res.locals.errorCode = failure.code;
    send([wire.errorEvent(failure)]);
  } finally {
    unregister?.();
    writer.end();
  }
}

/** A provider's or the store's failure part-way through a stream, with what it stands for (never sent). */
function logMeantFailure(res: Response, failure: ApiError): void {
  log("error", "stream.failed", {
    code: failure.code,
    status: 200,
    requestId: res.locals.requestId,
    detail: failure.message,
    cause: causeChain(failure),
  });
}

function internalError(res: Response, error: unknown): ApiError {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  log("error", "stream.failed", { code: "INTERNAL", status: 200, requestId: res.locals.requestId, detail });
  return new ApiError("INTERNAL", "An internal error occurred.");
}

/** The caller's own deadline, header x-request-timeout-ms (the validator has checked it is an integer ≥ 1). */
function requestTimeout(req: Request): number | undefined {
  const value = req.header("x-request-timeout-ms");
  return value === undefined ? undefined : Number(value);
}

// ---------------------------------------------------------------------------
// The four formats
// ---------------------------------------------------------------------------

function responsesFormat(body: Schemas["CreateResponseRequest"]) {
  return (): WireFormat => {
    let builder: ResponseBuilder | undefined;
    let sequence = 0;
    const numbered = (events: { type: string }[]): WireEvent[] =>
      events.map((e) => [e.type, { ...e, sequence_number: sequence++ }]);
    const get = () => (builder ??= new ResponseBuilder(body));
    return {
      input: responsesInput(body),
      stream: body.stream === true,
      open: () => numbered(get().start()),
      events: (event) => numbered(get().apply(event)),
      take: (event) => void get().apply(event),
      json: () => get().response,
      errorEvent: (error) => [
        "error",
        { type: "error", code: error.code, message: error.message, param: error.param, sequence_number: sequence++ },
      ],
    };
  };
}

function chatFormat(body: Schemas["CreateChatCompletionRequest"]) {
  return (): WireFormat => {
    const builder = new ChatBuilder(body.model, body.stream_options?.include_usage === true);
    return {
      input: chatInput(body),
      stream: body.stream === true,
      open: () => builder.start().map((c) => [undefined, c]),
      events: (event) => builder.apply(event).map((c) => [undefined, c]),
      take: (event) => void builder.apply(event),
      json: () => builder.completion,
      errorEvent: (error) => ["error", error.toBody()],
      terminal: "[DONE]",
    };
  };
}

function completionsFormat(body: Schemas["CreateCompletionRequest"]) {
  return (): WireFormat => {
    const builder = new CompletionBuilder(body.model, body.stream_options?.include_usage === true);
    return {
      input: completionsInput(body),
      stream: body.stream === true,
      open: () => [],
      events: (event) => builder.apply(event).map((c) => [undefined, c]),
      take: (event) => void builder.apply(event),
      json: () => builder.completion,
      errorEvent: (error) => ["error", error.toBody()],
      terminal: "[DONE]",
    };
  };
}

function messagesFormat(body: Schemas["CreateMessageRequest"]) {
  return (current: () => GenerationRun): WireFormat => {
    let builder: MessageBuilder | undefined;
    const get = () => (builder ??= new MessageBuilder(body.model, current().inputTokens));
    const named = (events: { type: string }[]): WireEvent[] => events.map((e) => [e.type, e]);
    return {
      input: messagesInput(body),
      stream: body.stream === true,
      open: () => named(get().start()),
      events: (event) => named(get().apply(event)),
      take: (event) => void get().apply(event),
      json: () => get().message,
      errorEvent: (error) => ["error", { type: "error", ...error.toBody() }],
    };
  };
}
