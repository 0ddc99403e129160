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

/**
 * Q4_0/Q5_0 block scale: d = (the value of largest magnitude, the first on ties, with its sign) /
 * `div`, stored as f16 at out[p]; returns 1/d (0 for an all-zero block), rounded to f32 as in C.
 */
function signedScale(x: ArrayLike<number>, x0: number, div: number, out: Uint8Array, p: number): number {
  let amax = 0, mx = 0;
  for (let j = 0; j < 32; j++) { const v = x[x0 + j]!; if (amax < Math.abs(v)) { amax = Math.abs(v); mx = v; } }
  const d = fround(mx / div);
  const hb = f32ToF16(d);
  out[p] = hb & 0xff; out[p + 1] = hb >> 8;
  return d !== 0 ? fround(1 / d) : 0;
}

/** min(2·off − 1, (int8_t)(v·id + off + 0.5f)): the quant of v with offset `off` (Q4_0: 8, Q5_0: 16). */
function offsetQuant(v: number, id: number, off: number): number {
  // the argument is ≥ 0.5, so C's truncation is floor
  return Math.min(2 * off - 1, Math.trunc(fround(fround(v * id) + off + 0.5)));
}

/** x[0..n) → Q4_0 blocks (18 bytes per 32 values). */
export function quantizeQ4_0(x: ArrayLike<number>, n: number = x.length): Uint8Array {
  return quantizeOffset(x, n, false);
}

/** x[0..n) → Q5_0 blocks (22 bytes per 32 values: f16 d, u32 of fifth bits, 16 nibble bytes). */
export function quantizeQ5_0(x: ArrayLike<number>, n: number = x.length): Uint8Array {
  return quantizeOffset(x, n, true);
}

/**
 * Q4_0 (`five` false) or Q5_0: byte j of the quants holds element j's low four bits and element
 * j+16's in its high nibble; Q5_0's fifth bits go to a u32 after the scale (bit e for element e).
 */
function quantizeOffset(x: ArrayLike<number>, n: number, five: boolean): Uint8Array {
  check(n);
  const bb = five ? 22 : 18, off = five ? 16 : 8, qo = five ? 6 : 2;
  const out = new Uint8Array((n / 32) * bb);
  for (let b = 0; b < n / 32; b++) {
    const x0 = b * 32, p = b * bb;
    const id = signedScale(x, x0, -off, out, p);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      const q0 = offsetQuant(x[x0 + j]!, id, off), q1 = offsetQuant(x[x0 + 16 + j]!, id, off);
      out[p + qo + j] = (q0 & 15) | ((q1 & 15) << 4);
      qh |= ((q0 >> 4) << j) | ((q1 >> 4) << (j + 16));
    }
    if (five) { out[p + 2] = qh & 0xff; out[p + 3] = (qh >>> 8) & 0xff; out[p + 4] = (qh >>> 16) & 0xff; out[p + 5] = qh >>> 24; }
  }
  return out;
}

/** The f16-rounded block scale actually stored (exposed for error-bound tests). */
export function storedScale(bytes: Uint8Array, blockOffset: number): number {
  return F16_TABLE[bytes[blockOffset]! | (bytes[blockOffset + 1]! << 8)]!;
}
