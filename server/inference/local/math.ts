/**
 * Dense Float32Array kernels for the local model, forward and backward. Matrices are
 * row-major and stored [out, in] (as in PyTorch's Linear), so `y = W x` is a dot
 * product over a contiguous row and a LoRA delta is `B·A` with B [out, r], A [r, in].
 * Loops are plain and monomorphic on purpose: V8 compiles them to tight scalar code.
 */

/**
 * out[r, o] = Σ_i x[r, i] · W[o, i] for `rows` rows of x (x is rows×inDim, W is outDim×inDim).
 * Rows are processed four at a time so each weight is loaded once per four rows: this
 * doubles throughput over the naive loop for the large output projection. Every product
 * is one sum over i in order, whichever rows are computed with it (the last block of
 * fewer than four rows repeats its last row): a row's result does not depend on the rows
 * around it, so the forward pass may compute only the logits a loss needs, and a row gets
 * the same numbers in generation (one row) as in training (many).
 */
export function matmulT(
  out: Float32Array,
  x: Float32Array,
  w: Float32Array,
  rows: number,
  inDim: number,
  outDim: number,
): void {
  if (rows === 1) return matVec(out, x, w, inDim, outDim);
  const last = rows - 1;
  for (let o = 0; o < outDim; o++) {
    const wo = o * inDim;
    for (let r = 0; r < rows; r += 4) {
      const a = r * inDim,
        b = Math.min(r + 1, last) * inDim,
        c = Math.min(r + 2, last) * inDim,
        e = Math.min(r + 3, last) * inDim;
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0;
      for (let i = 0; i < inDim; i++) {
        const wv = w[wo + i]!;
        s0 += x[a + i]! * wv;
        s1 += x[b + i]! * wv;
        s2 += x[c + i]! * wv;
        s3 += x[e + i]! * wv;
      }
      out[r * outDim + o] = s0;
      if (r + 1 < rows) out[(r + 1) * outDim + o] = s1;
      if (r + 2 < rows) out[(r + 2) * outDim + o] = s2;
      if (r + 3 < rows) out[(r + 3) * outDim + o] = s3;
    }
  }
}

/**
 * out[o] = Σ_i x[i] · W[o, i] for one row of x (a generation step): four weight rows at a
 * time, so each x value is loaded once for four products and the four sums are
 * independent chains. Each sum runs over i in order, as in matmulT (the last block of
 * fewer than four outputs repeats its last weight row). With the argmax of generate.ts,
 * bench/generation.ts ran 1.36–1.42× the previous code's tokens per second, on weights
 * whose vocabulary (and so output layer) is 5 % larger.
 */
function matVec(out: Float32Array, x: Float32Array, w: Float32Array, inDim: number, outDim: number): void {
  const last = outDim - 1;
  for (let o = 0; o < outDim; o += 4) {
    const a = o * inDim,
      b = Math.min(o + 1, last) * inDim,
      c = Math.min(o + 2, last) * inDim,
      e = Math.min(o + 3, last) * inDim;
    let s0 = 0,
      s1 = 0,
      s2 = 0,
      s3 = 0;
    for (let i = 0; i < inDim; i++) {
      const xv = x[i]!;
      s0 += w[a + i]! * xv;
      s1 += w[b + i]! * xv;
      s2 += w[c + i]! * xv;
      s3 += w[e + i]! * xv;
    }
    out[o] = s0;
    if (o + 1 < outDim) out[o + 1] = s1;
    if (o + 2 < outDim) out[o + 2] = s2;
    if (o + 3 < outDim) out[o + 3] = s3;
  }
}

/**
 * Backward of matmulT. Adds dX += dOut·W into dx, and dW += dOutᵀ·x into dw when dw is
 * given (null when that weight is frozen, which skips half of the work). dw may hold only
 * the rows from `dwFrom` on (dw[(o − dwFrom)·inDim + i]): the rows before it are frozen,
 * and their gradient is not computed. Same four-row blocking as the forward.
 */
export function matmulTBackward(
  dOut: Float32Array,
  x: Float32Array,
  w: Float32Array,
  dx: Float32Array,
  dw: Float32Array | null,
  rows: number,
  inDim: number,
  outDim: number,
  dwFrom = 0,
): void {
  for (let o = 0; o < outDim; o++) {
    const wo = o * inDim;
    const dwo = (o - dwFrom) * inDim;
    const dwRow = o >= dwFrom ? dw : null;
    let r = 0;
    for (; r + 3 < rows; r += 4) {
      const g0 = dOut[r * outDim + o]!,
        g1 = dOut[(r + 1) * outDim + o]!;
      const g2 = dOut[(r + 2) * outDim + o]!,
        g3 = dOut[(r + 3) * outDim + o]!;
      if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0) continue;
      const a = r * inDim,
        b = a + inDim,
        c = b + inDim,
        e = c + inDim;
      for (let i = 0; i < inDim; i++) {
        const wv = w[wo + i]!;
        dx[a + i]! += g0 * wv;
        dx[b + i]! += g1 * wv;
        dx[c + i]! += g2 * wv;
        dx[e + i]! += g3 * wv;
      }
      if (dwRow !== null) {
        for (let i = 0; i < inDim; i++)
          dwRow[dwo + i]! += g0 * x[a + i]! + g1 * x[b + i]! + g2 * x[c + i]! + g3 * x[e + i]!;
      }
    }
    for (; r < rows; r++) {
      const g = dOut[r * outDim + o]!;
      if (g === 0) continue;
      const xo = r * inDim;
      for (let i = 0; i < inDim; i++) dx[xo + i]! += g * w[wo + i]!;
      if (dwRow !== null) for (let i = 0; i < inDim; i++) dwRow[dwo + i]! += g * x[xo + i]!;
    }
  }
}

/** c (m×n) = a (m×k) · b (k×n), all row-major; used for LoRA merges and their gradients. */
export function matmul(
  c: Float32Array,
  a: Float32Array,
  b: Float32Array,
  m: number,
  k: number,
  n: number,
  scale = 1,
): void {
  c.fill(0, 0, m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const av = a[i * k + p]! * scale;
      if (av === 0) continue;
      const bo = p * n;
      const co = i * n;
      for (let j = 0; j < n; j++) c[co + j]! += av * b[bo + j]!;
    }
  }
}

export const RMS_EPS = 1e-5;

/** y = x / rms(x) · g per row; writes each row's 1/rms into invRms (kept for backward). */
export function rmsNorm(
  y: Float32Array,
  x: Float32Array,
  g: Float32Array,
  invRms: Float32Array,
  rows: number,
  dim: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    let ss = 0;
    for (let i = 0; i < dim; i++) ss += x[o + i]! * x[o + i]!;
    const inv = 1 / Math.sqrt(ss / dim + RMS_EPS);
    invRms[r] = inv;
    for (let i = 0; i < dim; i++) y[o + i] = x[o + i]! * inv * g[i]!;
  }
}

/** Backward of rmsNorm: dx += r·(dy·g) − x·r³·mean(dy·g·x); dg += dy·x·r (dg may be null). */
export function rmsNormBackward(
  dy: Float32Array,
  x: Float32Array,
  g: Float32Array,
  invRms: Float32Array,
  dx: Float32Array,
  dg: Float32Array | null,
  rows: number,
  dim: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    const inv = invRms[r]!;
    let dot = 0;
    for (let i = 0; i < dim; i++) dot += dy[o + i]! * g[i]! * x[o + i]!;
    const k = (inv * inv * inv * dot) / dim;
    for (let i = 0; i < dim; i++) {
      dx[o + i]! += inv * dy[o + i]! * g[i]! - x[o + i]! * k;
      if (dg !== null) dg[i]! += dy[o + i]! * x[o + i]! * inv;
    }
  }
}

const GELU_C = Math.sqrt(2 / Math.PI);

/** GELU, tanh approximation (as in GPT-2). */
export function gelu(y: Float32Array, x: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    y[i] = 0.5 * v * (1 + Math.tanh(GELU_C * (v + 0.044715 * v * v * v)));
  }
}

/** dx = dy · gelu'(x), overwriting dx. */
export function geluBackward(dx: Float32Array, dy: Float32Array, x: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    const u = GELU_C * (v + 0.044715 * v * v * v);
    const t = Math.tanh(u);
    const du = GELU_C * (1 + 3 * 0.044715 * v * v);
    dx[i] = dy[i]! * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * du);
  }
}

/** In-place softmax of a[offset .. offset+n); returns log Σ exp (the log-partition). */
export function softmaxInPlace(a: Float32Array, offset: number, n: number): number {
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (a[offset + i]! > max) max = a[offset + i]!;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const e = Math.exp(a[offset + i]! - max);
    a[offset + i] = e;
    sum += e;
  }
  for (let i = 0; i < n; i++) a[offset + i]! /= sum;
  return max + Math.log(sum);
}

/** Small seeded PRNG (mulberry32): same seed, same stream, on every platform. */
export function createRng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal sample from a uniform rng (Box–Muller). */
export function gaussian(rng: () => number): number {
  const u = Math.max(rng(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}
