/**
 * LocalProvider: serves tiny-chat and tiny-reasoner from the embedded model. It renders
 * the request into the model's chat template, optionally lets the model reason first
 * (a `<|think|>` turn whose text becomes the reasoning summary), then either calls a
 * tool (arguments built against the tool's schema) or streams the answer token by
 * token, yielding to the event loop between tokens so aborts are seen at once.
 */
import { randomBytes, randomInt } from "node:crypto";
import { setImmediate as nextTick } from "node:timers/promises";
import type { FunctionTool, GenerationEvent, GenerationRequest, Provider, ReasoningEffort } from "../engine.ts";
import { findPlatformModel } from "../catalog.ts";
import { countInputTokens, countTokens, decode, encode } from "../tokenizer.ts";
import { createSampler, fitPrompt, generateTokens, TextStream, type Sampler } from "./generate.ts";
import { loadModel, type LocalModel } from "./local-model.ts";
import { adaptModel, type Adapter } from "./lora.ts";
import type { Weights } from "./model.ts";
import { chooseTool, lastUserText, templateTurns } from "./prompt.ts";
import { StopMatcher } from "./stop-matcher.ts";
import { renderPrompt, type TemplateTurn } from "./template.ts";
import { buildArguments } from "./tool-args.ts";
import { SPECIAL_TOKENS } from "./vocab.ts";

/** Reasoning token budget per effort; the corpus's thoughts are 15–30 tokens long. */
export const REASONING_BUDGET: Record<ReasoningEffort, number> = { low: 16, medium: 32, high: 64 };

const FALLBACK_MAX_OUTPUT = 256;
/** Context positions kept free for the reply when a long prompt is cut from the left. */
const REPLY_RESERVE = 64;

export interface LocalProviderOptions {
  /** Weights file; defaults to the committed weights/tiny-chat.bin. */
  weightsPath?: string;
  /** The LoRA adapter that serves a (fine-tuned) model id, or null for the base weights. */
  adapterFor?: (modelId: string) => Adapter | null | undefined;
}

const loaded = new Map<string, LocalModel>();

/** Loads a weights file once per process (lazily, on first use). */
function cachedModel(path: string | undefined): LocalModel {
  const key = path ?? "";
  let model = loaded.get(key);
  if (model === undefined) {
    model = loadModel(path);
    loaded.set(key, model);
  }
  return model;
}

/**
 * Adapted models by adapter, so a fine-tuned model is merged once rather than per
 * request. Served adapters never change (training works on its own copies), and the
 * entry goes when the deployment lets its adapter go.
 */
const adaptedModels = new WeakMap<Adapter, LocalModel>();

function servedModel(base: LocalModel, adapter: Adapter | null): LocalModel {
  if (adapter === null) return base;
  let model = adaptedModels.get(adapter);
  if (model === undefined) {
    model = adaptModel(base, adapter);
    adaptedModels.set(adapter, model);
  }
  return model;
}

/** Per-request state: the model (with its adapter merged), its weights, sampler and abort signal. */
interface Run {
  model: LocalModel;
  weights: Weights;
  sampler: Sampler;
  signal: AbortSignal;
}

export class LocalProvider implements Provider {
  readonly name = "local";
  private readonly options: LocalProviderOptions;

  constructor(options: LocalProviderOptions = {}) {
    this.options = options;
  }

  /** The loaded model (exposed for the fine-tuning trainer, which trains adapters on it). */
  model(): LocalModel {
    return cachedModel(this.options.weightsPath);
  }

  async *generate(request: GenerationRequest): AsyncGenerator<GenerationEvent, void, void> {
    const model = servedModel(
      this.model(),
      (request.adapter as Adapter | undefined) ?? this.options.adapterFor?.(request.model) ?? null,
    );
    const run: Run = {
      model,
      weights: model.weights,
      sampler: samplerFor(model, request),
      signal: request.signal,
    };
    const inputTokens = countInputTokens(request);
    const budget =
      request.maxOutputTokens ?? findPlatformModel(request.model)?.defaultMaxOutputTokens ?? FALLBACK_MAX_OUTPUT;
    const turns = templateTurns(request);

    let reasoningTokens = 0;
    if (request.reasoning !== undefined) {
      const summary = await reason(run, turns, Math.min(REASONING_BUDGET[request.reasoning.effort], budget));
      if (summary === null) return;
      reasoningTokens = countTokens(summary);
      // A summary that leaves the answer no room is where the ceiling ended it.
      yield { type: "reasoning", summary, ...(reasoningTokens >= budget ? { cut: true } : {}) };
      turns.push({ role: "think", text: summary });
    }

    const tool = chooseTool(request);
    if (tool !== null) {
      const call = await toolCall(run, turns, tool, lastUserText(request.turns));
      if (call === null) return;
      yield call;
      const outputTokens = reasoningTokens + countTokens(`${call.name} ${call.arguments}`);
      yield { type: "done", finishReason: "tool_calls", usage: { inputTokens, outputTokens, reasoningTokens } };
      return;
    }

    const result = yield* streamAnswer(run, turns, budget - reasoningTokens, request.stop);
    if (result === null) return;
    const outputTokens = reasoningTokens + countTokens(result.text);
    yield { type: "done", finishReason: result.finishReason, usage: { inputTokens, outputTokens, reasoningTokens } };
  }
}

/**
 * Streams the answer as text events, honouring stop strings and the token budget;
 * returns the emitted text and why it ended, or null when aborted.
 */
async function* streamAnswer(
  run: Run,
  turns: TemplateTurn[],
  budget: number,
  stop: string[] | undefined,
): AsyncGenerator<GenerationEvent, { text: string; finishReason: "stop" | "length" } | null, void> {
  if (budget <= 0) return { text: "", finishReason: "length" };
  const stops = new StopMatcher(stop);
  let text = "";
  let finishReason: "stop" | "length" = "stop";
  for await (const piece of answer(run, renderFitted(run.model, turns, "assistant", budget), budget)) {
    if (piece === null) return null;
    const safe = stops.push(piece.delta);
    if (safe.length > 0) yield { type: "text", delta: safe };
    text += safe;
    if (stops.stopped) return { text, finishReason: "stop" };
    if (piece.length) {
      finishReason = "length";
      break;
    }
  }
  // No stop string matched: release the text held back as a possible one.
  const rest = stops.flush();
  if (rest.length > 0) yield { type: "text", delta: rest };
  return { text: text + rest, finishReason };
}

function samplerFor(model: LocalModel, request: GenerationRequest): Sampler {
  // Inside a turn only `<|end|>` may be produced among the control tokens.
  const disallowed = new Set<number>();
  for (let i = 0; i < SPECIAL_TOKENS.length; i++) if (i !== model.vocab.special("<|end|>")) disallowed.add(i);
  return createSampler(
    { temperature: request.temperature ?? 1, topP: request.topP ?? 1, seed: request.seed ?? randomInt(2 ** 31) },
    disallowed,
  );
}

/** Prompt tokens ending with the marker of the next turn, cut from the left to leave room for the reply. */
function renderFitted(model: LocalModel, turns: TemplateTurn[], next: "assistant" | "think", budget: number): number[] {
  const reserve = Math.min(REPLY_RESERVE, Math.max(1, budget));
  return fitPrompt(renderPrompt(model.vocab, turns, next), model.config.contextLength - reserve);
}

/**
 * Model text after a prompt, one decoded delta per token, until end of turn or
 * `maxSteps`; null when the request was aborted. Yields to the event loop every token.
 */
async function* modelText(run: Run, prompt: number[], maxSteps: number): AsyncGenerator<string | null, void, void> {
  const stream = new TextStream((ids) => run.model.vocab.decode(ids));
  const end = run.model.vocab.special("<|end|>");
  for (const id of generateTokens(run.model, run.weights, prompt, run.sampler, end, maxSteps)) {
    await nextTick();
    if (run.signal.aborted) {
      yield null;
      return;
    }
    yield stream.push(id);
  }
}

/**
 * Answer deltas; the last one has `length` set when the output reached `budget` tokens
 * as counted by tokenizer.ts (the text is trimmed to exactly `budget` tokens then).
 */
async function* answer(
  run: Run,
  prompt: number[],
  budget: number,
): AsyncGenerator<{ delta: string; length: boolean } | null, void, void> {
  let produced = "";
  // Spelled-out words take several model steps per counted token, hence the slack.
  for await (const delta of modelText(run, prompt, budget * 4)) {
    if (delta === null) {
      yield null;
      return;
    }
    const next = produced + delta;
    const count = countTokens(next);
    if (count < budget) {
      produced = next;
      yield { delta, length: false };
      continue;
    }
    const trimmed = count === budget ? next : decode(encode(next).slice(0, budget));
    yield { delta: trimmed.startsWith(produced) ? trimmed.slice(produced.length) : "", length: true };
    return;
  }
}

/** The reasoning summary: model text after `<|think|>`, or null when aborted. */
async function reason(run: Run, turns: TemplateTurn[], budget: number): Promise<string | null> {
  let summary = "";
  for await (const delta of modelText(run, renderFitted(run.model, turns, "think", budget), budget)) {
    if (delta === null) return null;
    summary += delta;
  }
  return summary.trim();
}

/**
 * A call of `tool` with schema-valid arguments; null when aborted. The model's own
 * short answer is generated first: it is the fallback for required strings that the
 * user's message does not supply (≤ 24 tokens, a few milliseconds).
 */
async function toolCall(run: Run, turns: TemplateTurn[], tool: FunctionTool, message: string) {
  const generated = await shortModelText(run, turns);
  if (generated === null) return null;
  const args = buildArguments(tool.parameters, { message, generated });
  return {
    type: "tool_call" as const,
    callId: `call_${randomBytes(12).toString("hex")}`,
    name: tool.name,
    arguments: JSON.stringify(args),
  };
}

/** The first few words of the model's own answer, for a required string the message does not supply. */
async function shortModelText(run: Run, turns: TemplateTurn[]): Promise<string | null> {
  let text = "";
  for await (const delta of modelText(run, renderFitted(run.model, turns, "assistant", 24), 24)) {
    if (delta === null) return null;
    text += delta;
  }
  const words = text
    .replace(/[.!?].*$/s, "")
    .trim()
    .split(/\s+/)
    .slice(0, 8)
    .join(" ");
  return words.length > 0 ? words : "text";
}
