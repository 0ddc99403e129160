/**
 * Reference quantizers (round to nearest, as ggml's quantize_row_*_ref):
 *  Q8_0: per 32 values, d = max|x| / 127, q = round(x / d) ∈ [−127, 127]; stored d is f16.
 *  Q4_0: per 32 values, m = the value of largest magnitude (with its sign), d = m / −8,
 *        q = min(15, trunc(x / d + 8.5)) ∈ [0, 15]; decodes as d·(q − 8).
 * Output bytes follow the layouts in dequantize.ts. n must be a multiple of 32.
 */
import { InvalidOptionError } from '../../../errors.js';
import { F16_TABLE, f32ToF16 } from '../../../format/dtypes.js';

function check(n: number): void {
  if (n % 32 !== 0) throw new InvalidOptionError(`quantization needs a multiple of 32 values, got ${n}`);
}

/** x[0..n) → Q8_0 blocks (34 bytes per 32 values). */
export function quantizeQ8_0(x: ArrayLike<number>, n: number = x.length): Uint8Array {
  check(n);
  const out = new Uint8Array((n / 32) * 34);
  for (let b = 0; b < n / 32; b++) {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[b * 32 + j]!));
    const d = amax / 127;
    const id = d ? 1 / d : 0;
    const hb = f32ToF16(d);
    const p = b * 34;
    out[p] = hb & 0xff; out[p + 1] = hb >> 8;
    for (let j = 0; j < 32; j++) out[p + 2 + j] = Math.round(x[b * 32 + j]! * id) & 0xff;
  }
  return out;
}

/** x[0..n) → Q4_0 blocks (18 bytes per 32 values). */
export function quantizeQ4_0(x: ArrayLike<number>, n: number = x.length): Uint8Array {
  check(n);
  const out = new Uint8Array((n / 32) * 18);
  for (let b = 0; b < n / 32; b++) {
    let amax = 0, mx = 0;
    for (let j = 0; j < 32; j++) {
      const v = x[b * 32 + j]!;
      if (Math.abs(v) > amax) { amax = Math.abs(v); mx = v; }
    }
    const d = mx / -8;
    const id = d ? 1 / d : 0;
    const hb = f32ToF16(d);
    const p = b * 18;
    out[p] = hb & 0xff; out[p + 1] = hb >> 8;
    for (let j = 0; j < 16; j++) {
      const q0 = Math.min(15, Math.trunc(x[b * 32 + j]! * id + 8.5));
      const q1 = Math.min(15, Math.trunc(x[b * 32 + 16 + j]! * id + 8.5));
      out[p + 2 + j] = q0 | (q1 << 4);
    }
  }
  return out;
}

/** The f16-rounded block scale actually stored (exposed for error-bound tests). */
export function storedScale(bytes: Uint8Array, blockOffset: number): number {
  return F16_TABLE[bytes[blockOffset]! | (bytes[blockOffset + 1]! << 8)]!;
}
