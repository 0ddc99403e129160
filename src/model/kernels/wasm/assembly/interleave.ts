// The row-interleaved weight layout of rows4.ts: each group of four rows stored chunk by chunk.
// interleaveRows rearranges a matrix in place once (at model load); gatherRow copies one row of a
// group back into GGUF order (for the prefill kernels, which read one row against many tokens).
// Inside a grouped f16 (or bf16) chunk the halves are also paired: each 8 halves h0..h7 are stored as
// h0 h4 h1 h5 h2 h6 h3 h7, so 32-bit lane j holds h_j (low) and h_{j+4} (high) and the decode
// kernel widens each with one instruction and a mask (rows4.ts rows4Half, rows4BF16) instead of a
// load-and-extend plus a shift per four values. Every half keeps its encoding; only the order changes.
// A grouped Q4_0 or Q8_0 block is transposed as well (4·cb bytes: the four rows' f16 scales, then
// vectors whose 32-bit lane j holds quant bytes 4k..4k+3 of row j: four for Q4_0, eight for Q8_0),
// so that the decode kernels (rows4.ts rows4Q4_0, rows4Q8_0) keep each row in its own lane and
// load the four scales at once. Every scale and quant byte keeps its encoding.
import { BF16, F16, F32, Q4_0, Q4_K, Q5_K, Q8_0 } from './rows';

/**
 * Bytes of one interleaving chunk for `type` with rows of n values: one quant block (Q8_0: 34,
 * Q4_0: 18, Q4_K/Q5_K: one 144/176-byte super-block) or 16 values (f32: 64, f16 and bf16: 32). 0: the type or row length is not interleaved.
 */
export function chunkBytes(type: i32, n: i32): usize {
  if (type == Q8_0 && (n & 31) == 0) return 34;
  if (type == Q4_0 && (n & 31) == 0) return 18;
  if (type == Q4_K && (n & 255) == 0) return 144;
  if (type == Q5_K && (n & 255) == 0) return 176;
  if (type == F32 && (n & 15) == 0) return 64;
  if ((type == F16 || type == BF16) && (n & 15) == 0) return 32;
  return 0;
}

/** Copy one chunk of cb bytes (a chunkBytes value) from src to dst (non-overlapping). */
// @ts-ignore: decorator
@inline function copyChunk(dst: usize, src: usize, cb: usize): void {
  if (cb == 64) {
    v128.store(dst, v128.load(src)); v128.store(dst, v128.load(src, 16), 16);
    v128.store(dst, v128.load(src, 32), 32); v128.store(dst, v128.load(src, 48), 48);
  } else if (cb == 32) {
    v128.store(dst, v128.load(src)); v128.store(dst, v128.load(src, 16), 16);
  } else if (cb == 144 || cb == 176) {
    for (let o: usize = 0; o < cb; o += 16) v128.store(dst + o, v128.load(src + o));
  } else if (cb == 34) {
    v128.store(dst, v128.load(src)); v128.store(dst, v128.load(src, 16), 16);
    store<u16>(dst, load<u16>(src, 32), 32);
  } else {
    v128.store(dst, v128.load(src)); store<u16>(dst, load<u16>(src, 16), 16);
  }
}

/**
 * Rearrange rows [0, 4·⌊nOut/4⌋) of the matrix at w (rows of rb bytes, chunks of cb) into the
 * interleaved layout, in place; the last nOut mod 4 rows stay as they are. tmp: 4·rb scratch bytes.
 */
export function interleaveRows(w: usize, rb: usize, cb: usize, nOut: i32, tmp: usize): void {
  const nc = rb / cb;
  for (let g = 0; g + 4 <= nOut; g += 4) {
    const base = w + <usize>g * rb;
    memory.copy(tmp, base, rb << 2);
    if (transposed(cb)) {
      for (let c: usize = 0; c < nc; c++) {
        const d = base + (c << 2) * cb;
        for (let j: usize = 0; j < 4; j++) {
          const src = tmp + j * rb + c * cb;
          store<u16>(d + (j << 1), load<u16>(src));
          for (let k: usize = 0; k < (cb - 2) >> 2; k++) store<u32>(d + 8 + (k << 4) + (j << 2), load<u32>(src + 2 + (k << 2)));
        }
      }
      continue;
    }
    for (let c: usize = 0; c < nc; c++) {
      const d = base + (c << 2) * cb;
      copyChunk(d, tmp + c * cb, cb);
      copyChunk(d + cb, tmp + rb + c * cb, cb);
      copyChunk(d + 2 * cb, tmp + 2 * rb + c * cb, cb);
      copyChunk(d + 3 * cb, tmp + 3 * rb + c * cb, cb);
    }
    if (cb == 32) for (let o: usize = 0; o < rb << 2; o += 16) v128.store(base + o, pairHalves(v128.load(base + o)));
  }
}

/** h0..h7 → h0 h4 h1 h5 h2 h6 h3 h7 (the f16/bf16 chunk order inside a group, see above). */
// @ts-ignore: decorator
@inline function pairHalves(v: v128): v128 {
  return v128.shuffle<u16>(v, v, 0, 4, 1, 5, 2, 6, 3, 7);
}

/** The inverse of pairHalves: back to GGUF order. */
// @ts-ignore: decorator
@inline export function unpairHalves(v: v128): v128 {
  return v128.shuffle<u16>(v, v, 0, 2, 4, 6, 1, 3, 5, 7);
}

/** Copy row j (0..3) of the interleaved group starting at `group` into dst in GGUF order. */
export function gatherRow(dst: usize, group: usize, j: i32, rb: usize, cb: usize): void {
  const nc = rb / cb;
  if (transposed(cb)) {
    for (let c: usize = 0; c < nc; c++) {
      const q = group + (c << 2) * cb, d = dst + c * cb;
      store<u16>(d, load<u16>(q + (<usize>j << 1)));
      for (let k: usize = 0; k < (cb - 2) >> 2; k++) store<u32>(d + 2 + (k << 2), load<u32>(q + 8 + (k << 4) + (<usize>j << 2)));
    }
    return;
  }
  const src = group + <usize>j * cb;
  if (cb == 32) {
    for (let c: usize = 0; c < nc; c++) {
      const s = src + (c << 2) * cb, d = dst + c * cb;
      v128.store(d, unpairHalves(v128.load(s))); v128.store(d, unpairHalves(v128.load(s, 16)), 16);
    }
    return;
  }
  for (let c: usize = 0; c < nc; c++) copyChunk(dst + c * cb, src + (c << 2) * cb, cb);
}

/** Whether groups of chunks of cb bytes are transposed block by block (Q4_0: 18, Q8_0: 34; see above). */
// @ts-ignore: decorator
@inline export function transposed(cb: usize): bool {
  return cb == 18 || cb == 34;
}

/**
 * Quant bytes 16h..16h + 15 of row j (GGUF order) of the transposed block at q (see above): lane k
 * of the result is lane j of vector 4h + k.
 */
// @ts-ignore: decorator
@inline export function groupQuants(q: usize, j: i32, h: usize): v128 {
  const p = q + 8 + (h << 6) + (<usize>j << 2);
  let v = v128.load32_zero(p);
  v = v128.load32_lane(p + 16, v, 1);
  v = v128.load32_lane(p + 32, v, 2);
  return v128.load32_lane(p + 48, v, 3);
}

/** Where row r starts: its first chunk inside an interleaved group (r < n4), else its GGUF-order row. */
// @ts-ignore: decorator
@inline export function rowIn(w: usize, r: i32, rb: usize, cb: usize, n4: i32): usize {
  return r < n4 ? w + <usize>(r & ~3) * rb + <usize>(r & 3) * cb : w + <usize>r * rb;
}

/** Bytes between consecutive chunks of row r: 4·cb inside an interleaved group, else `plain`. */
// @ts-ignore: decorator
@inline export function blockStride(r: i32, cb: usize, n4: i32, plain: usize): usize {
  return r < n4 ? cb << 2 : plain;
}
