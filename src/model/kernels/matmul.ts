/**
 * Matrix × batch of vectors: out[t][o] = Σ_i W[o][i] · x[t][i] (a GGUF {nIn, nOut} tensor is nOut
 * rows of nIn values). Each weight row is read once for all tokens, so a prefill of n tokens costs
 * one pass over the weights. Sums accumulate in double precision (JS numbers).
 */
import { UnsupportedError } from '../../errors.js';
import { F16_TABLE, GGMLType, typeName } from '../../format/dtypes.js';
import { bf16RowToF32 } from './convert.js';
import { weightTypeKernels, type Weight } from './weight.js';

let rowScratch = new Float32Array(0);

/**
 * out (nTokens × nOut) = x (nTokens × nIn) · Wᵀ, W of any computable type.
 * F16/BF16 rows are converted to f32 one row at a time into a reused scratch row.
 */
export function matmul(out: Float32Array, w: Weight, x: Float32Array, nIn: number, nOut: number, nTokens: number): void {
  switch (w.type) {
    case GGMLType.F32:
      matmulF32(out, w.data as Float32Array, x, nIn, nOut, nTokens);
      return;
    case GGMLType.F16:
    case GGMLType.BF16: {
      if (rowScratch.length < nIn) rowScratch = new Float32Array(nIn);
      const row = rowScratch;
      const d = w.data as Uint16Array;
      const isF16 = w.type === GGMLType.F16;
      for (let o = 0; o < nOut; o++) {
        const base = o * nIn;
        if (isF16) for (let i = 0; i < nIn; i++) row[i] = F16_TABLE[d[base + i]!]!;
        else bf16RowToF32(row, d, base, nIn);
        for (let t = 0; t < nTokens; t++) out[t * nOut + o] = dot(row, 0, x, t * nIn, nIn);
      }
      return;
    }
    default: {
      const k = weightTypeKernels(w.type);
      if (!k) throw new UnsupportedError(`tensor ${w.name} has type ${typeName(w.type)}, which tokenloop cannot compute with yet`);
      k.matmul(out, w, x, nIn, nOut, nTokens);
    }
  }
}

/** F32 weights: out (nTokens × nOut) = x · Wᵀ with W a row-major (nOut × nIn) Float32Array. */
export function matmulF32(out: Float32Array, w: Float32Array, x: Float32Array, nIn: number, nOut: number, nTokens: number): void {
  for (let o = 0; o < nOut; o++) {
    const base = o * nIn;
    for (let t = 0; t < nTokens; t++) out[t * nOut + o] = dot(w, base, x, t * nIn, nIn);
  }
}

/** Σ a[aOff+i]·b[bOff+i] for i < n, four independent accumulators. */
export function dot(a: Float32Array, aOff: number, b: Float32Array, bOff: number, n: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  let i = 0;
  const n4 = n - (n & 3);
  for (; i < n4; i += 4) {
    s0 += a[aOff + i]! * b[bOff + i]!;
    s1 += a[aOff + i + 1]! * b[bOff + i + 1]!;
    s2 += a[aOff + i + 2]! * b[bOff + i + 2]!;
    s3 += a[aOff + i + 3]! * b[bOff + i + 3]!;
  }
  for (; i < n; i++) s0 += a[aOff + i]! * b[bOff + i]!;
  return (s0 + s1) + (s2 + s3);
}
