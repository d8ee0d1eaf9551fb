/**
 * Adam with global-norm gradient clipping, and the learning-rate schedules a training
 * job can ask for. The optimizer works on any flat record of named Float32Arrays, so
 * the same code updates base weights (base training) or adapter factors (LoRA).
 */
import type { components } from "../../../generated/api.d.ts";
import type { Weights } from "../../inference/local/model.ts";

export type LrSchedule = components["schemas"]["LrSchedule"];

export interface ScheduleOptions {
  learningRate: number;
  warmupSteps: number;
  totalSteps: number;
  schedule: LrSchedule;
}

/** Learning rate of step `step` (0-based): linear warmup to the peak, then the schedule's decay to 0. */
export function learningRateAt(step: number, o: ScheduleOptions): number {
  if (o.warmupSteps > 0 && step < o.warmupSteps) return (o.learningRate * (step + 1)) / o.warmupSteps;
  const decaySteps = Math.max(1, o.totalSteps - o.warmupSteps);
  const progress = Math.min(1, (step - o.warmupSteps) / decaySteps);
  switch (o.schedule) {
    case "constant":
      return o.learningRate;
    case "cosine":
      return o.learningRate * 0.5 * (1 + Math.cos(Math.PI * progress));
    case "linear_decay":
      return o.learningRate * (1 - progress);
  }
}

export interface AdamOptions {
  beta1: number;
  beta2: number;
  eps: number;
  /** Decoupled weight decay (AdamW); 0 disables it. */
  weightDecay: number;
  /** Gradients are scaled down when their global L2 norm exceeds this; Infinity disables it. */
  clipNorm: number;
}

export const DEFAULT_ADAM: AdamOptions = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, clipNorm: 1 };

export interface AdamState {
  step: number;
  m: Weights;
  v: Weights;
  options: AdamOptions;
}

export function createOptimizerState(params: Weights, options: Partial<AdamOptions> = {}): AdamState {
  const m: Weights = {};
  const v: Weights = {};
  for (const [name, p] of Object.entries(params)) {
    m[name] = new Float32Array(p.length);
    v[name] = new Float32Array(p.length);
  }
  return { step: 0, m, v, options: { ...DEFAULT_ADAM, ...options } };
}

export function globalNorm(grads: Weights): number {
  let ss = 0;
  for (const g of Object.values(grads)) for (let i = 0; i < g.length; i++) ss += g[i]! * g[i]!;
  return Math.sqrt(ss);
}

/** One Adam step on every parameter that has a gradient; returns the gradient norm before clipping. */
export function adamUpdate(params: Weights, grads: Weights, state: AdamState, lr: number): number {
  const { beta1, beta2, eps, weightDecay, clipNorm } = state.options;
  const norm = globalNorm(grads);
  const clip = norm > clipNorm ? clipNorm / norm : 1;
  state.step++;
  const c1 = 1 - beta1 ** state.step;
  const c2 = 1 - beta2 ** state.step;
  for (const [name, g] of Object.entries(grads)) {
    const p = params[name];
    const m = state.m[name];
    const v = state.v[name];
    if (p === undefined || m === undefined || v === undefined) throw new Error(`optimizer has no parameter ${name}`);
    for (let i = 0; i < p.length; i++) {
      const gi = g[i]! * clip;
      m[i] = beta1 * m[i]! + (1 - beta1) * gi;
      v[i] = beta2 * v[i]! + (1 - beta2) * gi * gi;
      p[i]! -= lr * (m[i]! / c1 / (Math.sqrt(v[i]! / c2) + eps) + weightDecay * p[i]!);
    }
  }
  return norm;
}
