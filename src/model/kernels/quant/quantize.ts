/**
 * Reference row quantizers, bit-exact with ggml's `quantize_row_q8_0_ref` / `quantize_row_q4_0_ref`
 * (ggml-quants.c): every intermediate is rounded to f32 as C does, and halves round away from zero
 * (C's roundf), so files we write match llama-quantize's output for the same tensor.
 *  Q8_0: per 32 values, d = max|x| / 127, q = roundf(x / d) ∈ [−127, 127]; stored d is f16.
 *  Q4_0: per 32 values, m = the value of largest magnitude (the first on ties, with its sign),
 *        d = m / −8, q = min(15, (int8)(x / d + 8.5)) ∈ [0, 15]; decodes as d·(q − 8).
 *  Q5_0: the same with 5 bits: d = m / −16, q = min(31, (int8)(x / d + 16.5)); decodes as d·(q − 16)
 *        (llama.cpp's fallback for Q4_K rows that are not whole 256-value super-blocks).
 * Output bytes follow the layouts in dequantize.ts. n must be a multiple of 32.
 */
import { InvalidOptionError } from '../../../errors.js';
import { F16_TABLE, f32ToF16 } from '../../../format/dtypes.js';

const fround = Math.fround;

function check(n: number): void {
  if (n % 32 !== 0) throw new InvalidOptionError(`quantization needs a multiple of 32 values, got ${n}`);
}

/** C's roundf: halves away from zero (Math.round sends -2.5 to -2). */
function roundf(v: number): number {
  return v < 0 ? -Math.round(-v) : Math.round(v);
}

/** x[0..n) → Q8_0 blocks (34 bytes per 32 values). */
export function quantizeQ8_0(x: ArrayLike<number>, n: number = x.length): Uint8Array {
  check(n);
  const out = new Uint8Array((n / 32) * 34);
  for (let b = 0; b < n / 32; b++) {
    const x0 = b * 32, p = b * 34;
    let amax = 0;
    for (let j = 0; j < 32; j++) { const a = Math.abs(x[x0 + j]!); if (a > amax) amax = a; }
    const d = fround(amax / 127);
    const id = d !== 0 ? fround(1 / d) : 0;
    const hb = f32ToF16(d);
    out[p] = hb & 0xff; out[p + 1] = hb >> 8;
    for (let j = 0; j < 32; j++) out[p + 2 + j] = roundf(fround(x[x0 + j]! * id)) & 0xff;
  }
  return out;
}

/** x[0..n) → Q4_0 blocks (18 bytes per 32 values). */
export function quantizeQ4_0(x: ArrayLike<number>, n: number = x.length): Uint8Array {
  check(n);
  const out = new Uint8Array((n / 32) * 18);
  for (let b = 0; b < n / 32; b++) {
    const x0 = b * 32, p = b * 18;
    let amax = 0, mx = 0;
    for (let j = 0; j < 32; j++) { const v = x[x0 + j]!; if (amax < Math.abs(v)) { amax = Math.abs(v); mx = v; } }
    const d = fround(mx / -8);
    const id = d !== 0 ? fround(1 / d) : 0;
    const hb = f32ToF16(d);
    out[p] = hb & 0xff; out[p + 1] = hb >> 8;
    for (let j = 0; j < 16; j++) {
      // (int8_t)(x + 8.5f) truncates; the argument is ≥ 0.5 so truncation is floor.
      const q0 = Math.min(15, Math.trunc(fround(fround(x[x0 + j]! * id) + 8.5)));
      const q1 = Math.min(15, Math.trunc(fround(fround(x[x0 + 16 + j]! * id) + 8.5)));
      out[p + 2 + j] = q0 | (q1 << 4);
    }
  }
  return out;
}

/** x[0..n) → Q5_0 blocks (22 bytes per 32 values: f16 d, u32 of fifth bits, 16 nibble bytes). */
export function quantizeQ5_0(x: ArrayLike<number>, n: number = x.length): Uint8Array {
  check(n);
  const out = new Uint8Array((n / 32) * 22);
  for (let b = 0; b < n / 32; b++) {
    const x0 = b * 32, p = b * 22;
    let amax = 0, mx = 0;
    for (let j = 0; j < 32; j++) { const v = x[x0 + j]!; if (amax < Math.abs(v)) { amax = Math.abs(v); mx = v; } }
    const d = fround(mx / -16);
    const id = d !== 0 ? fround(1 / d) : 0;
    const hb = f32ToF16(d);
    out[p] = hb & 0xff; out[p + 1] = hb >> 8;
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      // (int8_t)(x + 16.5f) truncates; the argument is ≥ 0.5 so truncation is floor.
      const q0 = Math.min(31, Math.trunc(fround(fround(x[x0 + j]! * id) + 16.5)));
      const q1 = Math.min(31, Math.trunc(fround(fround(x[x0 + 16 + j]! * id) + 16.5)));
      out[p + 6 + j] = (q0 & 15) | ((q1 & 15) << 4);
      qh |= ((q0 >> 4) << j) | ((q1 >> 4) << (j + 16));
    }
    out[p + 2] = qh & 0xff; out[p + 3] = (qh >>> 8) & 0xff; out[p + 4] = (qh >>> 16) & 0xff; out[p + 5] = qh >>> 24;
  }
  return out;
}

/** The f16-rounded block scale actually stored (exposed for error-bound tests). */
export function storedScale(bytes: Uint8Array, blockOffset: number): number {
  return F16_TABLE[bytes[blockOffset]! | (bytes[blockOffset + 1]! << 8)]!;
}
