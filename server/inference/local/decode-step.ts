/**
 * One generation step of the local model: the next token's logits from one new token and
 * the key/value cache, with every buffer made once per generation and every weight looked
 * up once. `forward` (model.ts) does the same for any number of rows and keeps each
 * activation for the backward pass, so a step through it allocated some thirty typed
 * arrays and views and built sixteen parameter names per token (with two layers). The
 * arithmetic is the same, in the same order (the attention is the same function), so the
 * logits are identical (test/local-model/decode-step.test.ts compares them token by token).
 */
import { gelu, matmulT, rmsNorm } from "./math.ts";
import { attendInto, layerName, param, type KvCache, type ModelConfig, type Weights } from "./model.ts";

interface LayerWeights {
  attnNorm: Float32Array;
  wq: Float32Array;
  wk: Float32Array;
  wv: Float32Array;
  wo: Float32Array;
  mlpNorm: Float32Array;
  w1: Float32Array;
  w2: Float32Array;
}

/** The weights and buffers of one generation; its steps reuse them. */
export interface DecodeState {
  readonly cfg: ModelConfig;
  readonly tokEmb: Float32Array;
  readonly posEmb: Float32Array;
  readonly layers: readonly LayerWeights[];
  readonly finalNorm: Float32Array;
  readonly out: Float32Array;
  x: Float32Array;
  xOut: Float32Array;
  readonly h: Float32Array;
  readonly q: Float32Array;
  readonly kv: Float32Array;
  readonly att: Float32Array;
  readonly probs: Float32Array;
  readonly xMid: Float32Array;
  readonly u: Float32Array;
  readonly g: Float32Array;
  readonly invRms: Float32Array;
  /** The latest step's logits; overwritten by the next step. */
  readonly logits: Float32Array;
}

export function createDecodeState(cfg: ModelConfig, w: Weights): DecodeState {
  const { dModel: d, dFF: f } = cfg;
  const layers: LayerWeights[] = [];
  for (let l = 0; l < cfg.nLayers; l++) {
    const p = (part: string) => param(w, layerName(l, part));
    layers.push({
      attnNorm: p("attn_norm"),
      wq: p("wq"),
      wk: p("wk"),
      wv: p("wv"),
      wo: p("wo"),
      mlpNorm: p("mlp_norm"),
      w1: p("w1"),
      w2: p("w2"),
    });
  }
  return {
    cfg,
    tokEmb: param(w, "tok_emb"),
    posEmb: param(w, "pos_emb"),
    layers,
    finalNorm: param(w, "final_norm"),
    out: param(w, "out"),
    x: new Float32Array(d),
    xOut: new Float32Array(d),
    h: new Float32Array(d),
    q: new Float32Array(d),
    kv: new Float32Array(d),
    att: new Float32Array(d),
    probs: new Float32Array(cfg.nHeads * cfg.contextLength),
    xMid: new Float32Array(d),
    u: new Float32Array(f),
    g: new Float32Array(f),
    invRms: new Float32Array(1),
    logits: new Float32Array(cfg.vocabSize),
  };
}

/**
 * Runs `token` at position cache.length, appends its key and value to the cache and
 * returns the logits of the next token (the state's buffer: read it before the next step).
 */
export function decodeStep(s: DecodeState, token: number, cache: KvCache): Float32Array {
  const { cfg } = s;
  const { dModel: d, dFF: f } = cfg;
  const p0 = cache.length;
  if (p0 + 1 > cfg.contextLength) throw new Error(`sequence exceeds context length ${cfg.contextLength}`);
  const to = token * d;
  const po = p0 * d;
  for (let i = 0; i < d; i++) s.x[i] = s.tokEmb[to + i]! + s.posEmb[po + i]!;
  for (let l = 0; l < cfg.nLayers; l++) {
    const L = s.layers[l]!;
    rmsNorm(s.h, s.x, L.attnNorm, s.invRms, 1, d);
    matmulT(s.q, s.h, L.wq, 1, d, d);
    matmulT(s.kv, s.h, L.wk, 1, d, d);
    cache.k[l]!.set(s.kv, po);
    matmulT(s.kv, s.h, L.wv, 1, d, d);
    cache.v[l]!.set(s.kv, po);
    s.att.fill(0);
    attendInto(cfg, s.q, cache.k[l]!, cache.v[l]!, 1, p0, s.probs, s.att);
    matmulT(s.xMid, s.att, L.wo, 1, d, d);
    for (let i = 0; i < d; i++) s.xMid[i]! += s.x[i]!;
    rmsNorm(s.h, s.xMid, L.mlpNorm, s.invRms, 1, d);
    matmulT(s.u, s.h, L.w1, 1, d, f);
    gelu(s.g, s.u, f);
    matmulT(s.xOut, s.g, L.w2, 1, f, d);
    for (let i = 0; i < d; i++) s.xOut[i]! += s.xMid[i]!;
    const next = s.xOut;
    s.xOut = s.x;
    s.x = next;
  }
  cache.length = p0 + 1;
  rmsNorm(s.h, s.x, s.finalNorm, s.invRms, 1, d);
  matmulT(s.logits, s.h, s.out, 1, d, cfg.vocabSize);
  return s.logits;
}
