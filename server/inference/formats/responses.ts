/**
 * POST /responses: the request becomes a GenerationInput, and one ResponseBuilder turns
 * generation events into both the final response object and the SSE events, so a
 * streamed and a non-streamed call can never disagree.
 */
import type { components } from "../../../generated/api.d.ts";
import type { FunctionTool, GenerationEvent, MediaPart, ReasoningEffort, Role, ToolChoice, Turn } from "../engine.ts";
import type { GenerationInput } from "../generation.ts";
import { newId, unixSeconds } from "./ids.ts";

type Schemas = components["schemas"];
type Request = Schemas["CreateResponseRequest"];
type ResponseObject = Schemas["ResponseObject"];
type OutputItem = Schemas["OutputItem"];
type OutputTextPart = Schemas["OutputTextPart"];
type StreamEvent = Schemas["ResponseStreamEvent"];
/** An event of the contract's union without its sequence number, which the runner assigns (routes.ts). */
type Unnumbered<E> = E extends unknown ? Omit<E, "sequence_number"> : never;
/** A stream event as the builder makes it: one member of the contract's union, so every field is checked. */
export type ResponseStreamEvent = Unnumbered<StreamEvent>;
/** The event of one type, as openai-node's ResponseStream types its listeners. */
export type ResponseStreamEventOf<K extends StreamEvent["type"]> = Unnumbered<Extract<StreamEvent, { type: K }>>;

// ---------------------------------------------------------------------------
// Request → GenerationInput
// ---------------------------------------------------------------------------

export function responsesInput(body: Request): GenerationInput {
  return {
    model: body.model,
    instructions: body.instructions,
    turns:
      typeof body.input === "string"
        ? [userText(body.input)]
        : body.input.flatMap((item, i) => inputTurn(item, `input[${i}]`)),
    tools: functionTools(body.tools ?? []),
    toolChoice: toolChoice(body.tool_choice),
    maxOutputTokens: body.max_output_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    reasoning: body.reasoning === undefined ? undefined : { effort: effort(body.reasoning.effort) },
  };
}

function userText(text: string): Turn {
  return { kind: "message", role: "user", text, media: [] };
}

function inputTurn(item: Schemas["InputItem"], param: string): Turn[] {
  switch (item.type) {
    case "function_call":
      return [{ kind: "function_call", callId: item.call_id, name: item.name, arguments: item.arguments }];
    case "function_call_output":
      return [{ kind: "function_output", callId: item.call_id, output: item.output }];
    case "reasoning":
      return []; // earlier reasoning is accepted so output can be sent back unchanged, and not replayed
    default: {
      const message = item as Schemas["InputMessage"];
      return [messageTurn(message.role as Role, message.content, `${param}.content`)];
    }
  }
}

function messageTurn(role: Role, content: Schemas["InputMessage"]["content"], param: string): Turn {
  if (typeof content === "string") return { kind: "message", role, text: content, media: [] };
  const texts: string[] = [];
  const media: MediaPart[] = [];
  content.forEach((part, i) => {
    const where = `${param}[${i}]`;
    if (part.type === "input_text" || part.type === "output_text") texts.push(part.text);
    else if (part.type === "input_image") media.push({ kind: "image", url: part.image_url, param: where });
    else media.push({ kind: "file", data: part.file_data, url: part.file_url, filename: part.filename, param: where });
  });
  return { kind: "message", role, text: texts.join("\n"), media };
}

/** Seed rule 5: only function tools reach the model; other tool types are dropped. */
function functionTools(tools: Schemas["ToolDefinition"][]): FunctionTool[] {
  return tools.flatMap((t) =>
    t.type === "function"
      ? [
          {
            name: (t as Schemas["FunctionTool"]).name,
            description: (t as Schemas["FunctionTool"]).description,
            parameters: (t as Schemas["FunctionTool"]).parameters,
          },
        ]
      : [],
  );
}

/** A tool_choice of a dropped tool type counts as `auto` (decisions: its tool was dropped). */
function toolChoice(choice: Request["tool_choice"]): ToolChoice {
  if (choice === undefined || choice === "auto") return { mode: "auto" };
  if (choice === "none" || choice === "required") return { mode: choice };
  return choice.type === "function"
    ? { mode: "function", name: (choice as Schemas["ToolChoiceFunction"]).name }
    : { mode: "auto" };
}

/** `minimal` counts as `low`; an empty reasoning object means `medium`. */
function effort(value: Schemas["ReasoningOptions"]["effort"]): ReasoningEffort {
  if (value === "minimal" || value === "low") return "low";
  return value === "high" ? "high" : "medium";
}

// ---------------------------------------------------------------------------
// Generation events → response object and stream events
//
// The builder keeps one response and mutates it as generation goes on. An event never
// sees a later change: where an object is changed after an event carries it, the event
// gets a shallow copy taken first (every later change replaces a field or pushes onto an
// array, and those arrays are copied); objects that are not changed again are sent as they
// are. A deep clone per event was 40 % of this builder's time with serialising (profile).
// ---------------------------------------------------------------------------

export class ResponseBuilder {
  readonly response: ResponseObject;
  #message: (OutputItem & { type: "message" }) | undefined;
  #messageIndex = -1;

  constructor(request: Request) {
    this.response = {
      id: newId("resp"),
      object: "response",
      created_at: unixSeconds(),
      status: "in_progress",
      model: request.model,
      output: [],
      usage: usage(0, 0, 0),
      store: false,
      incomplete_details: null,
      ...compatibilityFields(request),
    };
  }

  /** The events that open a stream: created and in_progress, with empty output and zero usage. */
  start(): ResponseStreamEvent[] {
    // Later changes replace top-level fields or push onto output, so a copy with its own output is a snapshot.
    const opening = { ...this.response, output: [...this.response.output] };
    return [
      { type: "response.created", response: opening },
      { type: "response.in_progress", response: opening },
    ];
  }

  /** Applies one generation event; returns the stream events it causes. */
  apply(event: GenerationEvent): ResponseStreamEvent[] {
    switch (event.type) {
      case "reasoning":
        return this.#reasoning(event.summary, event.cut === true);
      case "text":
        return [...this.#openMessage(), ...this.#text(event.delta)];
      case "tool_call":
        return [...this.#closeMessage(), ...this.#toolCall(event.callId, event.name, event.arguments)];
      case "done": {
        // A message still being written when the ceiling ends the answer is the item it cut.
        const closing = this.#closeMessage(event.finishReason === "length" ? "incomplete" : "completed");
        const { inputTokens, outputTokens, reasoningTokens } = event.usage;
        this.response.usage = usage(inputTokens, outputTokens, reasoningTokens);
        this.response.completed_at = unixSeconds();
        if (event.finishReason === "length") {
          this.response.status = "incomplete";
          this.response.incomplete_details = { reason: "max_output_tokens" };
        } else {
          this.response.status = "completed";
          this.response.incomplete_details = null;
        }
        // The last change: nothing alters the response after this event.
        return [...closing, { type: "response.completed", response: this.response }];
      }
    }
  }

  /** A summary the ceiling cut is `incomplete`, as the OpenAI Responses API marks the item it cut. */
  #reasoning(summary: string, cut: boolean): ResponseStreamEvent[] {
    const item: OutputItem = {
      id: newId("rs"),
      type: "reasoning",
      role: "assistant",
      status: "in_progress",
      summary: [],
    };
    const index = this.response.output.push(item) - 1;
    const added: ResponseStreamEvent = { type: "response.output_item.added", output_index: index, item: { ...item } };
    Object.assign(item, {
      status: cut ? "incomplete" : "completed",
      summary: [{ type: "summary_text", text: summary }],
    });
    return [added, { type: "response.output_item.done", output_index: index, item }];
  }

  #openMessage(): ResponseStreamEvent[] {
    if (this.#message !== undefined) return [];
    const message = {
      id: newId("msg"),
      type: "message" as const,
      role: "assistant" as const,
      status: "in_progress" as const,
      content: [] as OutputTextPart[],
    };
    this.#message = message;
    this.#messageIndex = this.response.output.push(message) - 1;
    const part: OutputTextPart = { type: "output_text", text: "", annotations: [], logprobs: [] };
    const added: ResponseStreamEvent = {
      type: "response.output_item.added",
      output_index: this.#messageIndex,
      item: { ...message, content: [] },
    };
    message.content.push(part);
    // The part's text grows with each delta; the added event shows it empty.
    return [added, { type: "response.content_part.added", ...this.#where(), part: { ...part } }];
  }

  #text(delta: string): ResponseStreamEvent[] {
    const part = this.#message?.content[0];
    if (part === undefined || delta === "") return [];
    part.text += delta;
    return [{ type: "response.output_text.delta", ...this.#where(), delta, logprobs: [] }];
  }

  #closeMessage(status: "completed" | "incomplete" = "completed"): ResponseStreamEvent[] {
    const message = this.#message;
    const part = message?.content[0];
    if (message === undefined || part === undefined) return [];
    this.#message = undefined;
    const where = this.#where(message.id);
    message.status = status;
    return [
      { type: "response.output_text.done", ...where, text: part.text, logprobs: [] },
      // The message is closed: neither it nor its part changes again.
      { type: "response.content_part.done", ...where, part },
      { type: "response.output_item.done", output_index: where.output_index, item: message },
    ];
  }

  #where(itemId = this.#message?.id ?? "") {
    return { item_id: itemId, output_index: this.#messageIndex, content_index: 0 };
  }

  #toolCall(callId: string, name: string, args: string): ResponseStreamEvent[] {
    const item = {
      id: newId("fc"),
      type: "function_call" as const,
      role: "assistant" as const,
      status: "in_progress" as const,
      call_id: callId,
      name,
      arguments: "",
    };
    const index = this.response.output.push(item) - 1;
    const added: ResponseStreamEvent = { type: "response.output_item.added", output_index: index, item: { ...item } };
    Object.assign(item, { arguments: args, status: "completed" });
    const where = { item_id: item.id, output_index: index };
    return [
      added,
      { type: "response.function_call_arguments.delta", ...where, delta: args },
      { type: "response.function_call_arguments.done", ...where, arguments: args },
      { type: "response.output_item.done", output_index: index, item },
    ];
  }
}

// ---------------------------------------------------------------------------
// Compatibility fields: the Open Responses / OpenAI Responses object (decisions)
// ---------------------------------------------------------------------------

type CompatibilityFields = Omit<
  ResponseObject,
  "id" | "object" | "created_at" | "status" | "model" | "output" | "usage" | "store" | "incomplete_details"
>;

/** The sampling values the embedded model applies when a request sends none (local/provider.ts). */
const DEFAULT_TEMPERATURE = 1;
const DEFAULT_TOP_P = 1;

/** The fields a client of the Open Responses format expects, echoing the request or the value applied. */
export function compatibilityFields(request: Request): CompatibilityFields {
  return {
    completed_at: null,
    previous_response_id: null,
    instructions: request.instructions ?? null,
    error: null,
    tools: (request.tools ?? []).flatMap(echoedTool),
    tool_choice: echoedToolChoice(request.tool_choice),
    truncation: "disabled",
    parallel_tool_calls: true,
    text: { format: { type: "text" } },
    temperature: request.temperature ?? DEFAULT_TEMPERATURE,
    top_p: request.top_p ?? DEFAULT_TOP_P,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    reasoning: request.reasoning === undefined ? null : { effort: effort(request.reasoning.effort), summary: "auto" },
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: null,
    background: false,
    service_tier: "default",
    safety_identifier: null,
    prompt_cache_key: null,
  };
}

/** Only function tools reached the model (seed rule 5), so only they are listed. */
function echoedTool(tool: Schemas["ToolDefinition"]): Schemas["ResponseFunctionTool"][] {
  if (tool.type !== "function") return [];
  const fn = tool as Schemas["FunctionTool"];
  return [
    {
      type: "function",
      name: fn.name,
      description: fn.description ?? null,
      parameters: fn.parameters ?? null,
      strict: null,
    },
  ];
}

/** The choice that applied: an object of a dropped tool type counts as `auto`, like toolChoice() above. */
function echoedToolChoice(choice: Request["tool_choice"]): ResponseObject["tool_choice"] {
  if (choice === undefined || typeof choice === "string") return choice ?? "auto";
  return choice.type === "function"
    ? { type: "function", name: (choice as Schemas["ToolChoiceFunction"]).name }
    : "auto";
}

function usage(inputTokens: number, outputTokens: number, reasoningTokens: number): Schemas["Usage"] {
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: reasoningTokens },
  };
}
