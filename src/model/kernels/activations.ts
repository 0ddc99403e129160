/**
 * Element-wise activations and softmax.
 * SiLU (Elfwing et al. 2017): x·σ(x). GELU, tanh approximation (Hendrycks & Gimpel 2016):
 * 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
 */
import { F16_TABLE, f32ToF16 } from '../../format/dtypes.js';

const SQRT_2_OVER_PI = 0.7978845608028654;
const GELU_COEF_A = 0.044715;

/** x·σ(x). */
export function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

/** tanh-approximated GELU, exact in double precision. */
export function gelu(x: number): number {
  return 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * x * (1 + GELU_COEF_A * x * x)));
}

let geluTable: Float32Array | null = null;

/**
 * GELU as ggml's CPU kernel computes it: a lookup table indexed by the F16 bits of x holding
 * f16(gelu(x)), used for −10 < x < 10; 0 below, identity above. Matches llama.cpp to ~1e-6
 * where exact GELU differs by up to ~1e-3.
 */
export function geluF16(x: number): number {
  if (x <= -10) return 0;
  if (x >= 10) return x;
  if (!geluTable) {
    geluTable = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) {
      const v = Math.fround(F16_TABLE[h]!);
      geluTable[h] = F16_TABLE[f32ToF16(Math.fround(gelu(v)))]!;
    }
  }
  return geluTable[f32ToF16(x)]!;
}

/** In-place softmax of x[off..off+n) (max-subtracted for stability). */
export function softmax(x: Float32Array, off: number, n: number): void {
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (x[off + i]! > max) max = x[off + i]!;
  let sum = 0;
  for (let i = 0; i < n; i++) { const e = Math.exp(x[off + i]! - max); x[off + i] = e; sum += e; }
  const inv = 1 / sum;
  for (let i = 0; i < n; i++) x[off + i] = x[off + i]! * inv;
}

/** x ← cap·tanh(x / cap) over n values (Gemma 2 logit soft-capping). */
export function softcap(x: Float32Array, off: number, n: number, cap: number): void {
  for (let i = 0; i < n; i++) x[off + i] = cap * Math.tanh(x[off + i]! / cap);
}
