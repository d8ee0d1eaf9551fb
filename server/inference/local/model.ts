/**
 * The local language model: a small pre-norm causal transformer (RMSNorm, multi-head
 * attention, GELU MLP, learned positions, untied output projection), with its forward
 * pass (for training and for cached token-by-token generation) and its backward pass.
 *
 * Weights are a flat record of named Float32Arrays so that a LoRA adapter can replace
 * any matrix by `W + (alpha/r)·B·A` (see lora.ts) before the forward pass, and so
 * the backward pass can return gradients for exactly the matrices a trainer asks for.
 */
import { createRng, gaussian, gelu, geluBackward, matmulT, matmulTBackward, rmsNorm, rmsNormBackward } from "./math.ts";

export interface ModelConfig {
  vocabSize: number;
  dModel: number;
  nLayers: number;
  nHeads: number;
  /** Hidden width of each MLP. */
  dFF: number;
  /** Positions the model can attend over (learned position embeddings). */
  contextLength: number;
}

/** Named parameter tensors. A matrix named `x` has shape parameterShapes(cfg).get(x) = [rows, cols]. */
export type Weights = Record<string, Float32Array>;
/** Gradient buffers for the parameters a trainer updates; missing names are frozen (no dW work). */
export type Gradients = Partial<Record<string, Float32Array>>;

export const layerName = (l: number, part: string): string => `layers.${l}.${part}`;

/** [rows, cols] of every parameter; vectors are [1, n]. Matrices are [out, in]. */
export function parameterShapes(cfg: ModelConfig): Map<string, [number, number]> {
  const { vocabSize: v, dModel: d, dFF: f } = cfg;
  const shapes = new Map<string, [number, number]>();
  shapes.set("tok_emb", [v, d]);
  shapes.set("pos_emb", [cfg.contextLength, d]);
  for (let l = 0; l < cfg.nLayers; l++) {
    shapes.set(layerName(l, "attn_norm"), [1, d]);
    for (const m of ["wq", "wk", "wv", "wo"]) shapes.set(layerName(l, m), [d, d]);
    shapes.set(layerName(l, "mlp_norm"), [1, d]);
    shapes.set(layerName(l, "w1"), [f, d]);
    shapes.set(layerName(l, "w2"), [d, f]);
  }
  shapes.set("final_norm", [1, d]);
  shapes.set("out", [v, d]);
  return shapes;
}

export function parameterCount(cfg: ModelConfig): number {
  let n = 0;
  for (const [r, c] of parameterShapes(cfg).values()) n += r * c;
  return n;
}

/**
 * Fresh weights: norms at 1, matrices N(0, 1/in), with the two residual-branch output
 * matrices scaled down by √(2·layers) so the residual stream starts near unit scale.
 */
export function initWeights(cfg: ModelConfig, seed: number): Weights {
  const rng = createRng(seed);
  const w: Weights = {};
  for (const [name, [rows, cols]] of parameterShapes(cfg)) {
    const t = new Float32Array(rows * cols);
    if (name.endsWith("norm")) t.fill(1);
    else {
      let std = name.endsWith("emb") ? 0.1 : 1 / Math.sqrt(cols);
      if (name.endsWith("wo") || name.endsWith("w2")) std /= Math.sqrt(2 * cfg.nLayers);
      for (let i = 0; i < t.length; i++) t[i] = gaussian(rng) * std;
    }
    w[name] = t;
  }
  return w;
}

export function param(w: Weights, name: string): Float32Array {
  const t = w[name];
  if (t === undefined) throw new Error(`missing parameter ${name}`);
  return t;
}

/** Keys and values of every layer for the positions seen so far (generation and training). */
export interface KvCache {
  k: Float32Array[];
  v: Float32Array[];
  length: number;
}

export function createCache(cfg: ModelConfig): KvCache {
  const size = cfg.contextLength * cfg.dModel;
  const k: Float32Array[] = [];
  const v: Float32Array[] = [];
  for (let l = 0; l < cfg.nLayers; l++) {
    k.push(new Float32Array(size));
    v.push(new Float32Array(size));
  }
  return { k, v, length: 0 };
}

/** Activations of one layer, kept for the backward pass. */
interface LayerTrace {
  xIn: Float32Array;
  invRms1: Float32Array;
  h1: Float32Array;
  q: Float32Array;
  /** Attention probabilities, [head][row][position]. */
  probs: Float32Array;
  att: Float32Array;
  xMid: Float32Array;
  invRms2: Float32Array;
  h2: Float32Array;
  u: Float32Array;
  g: Float32Array;
}

/** Everything the backward pass needs from one forward pass over a sequence from position 0. */
export interface Trace {
  tokens: readonly number[];
  rows: number;
  cache: KvCache;
  layers: LayerTrace[];
  xFinal: Float32Array;
  invRmsF: Float32Array;
  hF: Float32Array;
  /** rows × vocabSize logits (only the last row's with "last"; 0 on rows a target mask leaves out). */
  logits: Float32Array;
}

/**
 * Which rows of a forward pass get logits: every row, the final row only (generation), or
 * the rows that predict a target of the sequence (row t when targetMask[t + 1] is 1:
 * training and scoring read no other row, and the output layer is the largest product).
 * Rows left out are 0.
 */
export type LogitRows = "all" | "last" | { readonly targetMask: readonly number[] };

/**
 * Runs `tokens` at positions cache.length … and appends their keys/values to the cache.
 * Positions beyond contextLength are the caller's error.
 */
export function forward(
  cfg: ModelConfig,
  w: Weights,
  tokens: readonly number[],
  cache: KvCache,
  outputs: LogitRows = "all",
): Trace {
  const { dModel: d, dFF: f } = cfg;
  const rows = tokens.length;
  const p0 = cache.length;
  if (p0 + rows > cfg.contextLength) throw new Error(`sequence exceeds context length ${cfg.contextLength}`);
  let x = embed(cfg, w, tokens, p0);
  const layers: LayerTrace[] = [];
  for (let l = 0; l < cfg.nLayers; l++) {
    const invRms1 = new Float32Array(rows);
    const h1 = new Float32Array(rows * d);
    rmsNorm(h1, x, param(w, layerName(l, "attn_norm")), invRms1, rows, d);
    const q = new Float32Array(rows * d);
    matmulT(q, h1, param(w, layerName(l, "wq")), rows, d, d);
    const kNew = cache.k[l]!.subarray(p0 * d, (p0 + rows) * d);
    const vNew = cache.v[l]!.subarray(p0 * d, (p0 + rows) * d);
    matmulT(kNew, h1, param(w, layerName(l, "wk")), rows, d, d);
    matmulT(vNew, h1, param(w, layerName(l, "wv")), rows, d, d);
    const { att, probs } = attention(cfg, q, cache.k[l]!, cache.v[l]!, rows, p0);
    const xMid = new Float32Array(rows * d);
    matmulT(xMid, att, param(w, layerName(l, "wo")), rows, d, d);
    for (let i = 0; i < xMid.length; i++) xMid[i]! += x[i]!;
    const invRms2 = new Float32Array(rows);
    const h2 = new Float32Array(rows * d);
    rmsNorm(h2, xMid, param(w, layerName(l, "mlp_norm")), invRms2, rows, d);
    const u = new Float32Array(rows * f);
    matmulT(u, h2, param(w, layerName(l, "w1")), rows, d, f);
    const g = new Float32Array(rows * f);
    gelu(g, u, rows * f);
    const xOut = new Float32Array(rows * d);
    matmulT(xOut, g, param(w, layerName(l, "w2")), rows, f, d);
    for (let i = 0; i < xOut.length; i++) xOut[i]! += xMid[i]!;
    layers.push({ xIn: x, invRms1, h1, q, probs, att, xMid, invRms2, h2, u, g });
    x = xOut;
  }
  cache.length = p0 + rows;
  const invRmsF = new Float32Array(rows);
  const hF = new Float32Array(rows * d);
  rmsNorm(hF, x, param(w, "final_norm"), invRmsF, rows, d);
  const logits = outputLogits(cfg, w, hF, rows, outputs);
  return { tokens, rows, cache, layers, xFinal: x, invRmsF, hF, logits };
}

function outputLogits(cfg: ModelConfig, w: Weights, hF: Float32Array, rows: number, outputs: LogitRows): Float32Array {
  const { dModel: d, vocabSize: v } = cfg;
  const out = param(w, "out");
  if (outputs === "last") {
    const logits = new Float32Array(v);
    matmulT(logits, hF.subarray((rows - 1) * d), out, 1, d, v);
    return logits;
  }
  const logits = new Float32Array(rows * v);
  if (outputs === "all") {
    matmulT(logits, hF, out, rows, d, v);
    return logits;
  }
  // One product per run of consecutive rows that predict a target (matmulT gives a row
  // the same numbers whichever rows it is computed with).
  const needed = (t: number): boolean => outputs.targetMask[t + 1] === 1;
  for (let t = 0; t < rows;) {
    if (!needed(t)) {
      t++;
      continue;
    }
    let end = t + 1;
    while (end < rows && needed(end)) end++;
    matmulT(logits.subarray(t * v, end * v), hF.subarray(t * d, end * d), out, end - t, d, v);
    t = end;
  }
  return logits;
}

function embed(cfg: ModelConfig, w: Weights, tokens: readonly number[], p0: number): Float32Array {
  const d = cfg.dModel;
  const tok = param(w, "tok_emb");
  const pos = param(w, "pos_emb");
  const x = new Float32Array(tokens.length * d);
  for (let r = 0; r < tokens.length; r++) {
    const to = tokens[r]! * d;
    const po = (p0 + r) * d;
    for (let i = 0; i < d; i++) x[r * d + i] = tok[to + i]! + pos[po + i]!;
  }
  return x;
}

/** Causal multi-head attention of `rows` new queries over cached keys/values 0 … p0+row. */
function attention(cfg: ModelConfig, q: Float32Array, k: Float32Array, v: Float32Array, rows: number, p0: number) {
  const probs = new Float32Array(cfg.nHeads * rows * (p0 + rows));
  const att = new Float32Array(rows * cfg.dModel);
  attendInto(cfg, q, k, v, rows, p0, probs, att);
  return { att, probs };
}

/**
 * The attention of `attention`, into given buffers: `probs` holds at least
 * nHeads·rows·(p0+rows) values, `att` rows·dModel and must be all zero (it is summed into).
 * Generation's step (decode-step.ts) reuses its buffers through this.
 */
export function attendInto(
  cfg: ModelConfig,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  rows: number,
  p0: number,
  probs: Float32Array,
  att: Float32Array,
): void {
  const d = cfg.dModel;
  const hd = d / cfg.nHeads;
  const scale = 1 / Math.sqrt(hd);
  const span = p0 + rows;
  for (let h = 0; h < cfg.nHeads; h++) {
    const ho = h * hd;
    for (let r = 0; r < rows; r++) {
      const last = p0 + r;
      const po = (h * rows + r) * span;
      const qo = r * d + ho;
      let max = -Infinity;
      for (let s = 0; s <= last; s++) {
        let dot = 0;
        const ko = s * d + ho;
        for (let i = 0; i < hd; i++) dot += q[qo + i]! * k[ko + i]!;
        dot *= scale;
        probs[po + s] = dot;
        if (dot > max) max = dot;
      }
      let sum = 0;
      for (let s = 0; s <= last; s++) {
        const e = Math.exp(probs[po + s]! - max);
        probs[po + s] = e;
        sum += e;
      }
      for (let s = 0; s <= last; s++) {
        const p = probs[po + s]! / sum;
        probs[po + s] = p;
        const vo = s * d + ho;
        for (let i = 0; i < hd; i++) att[qo + i]! += p * v[vo + i]!;
      }
    }
  }
}

/**
 * Backward pass of a training forward (one started at position 0). Accumulates into
 * every buffer present in `grads`; parameters without a buffer are treated as frozen.
 * The buffers of `tok_emb` and `out` may be shorter than their matrices: they then hold
 * the last rows only (an adapter trains the rows of the tokens it adds, nothing else),
 * and the frozen rows' gradient is not computed. `dLogits` is rows × vocabSize, the loss
 * gradient with respect to the logits.
 */
export function backward(cfg: ModelConfig, w: Weights, trace: Trace, dLogits: Float32Array, grads: Gradients): void {
  const { dModel: d, dFF: f } = cfg;
  const rows = trace.rows;
  const dhF = new Float32Array(rows * d);
  const dOut = grads.out ?? null;
  const outFrom = dOut === null ? 0 : cfg.vocabSize - dOut.length / d;
  matmulTBackward(dLogits, trace.hF, param(w, "out"), dhF, dOut, rows, d, cfg.vocabSize, outFrom);
  let dx = new Float32Array(rows * d);
  rmsNormBackward(dhF, trace.xFinal, param(w, "final_norm"), trace.invRmsF, dx, grads.final_norm ?? null, rows, d);
  for (let l = cfg.nLayers - 1; l >= 0; l--) {
    const t = trace.layers[l]!;
    const gradOf = (part: string) => grads[layerName(l, part)] ?? null;
    // MLP branch: xOut = xMid + gelu(h2·W1ᵀ)·W2ᵀ
    const dG = new Float32Array(rows * f);
    matmulTBackward(dx, t.g, param(w, layerName(l, "w2")), dG, gradOf("w2"), rows, f, d);
    const dU = new Float32Array(rows * f);
    geluBackward(dU, dG, t.u, rows * f);
    const dH2 = new Float32Array(rows * d);
    matmulTBackward(dU, t.h2, param(w, layerName(l, "w1")), dH2, gradOf("w1"), rows, d, f);
    const dxMid = Float32Array.from(dx);
    rmsNormBackward(dH2, t.xMid, param(w, layerName(l, "mlp_norm")), t.invRms2, dxMid, gradOf("mlp_norm"), rows, d);
    // Attention branch: xMid = xIn + attention(h1)·Woᵀ
    const dAtt = new Float32Array(rows * d);
    matmulTBackward(dxMid, t.att, param(w, layerName(l, "wo")), dAtt, gradOf("wo"), rows, d, d);
    const k = trace.cache.k[l]!.subarray(0, rows * d);
    const v = trace.cache.v[l]!.subarray(0, rows * d);
    const { dq, dk, dv } = attentionBackward(cfg, dAtt, t.q, k, v, t.probs, rows);
    const dH1 = new Float32Array(rows * d);
    matmulTBackward(dq, t.h1, param(w, layerName(l, "wq")), dH1, gradOf("wq"), rows, d, d);
    matmulTBackward(dk, t.h1, param(w, layerName(l, "wk")), dH1, gradOf("wk"), rows, d, d);
    matmulTBackward(dv, t.h1, param(w, layerName(l, "wv")), dH1, gradOf("wv"), rows, d, d);
    const dxIn = dxMid;
    rmsNormBackward(dH1, t.xIn, param(w, layerName(l, "attn_norm")), t.invRms1, dxIn, gradOf("attn_norm"), rows, d);
    dx = dxIn;
  }
  embedBackward(cfg, trace.tokens, dx, grads);
}

function embedBackward(cfg: ModelConfig, tokens: readonly number[], dx: Float32Array, grads: Gradients): void {
  const d = cfg.dModel;
  const dTok = grads.tok_emb;
  const dPos = grads.pos_emb;
  // A short tok_emb buffer holds the last rows only (see backward).
  const tokFrom = dTok === undefined ? 0 : cfg.vocabSize - dTok.length / d;
  for (let r = 0; r < tokens.length; r++) {
    const trained = dTok !== undefined && tokens[r]! >= tokFrom;
    const to = (tokens[r]! - tokFrom) * d;
    for (let i = 0; i < d; i++) {
      const g = dx[r * d + i]!;
      if (trained) dTok[to + i]! += g;
      if (dPos !== undefined) dPos[r * d + i]! += g;
    }
  }
}

/** Gradients of queries, keys and values from the gradient of the attention output (p0 = 0). */
function attentionBackward(
  cfg: ModelConfig,
  dAtt: Float32Array,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  probs: Float32Array,
  rows: number,
) {
  const d = cfg.dModel;
  const hd = d / cfg.nHeads;
  const scale = 1 / Math.sqrt(hd);
  const dq = new Float32Array(rows * d);
  const dk = new Float32Array(rows * d);
  const dv = new Float32Array(rows * d);
  const dp = new Float32Array(rows);
  for (let h = 0; h < cfg.nHeads; h++) {
    const ho = h * hd;
    for (let r = 0; r < rows; r++) {
      const po = (h * rows + r) * rows;
      const ao = r * d + ho;
      let weighted = 0;
      for (let s = 0; s <= r; s++) {
        const p = probs[po + s]!;
        const vo = s * d + ho;
        let dot = 0;
        for (let i = 0; i < hd; i++) {
          dot += dAtt[ao + i]! * v[vo + i]!;
          dv[vo + i]! += p * dAtt[ao + i]!;
        }
        dp[s] = dot;
        weighted += p * dot;
      }
      for (let s = 0; s <= r; s++) {
        const ds = probs[po + s]! * (dp[s]! - weighted) * scale;
        if (ds === 0) continue;
        const ko = s * d + ho;
        for (let i = 0; i < hd; i++) {
          dq[ao + i]! += ds * k[ko + i]!;
          dk[ko + i]! += ds * q[ao + i]!;
        }
      }
    }
  }
  return { dq, dk, dv };
}
