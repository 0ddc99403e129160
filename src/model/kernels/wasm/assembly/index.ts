// Entry point of the tokenloop kernel module. Memory is imported (shared, so worker threads run the
// same code on the same bytes); the host owns all allocation above heapBase().
import { F16, dequantRow, dotF32, dotHalfScaled, dotRow, rowBytes } from './rows';
import { sum32 } from './simd';
import { dotRowQ, dotRowQx4, hasIntDot } from './q8';
import { Q4_0, Q8_0 } from './rows';
export { rowBytes, dotRow, dequantRow, scaleHalfX } from './rows';
export { quantizeBlocks, dotRowQ, hasIntDot } from './q8';
export { rmsnorm, softmax, swiglu, gelu, rope, attention, add } from './ops';

/** First byte the host may use (end of this module's static data). */
export function heapBase(): usize {
  return __heap_base;
}

/** Tokens per tile in the prefill matmul: their x rows (≤ 32·nIn·4 bytes) stay cache-resident. */
const TILE: i32 = 32;
/** Tokens per tile of the int8 prefill: their quantized rows (≤ 16·nIn·2 bytes) stay in L1/L2. */
const QTILE: i32 = 16;

/**
 * out (nTok × nOut) = x (nTok × nIn) · Wᵀ for rows [r0, r1) of W (type `type`, nOut rows of nIn).
 * F16, one token, xq ≠ 0: xq holds x·2^112 (scaleHalfX), see dotHalfScaled.
 * Block-quantized types with xq ≠ 0: integer dots against the activations quantized by
 * quantizeBlocks (xq: nTok·nIn i16, xd: nTok·nIn/32 pairs of f32), each weight row read once per tile of
 * TILE tokens. Other types, one token: fused dequantize+dot per row. Several: each row is
 * dequantized once per tile into `scratch` (nIn f32) and dotted with every token of the tile.
 * `xs`: Σx per 32-element block per token ((nTok, nIn/32) f32) for formats with a min term.
 */
export function matmul(type: i32, out: usize, w: usize, x: usize, xs: usize, xq: usize, xd: usize, nIn: i32, nOut: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  const rb = rowBytes(type, nIn);
  const xb = <usize>nIn << 2;
  if (xq != 0 && hasIntDot(type)) {
    const qb = <usize>nIn << 1, db = <usize>(nIn >> 5) << 2, dd = db << 1;
    for (let t0 = 0; t0 < nTok; t0 += QTILE) {
      const t1 = min(nTok, t0 + QTILE);
      for (let r = r0; r < r1; r++) {
        const row = w + <usize>r * rb;
        let t = t0;
        if (type == Q8_0 || type == Q4_0) {
          for (; t + 4 <= t1; t += 4) {
            const tu = <usize>t;
            dotRowQx4(type, row, xq + tu * qb, xd + tu * dd, qb, dd, nIn, out + ((tu * <usize>nOut + <usize>r) << 2), <usize>nOut << 2);
          }
        }
        for (; t < t1; t++) {
          const tu = <usize>t;
          const o = out + ((tu * <usize>nOut + <usize>r) << 2);
          store<f32>(o, dotRowQ(type, row, xq + tu * qb, xd + tu * dd, xs + tu * db, nIn, o));
        }
      }
    }
    return;
  }
  if (nTok == 1 && type == F16 && xq != 0) {
    // xq: x·2^112 (scaleHalfX)
    for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dotHalfScaled(w + <usize>r * rb, xq, nIn));
    return;
  }
  if (nTok == 1) {
    for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dotRow(type, w + <usize>r * rb, x, xs, nIn));
    return;
  }
  for (let t0 = 0; t0 < nTok; t0 += TILE) {
    const t1 = min(nTok, t0 + TILE);
    for (let r = r0; r < r1; r++) {
      let row = w + <usize>r * rb;
      if (type != 0) { dequantRow(type, row, scratch, nIn); row = scratch; }
      for (let t = t0; t < t1; t++) {
        store<f32>(out + ((<usize>t * <usize>nOut + <usize>r) << 2), dotF32(row, x + <usize>t * xb, nIn));
      }
    }
  }
}

/** xs[t·(n/32) + b] = Σ x[t·n + 32b .. 32b+31] for nTok tokens of n values (n a multiple of 32). */
export function blockSums(xs: usize, x: usize, n: i32, nTok: i32): void {
  const nb = n >> 5;
  for (let t = 0; t < nTok; t++) {
    for (let b = 0; b < nb; b++) {
      const s = sum32(x + ((<usize>(t * n + (b << 5))) << 2));
      store<f32>(xs + (<usize>(t * nb + b) << 2), (f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1)) + (f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3)));
    }
  }
}
