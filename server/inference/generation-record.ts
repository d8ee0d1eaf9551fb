/**
 * Notes what a generation ran on and used, as its events pass: the model and provider
 * class at the start, the tokens at `done`. For the request's access-log line
 * (res.locals.generation) and the inference metrics.
 *
 * An observer the runner calls with each event rather than one more async generator
 * around the run's events: each generator layer allocates on every event it passes.
 *
 * In inference/, not ops/: it reads the engine's events, and ops/ imports nothing of
 * inference (test/server/layers.test.ts).
 */
import type { Response } from "express";
import type { GenerationEvent } from "./engine.ts";
import type { GenerationRun } from "./generation.ts";
import { generations, inputTokens, outputTokens } from "../ops/metrics.ts";

/** Notes the run's start now; returns what to call with each of its events. */
export function recordGeneration(res: Response, run: GenerationRun): (event: GenerationEvent) => void {
  // The platform model that runs: a fine-tuned model counts under its base (labels stay few).
  const model = run.model.spec.id;
  const noted: NonNullable<Response["locals"]["generation"]> = {
    model,
    providerClass: run.providerClass,
    inputTokens: run.inputTokens,
  };
  res.locals.generation = noted;
  generations.inc({ model, provider_class: run.providerClass });
  return (event) => {
    if (event.type !== "done") return;
    noted.inputTokens = event.usage.inputTokens;
    noted.outputTokens = event.usage.outputTokens;
    inputTokens.inc({ model }, event.usage.inputTokens);
    outputTokens.inc({ model }, event.usage.outputTokens);
  };
}
