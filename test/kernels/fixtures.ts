/** Seeded random inputs and an independent f64 reference for the kernel tests. */
import assert from 'node:assert/strict';
import { createRng, type Rng } from '../../src/decode/rng.ts';
import { F16_TABLE, GGMLType, bf16ToF32, blockLayout, f32ToBf16, f32ToF16 } from '../../src/format/dtypes.ts';
import { dequantizeRow } from '../../src/model/kernels/quant/dequantize.ts';

export { createRng };
export type { Rng };

/** n uniform values in [−a, a). */
export function randF32(rng: Rng, n: number, a = 1): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rng.next() * 2 - 1) * a;
  return out;
}

/** Byte offsets of the f16 scale fields inside one block, and a sane range for each. */
const SCALE_FIELDS: Partial<Record<GGMLType, number[]>> = {
  [GGMLType.Q4_0]: [0], [GGMLType.Q4_1]: [0, 2], [GGMLType.Q5_0]: [0], [GGMLType.Q5_1]: [0, 2],
  [GGMLType.Q8_0]: [0], [GGMLType.Q2_K]: [80, 82], [GGMLType.Q3_K]: [108],
  [GGMLType.Q4_K]: [0, 2], [GGMLType.Q5_K]: [0, 2], [GGMLType.Q6_K]: [208],
};

/**
 * A random nOut × nIn weight of `type` in its stored format. Quantized: random bytes (every bit
 * pattern of the quants/scales is a valid block) with the f16 scale fields set to values in ±[0.001, 0.05).
 */
export function randWeight(rng: Rng, type: GGMLType, nIn: number, nOut: number): { type: GGMLType; data: ArrayBufferView } {
  const n = nIn * nOut;
  if (type === GGMLType.F32) return { type, data: randF32(rng, n) };
  if (type === GGMLType.F16 || type === GGMLType.BF16) {
    const d = new Uint16Array(n);
    for (let i = 0; i < n; i++) { const v = rng.next() * 2 - 1; d[i] = type === GGMLType.F16 ? f32ToF16(v) : f32ToBf16(v); }
    return { type, data: d };
  }
  const { blockElems, blockBytes } = blockLayout(type);
  const nb = n / blockElems;
  const bytes = new Uint8Array(nb * blockBytes);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rng.next() * 256);
  for (let b = 0; b < nb; b++) {
    for (const off of SCALE_FIELDS[type]!) {
      const h = f32ToF16((rng.next() < 0.5 ? -1 : 1) * (0.001 + rng.next() * 0.049));
      bytes[b * blockBytes + off] = h & 0xff; bytes[b * blockBytes + off + 1] = h >> 8;
    }
  }
  return { type, data: bytes };
}

/** Weight → f32 rows (reference decoding: F16 table, bf16 bits, or the reference dequantizer). */
export function weightToF32(w: { type: GGMLType; data: ArrayBufferView }, nIn: number, nOut: number): Float32Array {
  const out = new Float32Array(nIn * nOut);
  if (w.type === GGMLType.F32) out.set(w.data as Float32Array);
  else if (w.type === GGMLType.F16) (w.data as Uint16Array).forEach((h, i) => { out[i] = F16_TABLE[h]!; });
  else if (w.type === GGMLType.BF16) (w.data as Uint16Array).forEach((h, i) => { out[i] = bf16ToF32(h); });
  else dequantizeRow(w.type, w.data as Uint8Array, 0, out, 0, nIn * nOut);
  return out;
}

/** f64 reference matmul; also returns Σ|w·x| per output, the scale of its rounding error. */
export function refMatmul(wf: Float32Array, x: Float32Array, nIn: number, nOut: number, nTok: number): { y: Float64Array; mag: Float64Array } {
  const y = new Float64Array(nOut * nTok), mag = new Float64Array(nOut * nTok);
  for (let t = 0; t < nTok; t++) {
    for (let o = 0; o < nOut; o++) {
      let s = 0, m = 0;
      for (let i = 0; i < nIn; i++) { const p = wf[o * nIn + i]! * x[t * nIn + i]!; s += p; m += Math.abs(p); }
      y[t * nOut + o] = s; mag[t * nOut + o] = m;
    }
  }
  return { y, mag };
}

/**
 * Error bound of the int8-activation path for output (t, o). Each activation is rounded to the
 * nearest multiple of d_b = amax_b/127 of its 32-block, an error ≤ d_b/2, so the dot product moves
 * by at most Σ_i |w_i|·amax_b(i)/254. On top: f32 rounding of the per-block sums and scale
 * products, relative to Σ|w_i·x_i| plus the block offset terms (Q4_0/Q5_0 subtract 8·d or 16·d
 * via block sums), bounded by 4e-6·Σ_i (|w_i| + max_block|w|)·|x_i|.
 */
export function int8Bound(wf: Float32Array, x: Float32Array, nIn: number, o: number, t: number): number {
  let q = 0, f = 0;
  for (let b = 0; b < nIn; b += 32) {
    let amax = 0, wmax = 0;
    for (let i = b; i < b + 32; i++) { amax = Math.max(amax, Math.abs(x[t * nIn + i]!)); wmax = Math.max(wmax, Math.abs(wf[o * nIn + i]!)); }
    for (let i = b; i < b + 32; i++) {
      const w = Math.abs(wf[o * nIn + i]!);
      q += w * amax / 254;
      f += (w + 2 * wmax) * Math.abs(x[t * nIn + i]!);
    }
  }
  return q * (1 + 1e-6) + 4e-6 * f;
}

/** Relative to Σ|w·x|: f32 accumulation of ≤ 1024 products stays far below this. */
export const REL_TOL = 2e-6 * 8;

/** The matmul all fixtures' backends share (WasmBackend.matmul's signature). */
type MatmulOf<W> = (out: Float32Array, w: W, x: Float32Array, nIn: number, nOut: number, nTok: number) => void;

/**
 * Assert that nTok tokens computed in one call (prefill) give, token by token, the same bits as
 * each token computed alone (decode).
 */
export function assertPrefillEqualsDecode<W>(matmul: MatmulOf<W>, w: W, x: Float32Array, nIn: number, nOut: number, nTok: number, what: string): void {
  const all = new Float32Array(nOut * nTok);
  matmul(all, w, x, nIn, nOut, nTok);
  for (let t = 0; t < nTok; t++) {
    const alone = new Float32Array(nOut);
    matmul(alone, w, x.subarray(t * nIn, (t + 1) * nIn), nIn, nOut, 1);
    assert.deepEqual(alone, all.subarray(t * nOut, (t + 1) * nOut), `${what}: token ${t}`);
  }
}
