// Entry point of the tokenloop kernel module. Memory is imported (shared, so worker threads run the
// same code on the same bytes); the host owns all allocation above heapBase().
import { BF16, F16, dequantRow, dotF32, dotHalfScaled, dotRow, rowBytes, scaleHalfX } from './rows';
import { hsum, madd, sum32 } from './simd';
import { compactInt8, dotQ2K, dotQ3K, dotQ4K, dotQ6Kd, dotQ6Kp, q6GroupSums, dotRowQ, hasIntDot, rowQ4Kx2r, rowQ5Kx2r, rowQ6Kx2r } from './q8';
import { F32, Q2_K, Q3_K, Q4_0, Q4_K, Q5_K, Q6_K, Q8_0 } from './rows';
import { dequantGroupHalf, group4x2F32, rows4BF16, rows4F32, rows4Half, rows4HalfChunks, rows4Q4K, rows4Q4KT, rows4Q4_0, rows4Q5K, rows4Q8_0 } from './rows4';
import { Q6_PACKED, bandGroup, bandGroup4x2, bandRows, bandRowsDot, bandValues, blockStride, chunkBytes, dequantBandGroup, gatherRow, gatherRowAt, groupedRows, rowIn, transposed, unpackRowQ6 } from './interleave';
import { quadRows } from './panel';
export { rowBytes, dotRow, dequantRow, scaleHalfX } from './rows';
export { quantizeBlocks, quantizeBlocksI8, compactInt8, dotRowQ, hasIntDot } from './q8';
export { rmsnorm, rmsnormRows, softmax, swiglu, gelu, rope, ropeRows, add } from './ops';
export { attention, attentionFold, attentionScratchBytes, attentionSegmentCount, attentionSegments, attentionWidenBytes, storeHalf, storeKV } from './attention';
export { chunkBytes, interleaveRows, interleaveTmpBytes, gatherRow, gatherRowAt, bandRows } from './interleave';
export { hasQuads, packQuads, quadBytes, quadScratchBytes, quantizeQuads, quantizeQuadsTmpBytes } from './panel';
export { poolPublish, poolWork, poolWorker } from './pool';

/**
 * matmul over several weights that share the input x, as if their rows were one matrix: rows
 * [r0, r1) of the concatenation, segment i being the 12 bytes at segs + 12·i (i32 weight pointer,
 * i32 output pointer, i32 row count). One dispatch for the query/key/value or gate/up products of a
 * decode step instead of one each: each op costs a wake-up, a barrier and a restart of every
 * thread's weight stream. Each row is computed by matmul's own code, so the bits equal separate calls.
 */
export function matmulSegments(typeFlags: i32, segs: usize, nSeg: i32, x: usize, xs: usize, xq: usize, xd: usize, nIn: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  for (let i = 0, base = 0; i < nSeg && base < r1; i++) {
    const s = segs + <usize>i * 12, n = load<i32>(s, 8);
    const lo = max(r0, base), hi = min(r1, base + n);
    if (lo < hi) matmul(typeFlags, <usize>load<i32>(s, 4), <usize>load<i32>(s), x, xs, xq, xd, nIn, n, nTok, lo - base, hi - base, scratch);
    base += n;
  }
}

/** Flag or-ed into matmul's `type`: the weight's row groups are interleaved (rows4.ts). */
const INTERLEAVED: i32 = 0x100;
/** Flag or-ed into matmul's `type`: xq holds quads (panel.ts quantizeQuads, packQuads), xd is unused. */
const QUADS: i32 = 0x200;

/** First byte the host may use (end of this module's static data). */
export function heapBase(): usize {
  return __heap_base;
}

/** Tokens per tile in the prefill matmul: their x rows (≤ 32·nIn·4 bytes) stay cache-resident. */
const TILE: i32 = 32;
/**
 * Bytes of x rows per tile of the f32/f16/bf16 group prefill (prefillGroups; at least TILE tokens):
 * each tile streams the whole matrix again, and an f16/bf16 group is converted once per tile.
 * Against tiles of 32 tokens (in-process A/B, 127 tokens, one thread): F32 768×2048 1.18×,
 * 2048×768 1.04–1.08×, 512 tokens 1.28×; F16 1.06–1.13×; two threads 1.02–1.07×; the same bits.
 */
const GROUP_TILE_BYTES: usize = 512 << 10;
/** Tokens per tile of the int8 prefill: their quantized rows (≤ 16·nIn·2 bytes) stay in L1/L2. */
const QTILE: i32 = 16;

/**
 * out (nTok × nOut) = x (nTok × nIn) · Wᵀ for rows [r0, r1) of W (type `type`, nOut rows of nIn).
 * F16, one token, xq ≠ 0: xq holds x·2^112 (scaleHalfX), see dotHalfScaled.
 * Block-quantized types with xq ≠ 0: integer dots against the activations quantized by
 * quantizeBlocks (xq: nTok·nIn i16, xd: nTok·nIn/32 pairs of f32), each weight row read once per tile of
 * QTILE tokens; with the QUADS flag (prefill of Q8_0, Q4_0 and the K-quants, 8+ tokens) xq holds
 * the interleaved form of panel.ts. Other types, one token: fused dequantize+dot per row. Several: each row is
 * dequantized once per tile into `scratch` (nIn f32) and dotted with every token of the tile.
 * `xs`: Σx per 32-element block per token ((nTok, nIn/32) f32) for formats with a min term.
 * `typeFlags`: the GGML type, | INTERLEAVED when the matrix was rearranged by interleaveRows:
 * decode then runs the four-row kernels of rows4.ts (a packed Q6_K matrix: dotQ6Kp row by row,
 * and the prefill panels read its packed rows); other paths read each row through a copy in GGUF
 * order (gatherRow, unpackRowQ6, into `scratch` after the nIn f32 of the dequantized row).
 */
export function matmul(typeFlags: i32, out: usize, w: usize, x: usize, xs: usize, xq: usize, xd: usize, nIn: i32, nOut: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  const type = typeFlags & 0xff;
  const rb = rowBytes(type, nIn);
  const xb = <usize>nIn << 2;
  const cb = (typeFlags & INTERLEAVED) != 0 ? chunkBytes(type, nIn) : 0;
  const n4 = groupedRows(cb, nOut), gbuf = scratch + xb;
  if ((typeFlags & QUADS) != 0) {
    // xq: the activations interleaved four tokens at a time (panel.ts quantizeQuads), whatever the
    // token count (a host threshold of one token asks for quads for a single token too; the
    // decode kernels below would read that form as one token's blocks)
    quadRows(type, out, w, rb, cb, n4, xq, nIn, nOut, nTok, r0, r1, scratch);
    return;
  }
  if (cb != 0 && cb != Q6_PACKED && nTok == 1 && decodeInterleaved(type, cb, out, w, rb, x, xs, xq, xd, nIn, nOut, r0, r1, scratch)) return;
  if (nTok == 1 && xq != 0 && (cb == 0 || cb == Q6_PACKED) && (type == Q2_K || type == Q3_K || type == Q4_K || type == Q5_K || type == Q6_K)) {
    // K-quant decode: the row kernel called straight from a loop per type (through dotRowQ and the
    // general loop below, the per-row overhead was a tenth of the decode time)
    if (type == Q4_K) for (let r = r0; r < r1; r++) { const o = out + (<usize>r << 2); store<f32>(o, dotQ4K(false, w + <usize>r * rb, xq, xd, xs, nIn, o)); }
    else if (type == Q5_K) for (let r = r0; r < r1; r++) { const o = out + (<usize>r << 2); store<f32>(o, dotQ4K(true, w + <usize>r * rb, xq, xd, xs, nIn, o)); }
    else if (ASC_FEATURE_RELAXED_SIMD && (type == Q2_K || type == Q3_K)) {
      // Σx per 16-value group (Q2_K's min term, Q3_K's −4 offset), once for all rows
      q6GroupSums(scratch, xq, nIn);
      if (type == Q2_K) for (let r = r0; r < r1; r++) { const o = out + (<usize>r << 2); store<f32>(o, dotQ2K(w + <usize>r * rb, xq, xd, scratch, nIn, o)); }
      else for (let r = r0; r < r1; r++) { const o = out + (<usize>r << 2); store<f32>(o, dotQ3K(w + <usize>r * rb, xq, xd, scratch, nIn, o)); }
    } else {
      // 32·Σx per 16-value group once for all rows (dotQ6Kd), in this thread's scratch
      if (ASC_FEATURE_RELAXED_SIMD) q6GroupSums(scratch, xq, nIn);
      if (cb == Q6_PACKED) for (let r = r0; r < r1; r++) { const o = out + (<usize>r << 2); store<f32>(o, dotQ6Kp(w + <usize>r * rb, xq, xd, scratch, nIn, o)); }
      else for (let r = r0; r < r1; r++) { const o = out + (<usize>r << 2); store<f32>(o, dotQ6Kd(w + <usize>r * rb, xq, xd, scratch, nIn, o)); }
    }
    return;
  }
  if (cb != 0 && transposed(cb) && xq != 0) {
    // a few tokens (no quads) over transposed groups (Q4_0, Q8_0, relaxed Q4_K): the decode kernel
    // per token while the group is in cache, instead of gathering each row into GGUF order for the
    // one-row kernels (Q4_K: those made these matmuls 10–20% slower than before its layout was
    // transposed; now 1.4–1.5× as fast)
    const qb = compactInt8(type) ? <usize>nIn : <usize>nIn << 1, dd = <usize>(nIn >> 5) << 3, db = <usize>(nIn >> 5) << 2, os = <usize>nOut << 2;
    let r = r0;
    while (r < r1) {
      if ((r & 3) == 0 && r + 4 <= min(r1, n4)) {
        for (let t = 0; t < nTok; t++) {
          const tu = <usize>t, o = out + tu * os + (<usize>r << 2);
          v128.store(o, rows4T(type, w + <usize>r * rb, xq + tu * qb, xd + tu * dd, xs + tu * db, nIn, scratch + 64, o));
        }
        r += 4;
      } else {
        const e = r < n4 ? min(r1, (r & ~3) + 4) : r + 1;
        for (let t = 0; t < nTok; t++) {
          const tu = <usize>t;
          decodeInterleaved(type, cb, out + tu * os, w, rb, x, xs + tu * db, xq + tu * qb, xd + tu * dd, nIn, nOut, r, e, scratch);
        }
        r = e;
      }
    }
    return;
  }
  if (ASC_FEATURE_RELAXED_SIMD && xq != 0 && compactInt8(type)) {
    // i8 activations (quantizeBlocksI8): nIn bytes per token; 2-token kernels for the K-quants
    const qb = <usize>nIn, dd = <usize>(nIn >> 5) << 3, db = <usize>(nIn >> 5) << 2;
    for (let t0 = 0; t0 < nTok; t0 += QTILE) {
      const t1 = min(nTok, t0 + QTILE);
      for (let r = r0; r < r1; r++) {
        let t = t0;
        const row = rowAt(w, r, rb, cb, n4, gbuf);
        if (type == Q4_K || type == Q5_K || type == Q6_K) {
          for (; t + 2 <= t1; t += 2) {
            const tu = <usize>t;
            rowKx2(type, row, xq + tu * qb, xd + tu * dd, xs + tu * db, qb, dd, db, nIn, out + ((tu * <usize>nOut + <usize>r) << 2), <usize>nOut << 2);
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
  if (xq != 0 && hasIntDot(type)) {
    const qb = <usize>nIn << 1, db = <usize>(nIn >> 5) << 2, dd = db << 1;
    for (let t0 = 0; t0 < nTok; t0 += QTILE) {
      const t1 = min(nTok, t0 + QTILE);
      for (let r = r0; r < r1; r++) {
        const row = rowAt(w, r, rb, cb, n4, gbuf);
        for (let t = t0; t < t1; t++) {
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
    for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dotHalfScaled(rowAt(w, r, rb, cb, n4, gbuf), xq, nIn));
    return;
  }
  if (nTok == 1) {
    for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dotRow(type, rowAt(w, r, rb, cb, n4, gbuf), x, xs, nIn));
    return;
  }
  if (cb != 0 && (type == F32 || type == F16 || type == BF16)) {
    // whole interleaved groups inside [r0, r1): 4-row × 2-token register tiles (rows4.ts)
    const g0 = min((r0 + 3) & ~3, r1), g1 = max(g0, min(r1, n4) & ~3);
    prefillGroups(type, out, w, x, rb, cb, nIn, nOut, nTok, g0, g1, scratch);
    prefillRows(type, out, w, x, rb, cb, n4, gbuf, scratch, nIn, nOut, nTok, r0, g0);
    prefillRows(type, out, w, x, rb, cb, n4, gbuf, scratch, nIn, nOut, nTok, g1, r1);
    return;
  }
  prefillRows(type, out, w, x, rb, cb, n4, gbuf, scratch, nIn, nOut, nTok, r0, r1);
}

/**
 * Prefill of rows [g0, g1) (whole interleaved f32/f16/bf16 groups): per tile of tokens
 * (GROUP_TILE_BYTES of x), each group against token pairs with group4x2F32, an odd last token with
 * rows4F32 (relaxed f16: every token with rows4HalfChunks, decode's steps); f16/bf16 groups are first
 * converted into `scratch` by dequantGroupHalf (chunks in the group's order, each back in element
 * order; a banded one block by block, dequantBandGroup); a
 * banded f32 group (interleave.ts) takes the same steps block by block (bandGroup4x2, bandGroup).
 */
function prefillGroups(type: i32, out: usize, w: usize, x: usize, rb: usize, cb: usize, nIn: i32, nOut: i32, nTok: i32, g0: i32, g1: i32, scratch: usize): void {
  const xb = <usize>nIn << 2, os = <usize>nOut << 2, nb = bandRows(cb, nIn, nOut); // (0 unless f32/f16/bf16)
  const half = type == F16 || type == BF16;
  const tile = max(TILE, <i32>(GROUP_TILE_BYTES / xb) & ~1);
  for (let t0 = 0; t0 < nTok; t0 += tile) {
    const t1 = min(nTok, t0 + tile);
    for (let g = g0; g < g1; g += 4) {
      if (g < nb && !half) {
        // a banded group: the same tiles, block by block (interleave.ts)
        let t = t0;
        for (; t + 2 <= t1; t += 2) bandGroup4x2(w, g >> 2, rb, nIn, x + <usize>t * xb, xb, scratch, out + ((<usize>t * <usize>nOut + <usize>g) << 2), os);
        if (t < t1) bandGroup(F32, w, g >> 2, rb, nIn, x + <usize>t * xb, scratch, out + ((<usize>t * <usize>nOut + <usize>g) << 2));
        continue;
      }
      // a banded f16/bf16 group is converted block by block into the plain order
      if (half && g < nb) dequantBandGroup(type == BF16, w, g >> 2, rb, nIn, scratch);
      else if (half) dequantGroupHalf(type == BF16, w + <usize>g * rb, scratch, nIn << 2);
      const grp = half ? scratch : w + <usize>g * rb;
      let t = t0;
      if (type == F16 && ASC_FEATURE_RELAXED_SIMD) {
        // rows4Half's chunk sums token by token, so prefill has decode's bits (fenced on each token's output)
        for (; t < t1; t++) {
          const o = out + ((<usize>t * <usize>nOut + <usize>g) << 2);
          v128.store(o, rows4HalfChunks(grp, x + <usize>t * xb, nIn, o));
        }
        continue;
      }
      for (; t + 2 <= t1; t += 2) group4x2F32(grp, x + <usize>t * xb, xb, nIn, out + ((<usize>t * <usize>nOut + <usize>g) << 2), os);
      if (t < t1) {
        // fenced on its own output (written after): `scratch` holds an f16/bf16 group's converted values
        const o = out + ((<usize>t * <usize>nOut + <usize>g) << 2);
        v128.store(o, rows4F32(grp, 64, 256, x + <usize>t * xb, nIn, o));
      }
    }
  }
}

/** Prefill of rows [ra, rz) one row at a time (dequantized into `scratch` unless f32). */
function prefillRows(type: i32, out: usize, w: usize, x: usize, rb: usize, cb: usize, n4: i32, gbuf: usize, scratch: usize,
  nIn: i32, nOut: i32, nTok: i32, ra: i32, rz: i32): void {
  const xb = <usize>nIn << 2, nb = bandRows(cb, nIn, n4);
  for (let t0 = 0; t0 < nTok; t0 += TILE) {
    const t1 = min(nTok, t0 + TILE);
    for (let r = ra; r < rz; r++) {
      if (type == F32 && cb != 0 && r >= n4) {
        // a trailing row of an interleaved f32 matrix: the decode kernel's steps (rows4F32, lane 0)
        const row = w + <usize>r * rb;
        for (let t = t0; t < t1; t++) v128.store32_lane(out + ((<usize>t * <usize>nOut + <usize>r) << 2), rows4F32(row, 0, 64, x + <usize>t * xb, nIn, scratch), 0);
        continue;
      }
      if ((type == F16 || type == BF16) && cb != 0 && r >= n4) {
        // a trailing f16/bf16 row of an interleaved matrix: decode's steps per token (f16: against
        // x·2^112 in `scratch`, or the plain row kernel where decode could not scale x either)
        const row = w + <usize>r * rb;
        for (let t = t0; t < t1; t++) {
          const xt = x + <usize>t * xb, o = out + ((<usize>t * <usize>nOut + <usize>r) << 2);
          if (type == F16 && scaleHalfX(scratch, xt, nIn)) store<f32>(o, dotHalfScaled(row, scratch, nIn));
          else store<f32>(o, dotRow(type, row, xt, 0, nIn));
        }
        continue;
      }
      // f32 rows of an interleaved group are read in place (16-value chunks 256 bytes apart)
      let row: usize, cs: usize = 64;
      if (type == F32 && cb != 0 && r < n4 && r >= nb) { row = rowIn(w, r, rb, cb, n4); cs = 256; }
      else {
        row = rowAt(w, r, rb, cb, n4, gbuf);
        if (type != 0) { dequantRow(type, row, scratch, nIn); row = scratch; }
      }
      let t = t0;
      if ((nIn & 15) == 0) {
        for (; t + 4 <= t1; t += 4) {
          const o = out + ((<usize>t * <usize>nOut + <usize>r) << 2);
          dotF32x4(row, cs, x + <usize>t * xb, xb, nIn, o, <usize>nOut << 2);
        }
      }
      if (t < t1 && cs != 64) row = rowAt(w, r, rb, cb, n4, gbuf);
      for (; t < t1; t++) {
        store<f32>(out + ((<usize>t * <usize>nOut + <usize>r) << 2), dotF32(row, x + <usize>t * xb, nIn));
      }
    }
  }
}

/** The two-token prefill kernel of a K-quant type (relaxed build; Q6_K has no min term, so no xs). */
// @ts-ignore: decorator
@inline function rowKx2(type: i32, row: usize, xq: usize, xd: usize, xs: usize, qb: usize, dd: usize, db: usize, n: i32, out: usize, os: usize): void {
  if (type == Q4_K) rowQ4Kx2r(row, xq, xd, xs, qb, dd, db, n, out, os);
  else if (type == Q5_K) rowQ5Kx2r(row, xq, xd, xs, qb, dd, db, n, out, os);
  else rowQ6Kx2r(row, xq, xd, qb, dd, n, out, os);
}

/** Row r in GGUF order: in place, or (rows of interleaved groups, any packed Q6_K row) copied to gbuf (rb bytes; 4·rb more after them for a banded row). */
// @ts-ignore: decorator
@inline function rowAt(w: usize, r: i32, rb: usize, cb: usize, n4: i32, gbuf: usize): usize {
  if (cb == Q6_PACKED) { unpackRowQ6(gbuf, w + <usize>r * rb, rb); return gbuf; }
  if (r >= n4) return w + <usize>r * rb;
  // a banded row (f32/f16/bf16, interleave.ts): its group is copied to the 4·rb bytes after gbuf first
  const n = bandValues(rb, cb);
  if (r < bandRows(cb, n, n4)) gatherRowAt(gbuf, w, r, rb, cb, n, n4, gbuf + rb);
  else gatherRow(gbuf, w + <usize>(r & ~3) * rb, r & 3, rb, cb);
  return gbuf;
}

/**
 * One token against an interleaved matrix (rows4.ts): whole groups of four rows inside [r0, r1)
 * by the four-row kernels, other rows one at a time (rs = 0; rows of a group read with the
 * group's chunk stride, the trailing nOut mod 4 rows in GGUF order; banded f32/f16/bf16 rows by the band
 * kernels of interleave.ts). Returns false when the kernel needs quantized/scaled activations that
 * the caller did not prepare (xq = 0). Q4_K/Q5_K (rows4Q4K) park their scales in the first 256
 * bytes of this thread's `scratch`, banded rows their sums in the first 512 (80 for a cut group).
 */
function decodeInterleaved(type: i32, cb: usize, out: usize, w: usize, rb: usize, x: usize, xs: usize, xq: usize, xd: usize, nIn: i32, nOut: i32, r0: i32, r1: i32, scratch: usize): bool {
  if (type != F32 && type != BF16 && xq == 0) return false;
  const n4 = nOut & ~3, end = min(r1, n4);
  let r = r0;
  const nb = bandRows(cb, nIn, nOut); // (0 unless f32/f16/bf16)
  if (r < nb) {
    const xa = type == F16 ? xq : x; // f16: x·2^112
    // banded rows (interleave.ts): whole bands in storage order, then whole groups; a group cut by
    // [r0, r1) is computed whole into scratch + 64 and its rows taken from there
    const e = min(r1, nb);
    while (r < e) {
      if ((r & 31) == 0 && r + 32 <= e) {
        bandRowsDot(type, w, r >> 5, e >> 5, rb, nIn, xa, scratch, out);
        r = e & ~31;
      } else if ((r & 3) == 0 && r + 4 <= e) {
        bandGroup(type, w, r >> 2, rb, nIn, xa, scratch, out + (<usize>r << 2));
        r += 4;
      } else {
        bandGroup(type, w, r >> 2, rb, nIn, xa, scratch, scratch + 64);
        const g1 = min(e, (r & ~3) + 4);
        for (; r < g1; r++) store<f32>(out + (<usize>r << 2), load<f32>(scratch + 64 + (<usize>(r & 3) << 2)));
      }
    }
  }
  while (r < r1) {
    const o = out + (<usize>r << 2);
    if ((r & 3) == 0 && r + 4 <= end) {
      v128.store(o, transposed(cb) ? rows4T(type, w + <usize>r * rb, xq, xd, xs, nIn, scratch + 64, o) : rows4(type, w + <usize>r * rb, cb, cb << 2, x, xs, xq, xd, nIn, scratch, o));
      r += 4;
    } else if (transposed(cb)) {
      // Q4_0/Q8_0 (relaxed build: and Q4_K) groups are transposed (interleave.ts): a row of a group
      // cut by [r0, r1) takes its lane of the whole group's result (the same bits), a trailing row
      // the one-row kernel
      if (r < n4) {
        v128.store(scratch, rows4T(type, w + <usize>(r & ~3) * rb, xq, xd, xs, nIn, scratch + 64, scratch));
        const g1 = min(r1, (r & ~3) + 4);
        for (; r < g1; r++) store<f32>(out + (<usize>r << 2), load<f32>(scratch + (<usize>(r & 3) << 2)));
      } else {
        store<f32>(o, dotRowQ(type, w + <usize>r * rb, xq, xd, xs, nIn, o));
        r++;
      }
    } else if ((type == F16 || type == BF16) && r >= n4) {
      // a trailing f16/bf16 row is in GGUF order (rows4Half/rows4BF16 read paired halves)
      store<f32>(o, type == F16 ? dotHalfScaled(w + <usize>r * rb, xq, nIn) : dotRow(BF16, w + <usize>r * rb, x, 0, nIn));
      r++;
    } else {
      v128.store32_lane(o, rows4(type, rowIn(w, r, rb, cb, n4), 0, blockStride(r, cb, n4, cb), x, xs, xq, xd, nIn, scratch, o), 0);
      r++;
    }
  }
  return true;
}

/** The four rows of a transposed Q4_0, Q8_0 or (relaxed build) Q4_K group (interleave.ts; hs: 272 bytes of scratch for Q4_K, away from fence). */
// @ts-ignore: decorator
@inline function rows4T(type: i32, w: usize, xq: usize, xd: usize, xs: usize, nIn: i32, hs: usize, fence: usize): v128 {
  if (type == Q4_K) return rows4Q4KT(w, xq, xd, xs, nIn, hs, fence);
  return type == Q4_0 ? rows4Q4_0(w, xq, xd, nIn, fence) : rows4Q8_0(w, xq, xd, nIn, fence);
}

// @ts-ignore: decorator
@inline function rows4(type: i32, w: usize, rs: usize, cs: usize, x: usize, xs: usize, xq: usize, xd: usize, nIn: i32, scratch: usize, fence: usize): v128 {
  if (type == Q4_K) return rows4Q4K(w, rs, cs, xq, xd, xs, nIn, scratch, fence);
  if (type == Q5_K) return rows4Q5K(w, rs, cs, xq, xd, xs, nIn, scratch, fence);
  if (type == F32) return rows4F32(w, rs, cs, x, nIn, fence);
  if (type == BF16) return rows4BF16(w, rs, cs, x, nIn, fence);
  return rows4Half(w, rs, cs, xq, nIn, fence);
}

/**
 * Prefill: one f32 row w (n a multiple of 16, chunks of 16 values cs bytes apart: 64 in GGUF
 * order, 256 inside an interleaved group) against four tokens' activations (xs apart),
 * results at out + j·os. Each weight vector is loaded once for the four tokens; per token, groups
 * of 16 products are summed as in dotF32 and the groups accumulate in one f32x4 (llama.cpp's
 * precision) instead of f64. Stores between tokens keep TurboFan from hoisting every load to the
 * top of the loop (see q8.ts dotRowQ).
 */
function dotF32x4(w: usize, cs: usize, x: usize, xs: usize, n: i32, out: usize, os: usize): void {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const o = <usize>i << 2, c = w + <usize>(i >> 4) * cs;
    const w0 = v128.load(c), w1 = v128.load(c, 16), w2 = v128.load(c, 32), w3 = v128.load(c, 48);
    let p = x + o;
    a0 = f32x4.add(a0, group16(w0, w1, w2, w3, p));
    v128.store32_lane(out, a0, 0);
    p += xs; a1 = f32x4.add(a1, group16(w0, w1, w2, w3, p));
    v128.store32_lane(out, a1, 0);
    p += xs; a2 = f32x4.add(a2, group16(w0, w1, w2, w3, p));
    v128.store32_lane(out, a2, 0);
    p += xs; a3 = f32x4.add(a3, group16(w0, w1, w2, w3, p));
    v128.store32_lane(out, a3, 0);
  }
  store<f32>(out, hsum(a0)); store<f32>(out + os, hsum(a1)); store<f32>(out + 2 * os, hsum(a2)); store<f32>(out + 3 * os, hsum(a3));
}

/**
 * group16 with fused multiply-adds (relaxed-SIMD build): (w0·x0 + w1·x1) + (w2·x2 + w3·x3) with the
 * second product of each pair fused into the first (6 vector ops instead of 8). Chained FMA
 * accumulators were slower (V8's register allocation spilled them).
 */
// @ts-ignore: decorator
@inline function group16f(w0: v128, w1: v128, w2: v128, w3: v128, p: usize): v128 {
  return f32x4.add(madd(w1, v128.load(p, 16), f32x4.mul(w0, v128.load(p))), madd(w3, v128.load(p, 48), f32x4.mul(w2, v128.load(p, 32))));
}

/** (w0·x0 + w1·x1) + (w2·x2 + w3·x3) for 16 f32 of x at p: dotF32's group sum, same order. */
// @ts-ignore: decorator
@inline function group16(w0: v128, w1: v128, w2: v128, w3: v128, p: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return group16f(w0, w1, w2, w3, p);
  return f32x4.add(f32x4.add(f32x4.mul(w0, v128.load(p)), f32x4.mul(w1, v128.load(p, 16))),
    f32x4.add(f32x4.mul(w2, v128.load(p, 32)), f32x4.mul(w3, v128.load(p, 48))));
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
