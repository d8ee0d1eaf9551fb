/**
 * The generation core shared by the four wire formats: it resolves the model, applies
 * every rule that is the same for all formats (capabilities, media, context window,
 * content policy, tool choice), picks a provider with fallback, and watches the run
 * for deadlines, stalls and blocked output. Formats only translate.
 */
import { ApiError } from "../api-error.ts";
import type { PlatformModel } from "./catalog.ts";
import type { FunctionTool, GenerationEvent, GenerationRequest, Provider, ToolChoice } from "./engine.ts";
import { checkMedia, type MediaSettings } from "./media.ts";
import { OutputCeiling } from "./output-ceiling.ts";
import { ProviderFailure } from "./providers/failure.ts";
import { modelNotFoundText, type ModelResolver, type ResolvedModel, type Tenant } from "./resolved-model.ts";
import type { ContentPolicy, RoutingConfig } from "./routing.ts";
import { countInputTokens, turnText } from "./tokenizer.ts";

export interface EngineSettings extends MediaSettings {
  /** The longest a whole request may run, in milliseconds. */
  deadlineMs: number;
  /** The longest a stream may go without an event once it has started, in milliseconds. */
  stallTimeoutMs: number;
}

/** The request field a format calls the output ceiling, named by CONTEXT_LENGTH_EXCEEDED. */
export type CeilingField = "max_output_tokens" | "max_tokens" | "max_completion_tokens";

/** The request field a format calls the input, named by CONTEXT_LENGTH_EXCEEDED when it alone fills the window. */
export type InputField = "input" | "messages" | "prompt";

/** A generation request before routing: what a format produces. */
export type GenerationInput = Omit<GenerationRequest, "model" | "signal"> & {
  model: string;
  /** What the format calls `maxOutputTokens`; `max_output_tokens` when not said. */
  ceilingField?: CeilingField;
  /** What the format calls its input; `input` when not said. */
  inputField?: InputField;
};

export interface GenerationCall {
  tenant: Tenant;
  input: GenerationInput;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** The caller's own deadline (x-request-timeout-ms); the shorter of it and the server's applies. */
  deadlineMs?: number;
}

export interface GenerationRun {
  model: ResolvedModel;
  providerClass: "primary" | "fallback";
  configVersion: string;
  /** Input tokens as counted before generation; providers report the same count. */
  inputTokens: number;
  events: AsyncIterable<GenerationEvent>;
}

/** The provider name under which the embedded model is registered. */
export const LOCAL_PROVIDER = "local";

export class InferenceEngine {
  readonly #routing: RoutingConfig;
  readonly #providers: ReadonlyMap<string, Provider>;
  readonly #models: ModelResolver;
  readonly #settings: EngineSettings;

  constructor(
    routing: RoutingConfig,
    providers: ReadonlyMap<string, Provider>,
    models: ModelResolver,
    settings: EngineSettings,
  ) {
    this.#routing = routing;
    this.#providers = providers;
    this.#models = models;
    this.#settings = settings;
  }

  get configVersion(): string {
    return this.#routing.version;
  }

  /**
   * Checks the request and starts generating. Everything that can fail before the first
   * output fails here, so a stream is only opened once there is something to send.
   */
  async start(call: GenerationCall): Promise<GenerationRun> {
    const { input, tenant } = call;
    // The deadline bounds the whole call: the checks below (a media fetch) count too.
    const deadlineAt = Date.now() + Math.min(this.#settings.deadlineMs, call.deadlineMs ?? Number.POSITIVE_INFINITY);
    const model = await this.#models.resolve(input.model, tenant.accountId);
    if (model === undefined) throw new ApiError("MODEL_NOT_FOUND", modelNotFoundText(input.model), { param: "model" });
    await tenant.authorizeModel(model);
    checkCapabilities(model.spec, input);
    checkToolChoice(input.tools, input.toolChoice);
    await checkMedia(model.spec, input.turns, this.#settings);
    checkInputPolicy(this.#routing.contentPolicy, input);
    const inputTokens = countInputTokens(input);
    const maxOutputTokens = outputCeiling(model.spec, inputTokens, input);

    const watch = new RunWatch(call.signal, deadlineAt, this.#settings.stallTimeoutMs);
    const { ceilingField: _ceiling, inputField: _input, ...generation } = input;
    const request: GenerationRequest = {
      ...generation,
      model: model.spec.id,
      maxOutputTokens,
      reasoning: model.spec.reasoning ? (input.reasoning ?? { effort: "medium" }) : undefined,
      adapter: model.adapter?.(),
      signal: watch.signal,
    };
    const { providerClass, first, iterator } = await this.#firstAvailable(model, request, watch);
    return {
      model,
      providerClass,
      configVersion: this.#routing.version,
      inputTokens,
      events: guarded(first, iterator, watch, {
        policy: this.#routing.contentPolicy,
        tenant,
        model,
        ceiling: new OutputCeiling(maxOutputTokens),
        inputTokens,
      }),
    };
  }

  /** Tries the route's providers in order until one produces its first event. */
  async #firstAvailable(model: ResolvedModel, request: GenerationRequest, watch: RunWatch) {
    // A fine-tuned model runs on its own deployment: the local model with its adapter.
    const route = model.adapter === undefined ? this.#routing.models[model.spec.id] : undefined;
    const names = route ? [route.primary, ...route.standby] : [LOCAL_PROVIDER];
    const providers = model.provider ? [model.provider] : names.map((name) => this.#providers.get(name));
    let failure: ProviderFailure | undefined;
    for (const [index, provider] of providers.entries()) {
      if (provider === undefined) continue;
      const iterator = provider.generate(request)[Symbol.asyncIterator]();
      try {
        const first = await watch.next(iterator, "first");
        return { providerClass: index === 0 ? ("primary" as const) : ("fallback" as const), first, iterator };
      } catch (error) {
        if (!(error instanceof ProviderFailure) || !error.retryable) throw asApiError(error);
        failure = error;
      }
    }
    throw asApiError(
      failure ??
        new ProviderFailure("UPSTREAM_UNAVAILABLE", "no provider is configured for this model", { retryable: false }),
    );
  }
}

// ---------------------------------------------------------------------------
// Rules checked before generation
// ---------------------------------------------------------------------------

function checkCapabilities(spec: PlatformModel, input: GenerationInput): void {
  if (input.reasoning !== undefined && !spec.reasoning) {
    throw new ApiError("MODEL_CAPABILITY_UNSUPPORTED", `The model \`${input.model}\` does not support reasoning.`, {
      param: "reasoning",
    });
  }
  if (input.tools.length > 0 && !spec.tools) {
    throw new ApiError("MODEL_CAPABILITY_UNSUPPORTED", `The model \`${input.model}\` does not support tools.`, {
      param: "tools",
    });
  }
}

function checkToolChoice(tools: FunctionTool[], choice: ToolChoice): void {
  if (choice.mode === "function" && !tools.some((t) => t.name === choice.name)) {
    throw new ApiError(
      "INVALID_REQUEST",
      `tool_choice names the function \`${choice.name}\`, which is not among the function tools.`,
      { param: "tool_choice" },
    );
  }
  if (choice.mode === "required" && tools.length === 0) {
    throw new ApiError("INVALID_REQUEST", "tool_choice is `required` but the request has no function tools.", {
      param: "tool_choice",
    });
  }
}

function containsTerm(text: string, terms: string[]): boolean {
  const lower = text.toLowerCase();
  return terms.some((term) => term !== "" && lower.includes(term.toLowerCase()));
}

function checkInputPolicy(policy: ContentPolicy, input: GenerationInput): void {
  const texts = [input.instructions ?? "", ...input.turns.map(turnText)];
  if (texts.some((t) => containsTerm(t, policy.blockedInputTerms))) {
    throw new ApiError("CONTENT_BLOCKED_INPUT", "The input was blocked by the content policy.");
  }
}

/**
 * The output token ceiling: the request's, or what the context window leaves up to the
 * model's default. CONTEXT_LENGTH_EXCEEDED names the field as the request's format calls it:
 * the input's when the input alone leaves no room (no ceiling could help then), else the
 * ceiling's, with the most it may be.
 */
function outputCeiling(spec: PlatformModel, inputTokens: number, input: GenerationInput): number {
  const requested = input.maxOutputTokens;
  const room = spec.contextWindow - inputTokens;
  if (room < 1) {
    const field = input.inputField ?? "input";
    const named = field === "input" ? "the input" : `the input (${field})`;
    throw new ApiError(
      "CONTEXT_LENGTH_EXCEEDED",
      `The input (${inputTokens} tokens) fills the model's context window of ${spec.contextWindow} tokens; shorten ${named}.`,
      { param: field },
    );
  }
  if (requested !== undefined && requested > room) {
    const field = input.ceilingField ?? "max_output_tokens";
    throw new ApiError(
      "CONTEXT_LENGTH_EXCEEDED",
      `The input (${inputTokens} tokens) plus ${field} (${requested}) exceed the model's context window of ${spec.contextWindow} tokens; lower ${field} to at most ${room} or shorten the input.`,
      { param: field },
    );
  }
  return requested ?? Math.min(spec.defaultMaxOutputTokens, room);
}

// ---------------------------------------------------------------------------
// Watching a run
// ---------------------------------------------------------------------------

/** The abort reason of a finished run: one shared object, since building an Error (and its stack) per request showed in profiles. */
const RUN_STOPPED = new Error("the run finished");

/** Combines the client's signal with the deadline and the stall timer for one run. */
class RunWatch {
  readonly #controller = new AbortController();
  readonly #deadlineAt: number;
  readonly #stallMs: number;

  constructor(client: AbortSignal, deadlineAt: number, stallMs: number) {
    this.#deadlineAt = deadlineAt;
    this.#stallMs = stallMs;
    if (client.aborted) this.#controller.abort(client.reason);
    else client.addEventListener("abort", () => this.#controller.abort(client.reason), { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * The iterator's next event, or a timeout: past the deadline REQUEST_DEADLINE_EXCEEDED;
   * a started stream that goes quiet PARTIAL_RESPONSE_TIMEOUT. The first event has only
   * the deadline (a slow upstream fails by its own timeout, UPSTREAM_TIMEOUT).
   *
   * The clock is also read before asking and after each event: a provider that computes
   * on this thread (the embedded model) yields to the event loop only through
   * setImmediate between tokens, so the timer would never get its turn while tokens keep
   * coming. An event that arrives past the deadline is not passed on.
   */
  async next(
    iterator: AsyncIterator<GenerationEvent>,
    phase: "first" | "more",
  ): Promise<IteratorResult<GenerationEvent>> {
    const untilDeadline = this.#deadlineAt - Date.now();
    if (untilDeadline <= 0) this.#fail(iterator, undefined, true);
    const limit = phase === "first" ? untilDeadline : Math.min(untilDeadline, this.#stallMs);
    const pending = iterator.next();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), Math.max(0, limit));
    });
    try {
      const result = await Promise.race([pending, timeout]);
      if (result !== "timeout") {
        if (Date.now() >= this.#deadlineAt) this.#fail(iterator, undefined, true);
        return result;
      }
    } finally {
      clearTimeout(timer);
    }
    // Which timer ran out is known from the limit chosen above; asking the clock again
    // would misreport a deadline when a timer fires a millisecond early.
    this.#fail(iterator, pending, phase === "first" || untilDeadline <= this.#stallMs);
  }

  /** Stops the provider and throws the timeout: the deadline's, or the stall's. */
  #fail(
    iterator: AsyncIterator<GenerationEvent>,
    pending: Promise<unknown> | undefined,
    deadlinePassed: boolean,
  ): never {
    pending?.catch(() => undefined); // the provider rejects once aborted; that is expected
    this.#controller.abort(new Error("timed out"));
    void iterator.return?.();
    throw deadlinePassed
      ? new ApiError("REQUEST_DEADLINE_EXCEEDED", "The request ran past its deadline.")
      : new ApiError("PARTIAL_RESPONSE_TIMEOUT", "The response stream stalled.");
  }

  /** Stops the provider, for example when the output is blocked. */
  stop(): void {
    this.#controller.abort(RUN_STOPPED);
  }
}

/** What a run's events are checked against and charged to. */
interface RunGuards {
  policy: ContentPolicy;
  tenant: Tenant;
  model: ResolvedModel;
  /** The output ceiling, enforced here whoever generates. */
  ceiling: OutputCeiling;
  /** Input tokens as counted before generation, for an answer the ceiling ends. */
  inputTokens: number;
}

/**
 * The run's events as the caller receives them: the event already taken, then the rest,
 * each under the run's timers; each checked against the output policy before it is passed
 * on (CONTENT_BLOCKED_OUTPUT before a blocked term is sent); and the account charged when
 * the provider reports its usage, before `done` is passed on.
 *
 * One generator for the three steps rather than one each: every layer of async generator
 * allocates on every event it passes (about 3.5 KiB a request each, in a sampled heap
 * profile of POST /v1/responses), and allocation is what the young generation's
 * collections, pauses in the answers' latency, are paid for.
 */
async function* guarded(
  first: IteratorResult<GenerationEvent>,
  iterator: AsyncIterator<GenerationEvent>,
  watch: RunWatch,
  guards: RunGuards,
): AsyncIterable<GenerationEvent> {
  let result = first;
  let text = "";
  try {
    while (!result.done) {
      // Cut to the output ceiling first: what the ceiling keeps is what the policy reads and the caller gets.
      const event = guards.ceiling.admit(result.value);
      if (event !== undefined) {
        if (event.type === "text") text += event.delta;
        if (containsTerm(checkedText(event, text), guards.policy.blockedOutputTerms)) {
          throw new ApiError("CONTENT_BLOCKED_OUTPUT", "The output was blocked by the content policy.");
        }
        if (event.type === "done") {
          await guards.tenant.charge(guards.model, event.usage);
          yield event;
          return;
        }
        yield event;
      }
      if (guards.ceiling.reached) {
        // The provider is stopped (finally, below); the answer ends here, incomplete.
        const done = guards.ceiling.done(guards.inputTokens);
        await guards.tenant.charge(guards.model, done.usage);
        yield done;
        return;
      }
      result = await watch.next(iterator, "more").catch((error: unknown) => {
        throw asApiError(error);
      });
    }
  } finally {
    watch.stop();
    void iterator.return?.();
  }
}

/** What the output policy reads of an event: the text so far, a reasoning summary, a call's arguments. */
function checkedText(event: GenerationEvent, textSoFar: string): string {
  switch (event.type) {
    case "text":
      return textSoFar;
    case "reasoning":
      return event.summary;
    case "tool_call":
      return event.arguments;
    default:
      return "";
  }
}

/** A provider's failure as the answer's ApiError; the failure stays its cause, for the server's log. */
function asApiError(error: unknown): unknown {
  if (error instanceof ProviderFailure) {
    return new ApiError(error.code, error.message, {
      cause: error,
      ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
    });
  }
  return error;
}
