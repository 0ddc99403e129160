// Prefill for Q8_0, Q4_0, Q4_K, Q5_K and Q6_K weights with the tokens in the vector lanes.
//
// The one-row kernels (q8.ts) put 4 or 8 positions of one row in the lanes of every product, so
// each block ends with a horizontal reduction before its scale can be applied. Here the quantized
// activations of four tokens (a "quad") are interleaved once per matmul (packQuads): vector k of a
// block holds the same few positions of the four tokens. A weight row is rewritten once per tile
// of tokens into a "panel" whose vector k repeats those positions of the row in every lane
// (buildPanel). The widening products of a panel vector and a quad vector then add up straight
// into one lane per token: no horizontal step, no broadcast in the inner loop, and the
// conversion and scaling of a block serve four tokens at once.
//
// Layouts per 32-value block (the "i8" form: Q4_0 and the K-quants in the relaxed build, i8
// activations and i16x8.relaxed_dot_i8x16_i7x16_s; the "i16" form: Q8_0 in both builds, the
// others in SIMD128, i16 activations and i32x4.dot_i16x8_s):
//  - quad (QUAD_I8 = 208 / QUAD_I16 = 336 bytes): 8 vectors of 4 i8 per token (positions
//    4k..4k+3; i16 form: 16 vectors of 2 i16, positions 2k, 2k+1), then per token (four lanes):
//    the scale d (f32), 8·Σq (i32; Q4_0's −8 offset folded in exactly), d·Σq (f32; Q4_K's min
//    term), 32·Σq over positions 0..15 and over 16..31 (i32; Q6_K's −32 offsets, per 16-value
//    sub-block).
//  - panel: the same vectors of one weight row (unsigned quants: 4-bit for Q4_0/Q4_K, 5-bit for
//    Q5_K, 6-bit for Q6_K), each repeated in all four lanes (128 / 256 bytes), then the row's
//    scales in all lanes (Q4_0, Q8_0: d; Q4_K/Q5_K: d·scale and dmin·min of the 32-value
//    sub-block; Q6_K: d·scale of its two 16-value sub-blocks).
import { half, halfK, madd } from './simd';
import { Q4_0, Q4_K, Q5_K, Q6_K, Q8_0, minK, scaleK } from './rows';
import { P6_MASKS, QC, q6TopGroup, quantizeBlocks, quantizeBlocksI8 } from './q8';
import { Q6_PACKED, blockStride, groupQuants, kQuants, rowIn, transposed } from './interleave';

const QUAD_I8: usize = 208, QUAD_I16: usize = 336;
/** Where the per-token values sit in a quad block, in bytes before its end (see above). */
const Q_D: usize = 80, Q_S8: usize = 64, Q_DS: usize = 48, Q_LO32: usize = 32, Q_HI32: usize = 16;

/**
 * Most tokens per tile (panels are rebuilt per tile), and the bytes of quads a tile may hold so
 * that they stay in L2 while every row of the matrix reads them: 128 tokens of 2048-value rows
 * take 0.4 MB (i8) or 0.7 MB (i16); longer rows get fewer tokens per tile (a multiple of 8).
 */
const PTILE: i32 = 128, TILE_BYTES: usize = 1 << 20;

/** Most 32-value blocks per row for the two-pass Q4_0 tile (quad2x2): rows of up to 1024 values. */
const TWO_PASS_BLOCKS: i32 = 32;

// Constants from q8.ts's table QC: i16 lanes of 1 at +16 (widening pair sums by
// i32x4.dot_i16x8_s), bytes of 0x0f at +128, of 1 at +144, of 3 at +160.

/** Whether matmul of `type` runs prefill over quads (packQuads) here. */
export function hasQuads(type: i32): bool {
  return type == Q8_0 || type == Q4_0 || type == Q4_K || type == Q5_K || type == Q6_K;
}

/** Bytes of the quads of nTok tokens of n values for `type` (0: no quad kernel). */
export function quadBytes(type: i32, n: i32, nTok: i32): usize {
  if (!hasQuads(type)) return 0;
  return <usize>((nTok + 3) >> 2) * <usize>(n >> 5) * (i8Form(type) ? QUAD_I8 : QUAD_I16);
}

/** Bytes of one row's panel. */
// @ts-ignore: decorator
@inline function panelBytes(type: i32, n: i32): usize {
  return <usize>(n >> 5) * panelBlock(type);
}

/** Scratch bytes (per thread) the quad prefill of rows of n values needs: two rows' panels, then 64 bytes per block (the Q4_0 tile's integer sums, see quad2x2). */
export function quadScratchBytes(type: i32, n: i32): usize {
  return 2 * panelBytes(type, n) + (<usize>(n >> 5) << 6);
}

/** Bytes of a panel block's quant vectors (i8 / i16 form); the row's scales follow them. */
const PANEL_I8: usize = 128, PANEL_I16: usize = 256;

/** Bytes of one 32-value block of a panel. */
// @ts-ignore: decorator
@inline function panelBlock(type: i32): usize {
  return (i8Form(type) ? PANEL_I8 : PANEL_I16) + (type == Q4_K || type == Q5_K || type == Q6_K ? 32 : 16);
}

// @ts-ignore: decorator
@inline function i8Form(type: i32): bool {
  return ASC_FEATURE_RELAXED_SIMD && (type == Q4_0 || type == Q4_K || type == Q5_K || type == Q6_K);
}

/**
 * Interleave nTok tokens' quantized activations (quantizeBlocks / quantizeBlocksI8 output: xq,
 * xd) into quads at dst; a last partial quad is padded with zero tokens.
 */
export function packQuads(type: i32, dst: usize, xq: usize, xd: usize, n: i32, nTok: i32): void {
  packQuadsRange(type, dst, xq, xd, n, nTok, 0, (nTok + 3) >> 2);
}

/** packQuads of quads [q0, q1) only (the thread pool's chunks: each quad is written from its own tokens). */
export function packQuadsRange(type: i32, dst: usize, xq: usize, xd: usize, n: i32, nTok: i32, q0: i32, q1: i32): void {
  const i8 = i8Form(type), nb = n >> 5;
  const qb: usize = i8 ? <usize>n : <usize>n << 1, bq: usize = i8 ? 32 : 64, qs = i8 ? QUAD_I8 : QUAD_I16;
  const dd = <usize>nb << 3;
  const ones = v128.load(QC, 16), bytes1 = v128.load(QC, 144), z = i32x4.splat(0);
  for (let q = q0; q < q1; q++) {
    const nt = min(4, nTok - 4 * q);
    const t0 = <usize>(4 * q);
    for (let b = 0; b < nb; b++) {
      const d = dst + (<usize>q * <usize>nb + <usize>b) * qs;
      const src = xq + t0 * qb + <usize>b * bq;
      for (let h: usize = 0; h < bq; h += 16) {
        const a0 = v128.load(src + h);
        const a1 = nt > 1 ? v128.load(src + qb + h) : z;
        const a2 = nt > 2 ? v128.load(src + 2 * qb + h) : z;
        const a3 = nt > 3 ? v128.load(src + 3 * qb + h) : z;
        transposeStore(d + (h << 2), a0, a1, a2, a3);
      }
      // Σq per token over positions 0..15 and 16..31, from the interleaved vectors (exact integers)
      let lo = z, hi = z;
      if (ASC_FEATURE_RELAXED_SIMD && i8) {
        let u = z, v = z;
        for (let k: usize = 0; k < 4; k++) u = i16x8.add(u, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(d + (k << 4)), bytes1));
        for (let k: usize = 4; k < 8; k++) v = i16x8.add(v, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(d + (k << 4)), bytes1));
        lo = i32x4.dot_i16x8_s(u, ones);
        hi = i32x4.dot_i16x8_s(v, ones);
      } else {
        for (let k: usize = 0; k < 8; k++) lo = i32x4.add(lo, i32x4.dot_i16x8_s(v128.load(d + (k << 4)), ones));
        for (let k: usize = 8; k < 16; k++) hi = i32x4.add(hi, i32x4.dot_i16x8_s(v128.load(d + (k << 4)), ones));
      }
      const s = i32x4.add(lo, hi);
      const xs = xd + t0 * dd + (<usize>b << 3);
      v128.store(d + qs - Q_D, f32x4(load<f32>(xs), nt > 1 ? load<f32>(xs + dd) : 0, nt > 2 ? load<f32>(xs + 2 * dd) : 0, nt > 3 ? load<f32>(xs + 3 * dd) : 0));
      v128.store(d + qs - Q_S8, i32x4.shl(s, 3));
      v128.store(d + qs - Q_DS, f32x4(load<f32>(xs, 4), nt > 1 ? load<f32>(xs + dd, 4) : 0, nt > 2 ? load<f32>(xs + 2 * dd, 4) : 0, nt > 3 ? load<f32>(xs + 3 * dd, 4) : 0));
      v128.store(d + qs - Q_LO32, i32x4.shl(lo, 5));
      v128.store(d + qs - Q_HI32, i32x4.shl(hi, 5));
    }
  }
}

/** Bytes of quantizeQuads' scratch for rows of n values: one quad's four tokens quantized (xq, xd). */
export function quantizeQuadsTmpBytes(type: i32, n: i32): usize {
  return <usize>(n >> 5) * 4 * ((i8Form(type) ? 32 : 64) + 8);
}

/**
 * Quantize nTok tokens' f32 activations at x (n values each) straight into quads at dst, quads
 * [q0, q1) only (the thread pool's chunks): each quad's tokens are quantized into tmp
 * (quantizeQuadsTmpBytes) by quantizeBlocks / quantizeBlocksI8 and interleaved by packQuadsRange,
 * so the quads are byte for byte those of quantizing the whole batch and packQuads, without the
 * batch's int8 copy (Q4_0, 128 tokens of 2048 values: 320 KiB; Q8_0's i16 form 576 KiB).
 */
export function quantizeQuads(type: i32, dst: usize, x: usize, n: i32, nTok: i32, q0: i32, q1: i32, tmp: usize): void {
  const i8 = i8Form(type), nb = n >> 5;
  const xd = tmp + <usize>nb * 4 * (i8 ? 32 : 64), qs: usize = i8 ? QUAD_I8 : QUAD_I16;
  for (let q = q0; q < q1; q++) {
    const nt = min(4, nTok - 4 * q);
    const src = x + (<usize>(4 * q) * <usize>n << 2);
    if (i8) quantizeBlocksI8(tmp, xd, src, nb * nt);
    else quantizeBlocks(tmp, xd, src, nb * nt);
    // this quad's tokens as quad 0 of a batch of nt, written in its place
    packQuadsRange(type, dst + <usize>q * <usize>nb * qs, tmp, xd, n, nt, 0, 1);
  }
}

/**
 * Store the 4×4 transpose of four vectors taken as i32 lanes: vector k at dst + 16k holds lane k
 * of a, b, c, d (in that order).
 */
// @ts-ignore: decorator
@inline function transposeStore(dst: usize, a: v128, b: v128, c: v128, d: v128): void {
  const t0 = v128.shuffle<i32>(a, b, 0, 4, 1, 5), t1 = v128.shuffle<i32>(c, d, 0, 4, 1, 5);
  const t2 = v128.shuffle<i32>(a, b, 2, 6, 3, 7), t3 = v128.shuffle<i32>(c, d, 2, 6, 3, 7);
  v128.store(dst, v128.shuffle<i64>(t0, t1, 0, 2));
  v128.store(dst, v128.shuffle<i64>(t0, t1, 1, 3), 16);
  v128.store(dst, v128.shuffle<i64>(t2, t3, 0, 2), 32);
  v128.store(dst, v128.shuffle<i64>(t2, t3, 1, 3), 48);
}

/** Store the four i32 lanes of v, each repeated in all lanes, at dst, dst + 16, dst + 32, dst + 48. */
// @ts-ignore: decorator
@inline function splatStore(dst: usize, v: v128): void {
  v128.store(dst, v128.shuffle<i32>(v, v, 0, 0, 0, 0));
  v128.store(dst, v128.shuffle<i32>(v, v, 1, 1, 1, 1), 16);
  v128.store(dst, v128.shuffle<i32>(v, v, 2, 2, 2, 2), 32);
  v128.store(dst, v128.shuffle<i32>(v, v, 3, 3, 3, 3), 48);
}

/**
 * Write the panel of one weight row to dst: nb blocks of 32 values, bs bytes apart from p (Q4_K:
 * bs is the 144-byte super-block, which holds eight of them). j ≥ 0: the row is row j of the
 * transposed Q4_0, Q8_0 or Q4_K group blocks at p (interleave.ts), else p is the row's first block.
 */
// @ts-ignore: decorator
@inline function buildPanel(type: i32, dst: usize, p: usize, bs: usize, nb: i32, j: i32): void {
  const m4 = v128.load(QC, 128);
  const pb = panelBlock(type);
  for (let b = 0; b < nb; b++) {
    const d = dst + <usize>b * pb;
    if (type == Q8_0) {
      const q = p + <usize>b * bs;
      if (j >= 0) {
        const v0 = groupQuants(q, j, 0), v1 = groupQuants(q, j, 1);
        splatStore(d, i16x8.extend_low_i8x16_s(v0)); splatStore(d + 64, i16x8.extend_high_i8x16_s(v0));
        splatStore(d + 128, i16x8.extend_low_i8x16_s(v1)); splatStore(d + 192, i16x8.extend_high_i8x16_s(v1));
        v128.store(d + pb - 16, f32x4.splat(half(load<u16>(q + (<usize>j << 1)))));
        continue;
      }
      splatStore(d, v128.load8x8_s(q, 2)); splatStore(d + 64, v128.load8x8_s(q, 10));
      splatStore(d + 128, v128.load8x8_s(q, 18)); splatStore(d + 192, v128.load8x8_s(q, 26));
      v128.store(d + pb - 16, f32x4.splat(half(load<u16>(q))));
      continue;
    }
    let lo: v128, hi: v128;
    if (type == Q6_K) {
      // block i of super-block b/8 (ggml dequantize_row_q6_K): half h = i/4, group g = i%4; value l
      // = low or high nibble (g/2) of ql[64h + 32(g%2) + l] | bits 2g, 2g+1 of qh[32h + l] << 4
      const q = p + <usize>(b >> 3) * bs, i = b & 7, h = <usize>(i >> 2), g = i & 3;
      const ql = q + (h << 6) + (<usize>(g & 1) << 5), qh = q + 128 + (h << 5), sc = q + 192 + (h << 3) + <usize>(g << 1);
      if (j == -2) {
        // packed (q8.ts q6Pack): groups 2g and 2g + 1 of the half's six vectors at q + 96h
        const v = q + h * 96, m3f = v128.load(P6_MASKS), mc = v128.load(P6_MASKS, 16);
        if (g < 3) {
          lo = v128.and(v128.load(v + (<usize>g << 5)), m3f);
          hi = v128.and(v128.load(v + (<usize>g << 5), 16), m3f);
        } else {
          lo = q6TopGroup(v128.load(v), v128.load(v, 16), v128.load(v, 32), mc);
          hi = q6TopGroup(v128.load(v, 48), v128.load(v, 64), v128.load(v, 80), mc);
        }
      } else {
        const sl = (g >> 1) << 2, sh = g << 1, m3 = v128.load(QC, 160);
        lo = v128.or(v128.and(i16x8.shr_u(v128.load(ql), sl), m4), i16x8.shl(v128.and(i16x8.shr_u(v128.load(qh), sh), m3), 4));
        hi = v128.or(v128.and(i16x8.shr_u(v128.load(ql, 16), sl), m4), i16x8.shl(v128.and(i16x8.shr_u(v128.load(qh, 16), sh), m3), 4));
      }
      const dq = halfK(load<u16>(q, 208));
      v128.store(d + pb - 32, f32x4.splat(dq * <f32>load<i8>(sc)));
      v128.store(d + pb - 16, f32x4.splat(dq * <f32>load<i8>(sc, 1)));
    } else if (type == Q4_K && j >= 0) {
      // row j of a transposed Q4_K super-block (interleave.ts, relaxed build): its header at 16j,
      // sub-block s's quants are lane j of the pair s/2's vectors, low (s even) or high nibbles
      const q = p + <usize>(b >> 3) * bs, s = b & 7, h = q + (<usize>j << 4);
      const sh = (s & 1) << 2;
      lo = v128.and(i16x8.shr_u(kQuants(q, j, <usize>(s >> 1), 0), sh), m4);
      hi = v128.and(i16x8.shr_u(kQuants(q, j, <usize>(s >> 1), 1), sh), m4);
      v128.store(d + pb - 32, f32x4.splat(halfK(load<u16>(h)) * <f32>scaleK(h + 4, s)));
      v128.store(d + pb - 16, f32x4.splat(halfK(load<u16>(h, 2)) * <f32>minK(h + 4, s)));
    } else if (type == Q4_K || type == Q5_K) {
      // sub-block j of super-block b/8: low (j even) or high (j odd) nibbles of 32 bytes; Q5_K's
      // fifth bit of value i is bit j of qh[i]
      const q = p + <usize>(b >> 3) * bs, j = b & 7;
      const qs = q + (type == Q5_K ? 48 : 16) + (<usize>(j >> 1) << 5);
      const sh = (j & 1) << 2;
      lo = v128.and(i16x8.shr_u(v128.load(qs), sh), m4);
      hi = v128.and(i16x8.shr_u(v128.load(qs, 16), sh), m4);
      if (type == Q5_K) {
        const b1 = v128.load(QC, 144);
        lo = v128.or(lo, i16x8.shl(v128.and(i16x8.shr_u(v128.load(q, 16), j), b1), 4));
        hi = v128.or(hi, i16x8.shl(v128.and(i16x8.shr_u(v128.load(q, 32), j), b1), 4));
      }
      v128.store(d + pb - 32, f32x4.splat(halfK(load<u16>(q)) * <f32>scaleK(q + 4, j)));
      v128.store(d + pb - 16, f32x4.splat(halfK(load<u16>(q, 2)) * <f32>minK(q + 4, j)));
    } else {
      const q = p + <usize>b * bs;
      const v = j >= 0 ? groupQuants(q, j, 0) : v128.load(q, 2);
      lo = v128.and(v, m4);
      hi = v128.and(i16x8.shr_u(v, 4), m4);
      v128.store(d + pb - 16, f32x4.splat(half(load<u16>(q + (j >= 0 ? <usize>j << 1 : 0)))));
    }
    if (ASC_FEATURE_RELAXED_SIMD && i8Form(type)) {
      splatStore(d, lo); splatStore(d + 64, hi);
    } else {
      splatStore(d, i16x8.extend_low_i8x16_u(lo)); splatStore(d + 64, i16x8.extend_high_i8x16_u(lo));
      splatStore(d + 128, i16x8.extend_low_i8x16_u(hi)); splatStore(d + 192, i16x8.extend_high_i8x16_u(hi));
    }
  }
}

/**
 * Prefill of rows [r0, r1) over quads (packQuads at xt, nTok tokens): per tile of tokens,
 * the panels of two rows at a time are built in `scratch` and run against the tile's quads. Row
 * r's first block is at rowIn(r) (interleave.ts: inside an interleaved group or in GGUF order), its blocks
 * (Q4_K/Q5_K/Q6_K: super-blocks) 4·cb bytes apart inside a group, else the block size. out:
 * nTok × nOut f32.
 */
export function quadRows(type: i32, out: usize, w: usize, rb: usize, cb: usize, n4: i32, xt: usize, n: i32, nOut: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  if (type == Q8_0) quadRowsQ8_0(out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
  else if (type == Q4_0) quadRowsQ4_0(out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
  else if (type == Q4_K) quadRowsQ4_K(out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
  else if (type == Q5_K) quadRowsQ5_K(out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
  else quadRowsQ6_K(out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
}

// One function per type. With the five copies of quadRowsOf inlined into quadRows itself,
// Binaryen (-O3) folded the three K-quant copies back into one body that keeps the type in a local
// and tests it inside the block loop, and TurboFan then spilled that loop's state: separate
// functions run Q4_K / Q5_K / Q6_K prefill matmuls 15% / 17% / 12% faster in the relaxed build
// (768×2048 × 128 tokens, in-process A/B; Q4_0 and Q8_0 2% faster; the same bits).
function quadRowsQ8_0(out: usize, w: usize, rb: usize, cb: usize, n4: i32, xt: usize, n: i32, nOut: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  quadRowsOf(Q8_0, out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
}
function quadRowsQ4_0(out: usize, w: usize, rb: usize, cb: usize, n4: i32, xt: usize, n: i32, nOut: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  quadRowsOf(Q4_0, out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
}
function quadRowsQ4_K(out: usize, w: usize, rb: usize, cb: usize, n4: i32, xt: usize, n: i32, nOut: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  quadRowsOf(Q4_K, out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
}
function quadRowsQ5_K(out: usize, w: usize, rb: usize, cb: usize, n4: i32, xt: usize, n: i32, nOut: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  quadRowsOf(Q5_K, out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
}
function quadRowsQ6_K(out: usize, w: usize, rb: usize, cb: usize, n4: i32, xt: usize, n: i32, nOut: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  quadRowsOf(Q6_K, out, w, rb, cb, n4, xt, n, nOut, nTok, r0, r1, scratch);
}

// @ts-ignore: decorator
@inline function quadRowsOf(type: i32, out: usize, w: usize, rb: usize, cb: usize, n4: i32, xt: usize, n: i32, nOut: i32, nTok: i32, r0: i32, r1: i32, scratch: usize): void {
  // bytes of one block in GGUF order (the K-quants: of one 256-value super-block), spelled out so
  // it stays a compile-time constant per type (taken from rowBytes, the loops ran 15% slower)
  const nb = n >> 5, plain: usize = type == Q8_0 ? 34 : type == Q4_K ? 144 : type == Q5_K ? 176 : type == Q6_K ? 210 : 18;
  const qs = <usize>nb * (i8Form(type) ? QUAD_I8 : QUAD_I16), os = <usize>nOut << 2;
  const second = scratch + panelBytes(type, n), sums = second + panelBytes(type, n);
  // qs: bytes of one quad (four tokens)
  const tile = max(8, min(PTILE, <i32>((TILE_BYTES / qs) << 2) & ~7));
  for (let t0 = 0; t0 < nTok; t0 += tile) {
    const t1 = min(nTok, t0 + tile);
    for (let r = r0; r < r1; r += 2) {
      // two rows (the last one twice when r1 − r0 is odd) × two quads per pass
      const two = r + 1 < r1;
      panelOf(type, scratch, w, r, rb, cb, n4, plain, nb);
      if (two) panelOf(type, second, w, r + 1, rb, cb, n4, plain, nb);
      const o = out + (<usize>r << 2);
      let t = t0;
      for (; t + 8 <= t1; t += 8) {
        const x = xt + <usize>(t >> 2) * qs;
        quad2x2(type, scratch, two ? second : scratch, nb, x, x + qs, o + <usize>t * os, os, 8, two, sums);
      }
      if (t1 - t > 4) {
        // five to seven tokens left: one pass over their two quads (the second padded with zero
        // tokens by packQuads), not two passes each running one quad twice (a 127-token prompt
        // took 17 passes instead of 16); each token's steps are the same, so are its bits
        const x = xt + <usize>(t >> 2) * qs;
        quad2x2(type, scratch, two ? second : scratch, nb, x, x + qs, o + <usize>t * os, os, t1 - t, two, sums);
        t = t1;
      }
      if (t < t1) {
        // one to four tokens left: their one quad against both rows (half the products of a
        // quad2x2 pass that ran the quad twice)
        const x = xt + <usize>(t >> 2) * qs;
        quad2x1(type, scratch, two ? second : scratch, nb, x, o + <usize>t * os, os, t1 - t, two);
      }
    }
  }
}

/** buildPanel of row r, wherever it is: in a transposed group block, an interleaved group or GGUF order. */
// @ts-ignore: decorator
@inline function panelOf(type: i32, dst: usize, w: usize, r: i32, rb: usize, cb: usize, n4: i32, plain: usize, nb: i32): void {
  if (transposed(cb) && r < n4) buildPanel(type, dst, w + <usize>(r & ~3) * rb, cb << 2, nb, r & 3);
  else if (type == Q6_K && cb == Q6_PACKED) buildPanel(type, dst, w + <usize>r * rb, plain, nb, -2); // (packed rows, q8.ts q6Pack)
  else buildPanel(type, dst, rowIn(w, r, rb, cb, n4), blockStride(r, cb, n4, plain), nb, -1);
}

/**
 * Two panels (rows r, r + 1 at wA, wB) against two quads (x0, x1; the same quad twice for a
 * single one): results of the first nt of the eight tokens at out + j·os (row r) and
 * out + 4 + j·os (row r + 1, when `two`). Each loaded vector serves two products: loads, not
 * multiplies, are what limit these loops (about two 16-byte loads per cycle here). Per block and
 * token: the exact integer dot (minus 8·Σq for Q4_0), converted, times d_w·d_x, added. Stores
 * to `out` between steps act as fences: without them V8 hoists every load of a block to its
 * start and spills most of them. The steps are written out with immediate load offsets: the same
 * code as a loop over the block (computed addresses, a back edge) measured 2% slower for Q4_0, and
 * one loop shape for all the types (halves, widening spans) 20–30% slower.
 */
// @ts-ignore: decorator
@inline function quad2x2(type: i32, wA0: usize, wB0: usize, nb: i32, x0: usize, x1: usize, out: usize, os: usize, nt: i32, two: bool, sums: usize): void {
  const i8 = i8Form(type);
  const pb = panelBlock(type), qs = i8 ? QUAD_I8 : QUAD_I16;
  let a00 = f32x4.splat(0), a01 = a00, a10 = a00, a11 = a00;
  if (ASC_FEATURE_RELAXED_SIMD && i8 && type == Q4_0 && nb <= TWO_PASS_BLOCKS) {
    // two passes: every block's four exact integer sums to `sums` (64 bytes a block), then their
    // scaling; the same steps per block as the one-pass loop below, so the same bits. In one
    // pass TurboFan spilled two of the four f32 sums and the scaling's operands every block
    // (160 instructions a block; now 133 plus a scaling pass of about 30): 768×2048 and
    // 1024×2048 × 128 tokens 3–4% faster. Only for short rows (TWO_PASS_BLOCKS): 2048×768 gained
    // nothing, 4096×1024 and 11008×512 ran 13% slower (two panels, two quads and the sums no
    // longer fit the 48 KB L1 data cache)
    const ones = v128.load(QC, 16);
    const wEnd = wA0 + <usize>nb * pb;
    for (let wA = wA0, wB = wB0, p0 = x0, p1 = x1, u = sums; wA < wEnd; wA += pb, wB += pb, p0 += qs, p1 += qs, u += 64) {
      let wa: v128, wb: v128, xa: v128, xb: v128, u00: v128, u01: v128, u10: v128, u11: v128;
      wa = v128.load(wA, 0); wb = v128.load(wB, 0); xa = v128.load(p0, 0); xb = v128.load(p1, 0);
      u00 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa); u01 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa); u10 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb); u11 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb);
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 16); wb = v128.load(wB, 16); xa = v128.load(p0, 16); xb = v128.load(p1, 16);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      wa = v128.load(wA, 32); wb = v128.load(wB, 32); xa = v128.load(p0, 32); xb = v128.load(p1, 32);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 48); wb = v128.load(wB, 48); xa = v128.load(p0, 48); xb = v128.load(p1, 48);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      wa = v128.load(wA, 64); wb = v128.load(wB, 64); xa = v128.load(p0, 64); xb = v128.load(p1, 64);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 80); wb = v128.load(wB, 80); xa = v128.load(p0, 80); xb = v128.load(p1, 80);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      wa = v128.load(wA, 96); wb = v128.load(wB, 96); xa = v128.load(p0, 96); xb = v128.load(p1, 96);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 112); wb = v128.load(wB, 112); xa = v128.load(p0, 112); xb = v128.load(p1, 112);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      v128.store(u, i32x4.dot_i16x8_s(u00, ones)); v128.store(u, i32x4.dot_i16x8_s(u01, ones), 16);
      v128.store(u, i32x4.dot_i16x8_s(u10, ones), 32); v128.store(u, i32x4.dot_i16x8_s(u11, ones), 48);
    }
    for (let wA = wA0, wB = wB0, p0 = x0, p1 = x1, u = sums; wA < wEnd; wA += pb, wB += pb, p0 += qs, p1 += qs, u += 64) {
      // immediate offsets (QUAD_I8 − …; Q4_0's panel scale right after its quant vectors): an
      // added constant costs V8 an extra address instruction per load
      const m0 = v128.load(p0, QUAD_I8 - Q_S8), m1 = v128.load(p1, QUAD_I8 - Q_S8);
      const d0 = v128.load(p0, QUAD_I8 - Q_D), d1 = v128.load(p1, QUAD_I8 - Q_D);
      const dA = v128.load(wA, PANEL_I8), dB = v128.load(wB, PANEL_I8);
      a00 = madd(f32x4.convert_i32x4_s(i32x4.sub(v128.load(u), m0)), f32x4.mul(dA, d0), a00);
      a01 = madd(f32x4.convert_i32x4_s(i32x4.sub(v128.load(u, 16), m1)), f32x4.mul(dA, d1), a01);
      a10 = madd(f32x4.convert_i32x4_s(i32x4.sub(v128.load(u, 32), m0)), f32x4.mul(dB, d0), a10);
      a11 = madd(f32x4.convert_i32x4_s(i32x4.sub(v128.load(u, 48), m1)), f32x4.mul(dB, d1), a11);
    }
    storeTile(out, os, nt, two, a00, a01, a10, a11);
    return;
  }
  // four pointers stepped by a block each (computing them from the block index kept three
  // multiplies and the tile's base addresses in the loop)
  const wEnd = wA0 + <usize>nb * pb;
  for (let wA = wA0, wB = wB0, p0 = x0, p1 = x1; wA < wEnd; wA += pb, wB += pb, p0 += qs, p1 += qs) {
    let wa: v128, wb: v128, xa: v128, xb: v128, u00: v128, u01: v128, u10: v128, u11: v128;
    let v00: v128, v01: v128, v10: v128, v11: v128;
    if (type == Q6_K) {
      // two 16-value sub-blocks per block, each with its own scale; 6-bit quants in 0..63
      const ones = v128.load(QC, 16);
      // positions 0..15
      if (ASC_FEATURE_RELAXED_SIMD && i8) {
        wa = v128.load(wA, 0); wb = v128.load(wB, 0); xa = v128.load(p0, 0); xb = v128.load(p1, 0);
        v00 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa); v01 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa); v10 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb); v11 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb);
        wa = v128.load(wA, 16); wb = v128.load(wB, 16); xa = v128.load(p0, 16); xb = v128.load(p1, 16);
        v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
        fence4(out, v00, v01, v10, v11);
        u00 = i32x4.dot_i16x8_s(v00, ones); u01 = i32x4.dot_i16x8_s(v01, ones); u10 = i32x4.dot_i16x8_s(v10, ones); u11 = i32x4.dot_i16x8_s(v11, ones);
        wa = v128.load(wA, 32); wb = v128.load(wB, 32); xa = v128.load(p0, 32); xb = v128.load(p1, 32);
        v00 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa); v01 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa); v10 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb); v11 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb);
        wa = v128.load(wA, 48); wb = v128.load(wB, 48); xa = v128.load(p0, 48); xb = v128.load(p1, 48);
        v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
        fence4(out, v00, v01, v10, v11);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(v00, ones)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(v01, ones)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(v10, ones)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(v11, ones));
      } else {
        wa = v128.load(wA, 0); wb = v128.load(wB, 0); xa = v128.load(p0, 0); xb = v128.load(p1, 0);
        u00 = i32x4.dot_i16x8_s(xa, wa); u01 = i32x4.dot_i16x8_s(xb, wa); u10 = i32x4.dot_i16x8_s(xa, wb); u11 = i32x4.dot_i16x8_s(xb, wb);
        wa = v128.load(wA, 16); wb = v128.load(wB, 16); xa = v128.load(p0, 16); xb = v128.load(p1, 16);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        fence4(out, u00, u01, u10, u11);
        wa = v128.load(wA, 32); wb = v128.load(wB, 32); xa = v128.load(p0, 32); xb = v128.load(p1, 32);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        wa = v128.load(wA, 48); wb = v128.load(wB, 48); xa = v128.load(p0, 48); xb = v128.load(p1, 48);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        fence4(out, u00, u01, u10, u11);
        wa = v128.load(wA, 64); wb = v128.load(wB, 64); xa = v128.load(p0, 64); xb = v128.load(p1, 64);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        wa = v128.load(wA, 80); wb = v128.load(wB, 80); xa = v128.load(p0, 80); xb = v128.load(p1, 80);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        fence4(out, u00, u01, u10, u11);
        wa = v128.load(wA, 96); wb = v128.load(wB, 96); xa = v128.load(p0, 96); xb = v128.load(p1, 96);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        wa = v128.load(wA, 112); wb = v128.load(wB, 112); xa = v128.load(p0, 112); xb = v128.load(p1, 112);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      }
      const m0 = v128.load(p0 + qs - Q_LO32), m1 = v128.load(p1 + qs - Q_LO32);
      const sA = v128.load(wA + pb - 32), sB = v128.load(wB + pb - 32);
      const d0 = v128.load(p0 + qs - Q_D), d1 = v128.load(p1 + qs - Q_D);
      a00 = f32x4.add(a00, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(u00, m0)), f32x4.mul(sA, d0)));
      a01 = f32x4.add(a01, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(u01, m1)), f32x4.mul(sA, d1)));
      a10 = f32x4.add(a10, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(u10, m0)), f32x4.mul(sB, d0)));
      a11 = f32x4.add(a11, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(u11, m1)), f32x4.mul(sB, d1)));
      fence4(out, a00, a01, a10, a11);
      // positions 16..31
      if (ASC_FEATURE_RELAXED_SIMD && i8) {
        wa = v128.load(wA, 64); wb = v128.load(wB, 64); xa = v128.load(p0, 64); xb = v128.load(p1, 64);
        v00 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa); v01 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa); v10 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb); v11 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb);
        wa = v128.load(wA, 80); wb = v128.load(wB, 80); xa = v128.load(p0, 80); xb = v128.load(p1, 80);
        v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
        fence4(out, v00, v01, v10, v11);
        u00 = i32x4.dot_i16x8_s(v00, ones); u01 = i32x4.dot_i16x8_s(v01, ones); u10 = i32x4.dot_i16x8_s(v10, ones); u11 = i32x4.dot_i16x8_s(v11, ones);
        wa = v128.load(wA, 96); wb = v128.load(wB, 96); xa = v128.load(p0, 96); xb = v128.load(p1, 96);
        v00 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa); v01 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa); v10 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb); v11 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb);
        wa = v128.load(wA, 112); wb = v128.load(wB, 112); xa = v128.load(p0, 112); xb = v128.load(p1, 112);
        v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
        fence4(out, v00, v01, v10, v11);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(v00, ones)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(v01, ones)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(v10, ones)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(v11, ones));
      } else {
        wa = v128.load(wA, 128); wb = v128.load(wB, 128); xa = v128.load(p0, 128); xb = v128.load(p1, 128);
        u00 = i32x4.dot_i16x8_s(xa, wa); u01 = i32x4.dot_i16x8_s(xb, wa); u10 = i32x4.dot_i16x8_s(xa, wb); u11 = i32x4.dot_i16x8_s(xb, wb);
        wa = v128.load(wA, 144); wb = v128.load(wB, 144); xa = v128.load(p0, 144); xb = v128.load(p1, 144);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        fence4(out, u00, u01, u10, u11);
        wa = v128.load(wA, 160); wb = v128.load(wB, 160); xa = v128.load(p0, 160); xb = v128.load(p1, 160);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        wa = v128.load(wA, 176); wb = v128.load(wB, 176); xa = v128.load(p0, 176); xb = v128.load(p1, 176);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        fence4(out, u00, u01, u10, u11);
        wa = v128.load(wA, 192); wb = v128.load(wB, 192); xa = v128.load(p0, 192); xb = v128.load(p1, 192);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        wa = v128.load(wA, 208); wb = v128.load(wB, 208); xa = v128.load(p0, 208); xb = v128.load(p1, 208);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        fence4(out, u00, u01, u10, u11);
        wa = v128.load(wA, 224); wb = v128.load(wB, 224); xa = v128.load(p0, 224); xb = v128.load(p1, 224);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
        wa = v128.load(wA, 240); wb = v128.load(wB, 240); xa = v128.load(p0, 240); xb = v128.load(p1, 240);
        u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      }
      const n0 = v128.load(p0 + qs - Q_HI32), n1 = v128.load(p1 + qs - Q_HI32);
      const tA = v128.load(wA + pb - 16), tB = v128.load(wB + pb - 16);
            a00 = f32x4.add(a00, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(u00, n0)), f32x4.mul(tA, d0)));
      a01 = f32x4.add(a01, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(u01, n1)), f32x4.mul(tA, d1)));
      a10 = f32x4.add(a10, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(u10, n0)), f32x4.mul(tB, d0)));
      a11 = f32x4.add(a11, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(u11, n1)), f32x4.mul(tB, d1)));
      continue;
    }
    if (ASC_FEATURE_RELAXED_SIMD && i8 && type == Q5_K) {
      // 5-bit quants: i16 lanes hold four steps (≤ 4·2·31·127 = 31496), so widen twice per block
      const ones = v128.load(QC, 16);
      wa = v128.load(wA, 0); wb = v128.load(wB, 0); xa = v128.load(p0, 0); xb = v128.load(p1, 0);
      v00 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa); v01 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa); v10 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb); v11 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb);
      wa = v128.load(wA, 16); wb = v128.load(wB, 16); xa = v128.load(p0, 16); xb = v128.load(p1, 16);
      v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, v00, v01, v10, v11);
      wa = v128.load(wA, 32); wb = v128.load(wB, 32); xa = v128.load(p0, 32); xb = v128.load(p1, 32);
      v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      wa = v128.load(wA, 48); wb = v128.load(wB, 48); xa = v128.load(p0, 48); xb = v128.load(p1, 48);
      v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, v00, v01, v10, v11);
      u00 = i32x4.dot_i16x8_s(v00, ones); u01 = i32x4.dot_i16x8_s(v01, ones); u10 = i32x4.dot_i16x8_s(v10, ones); u11 = i32x4.dot_i16x8_s(v11, ones);
      wa = v128.load(wA, 64); wb = v128.load(wB, 64); xa = v128.load(p0, 64); xb = v128.load(p1, 64);
      v00 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa); v01 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa); v10 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb); v11 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb);
      wa = v128.load(wA, 80); wb = v128.load(wB, 80); xa = v128.load(p0, 80); xb = v128.load(p1, 80);
      v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, v00, v01, v10, v11);
      wa = v128.load(wA, 96); wb = v128.load(wB, 96); xa = v128.load(p0, 96); xb = v128.load(p1, 96);
      v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      wa = v128.load(wA, 112); wb = v128.load(wB, 112); xa = v128.load(p0, 112); xb = v128.load(p1, 112);
      v00 = i16x8.add(v00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); v01 = i16x8.add(v01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); v10 = i16x8.add(v10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); v11 = i16x8.add(v11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, v00, v01, v10, v11);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(v00, ones)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(v01, ones)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(v10, ones)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(v11, ones));
    } else if (ASC_FEATURE_RELAXED_SIMD && i8) {
      wa = v128.load(wA, 0); wb = v128.load(wB, 0); xa = v128.load(p0, 0); xb = v128.load(p1, 0);
      u00 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa); u01 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa); u10 = i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb); u11 = i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb);
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 16); wb = v128.load(wB, 16); xa = v128.load(p0, 16); xb = v128.load(p1, 16);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      wa = v128.load(wA, 32); wb = v128.load(wB, 32); xa = v128.load(p0, 32); xb = v128.load(p1, 32);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 48); wb = v128.load(wB, 48); xa = v128.load(p0, 48); xb = v128.load(p1, 48);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      wa = v128.load(wA, 64); wb = v128.load(wB, 64); xa = v128.load(p0, 64); xb = v128.load(p1, 64);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 80); wb = v128.load(wB, 80); xa = v128.load(p0, 80); xb = v128.load(p1, 80);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      wa = v128.load(wA, 96); wb = v128.load(wB, 96); xa = v128.load(p0, 96); xb = v128.load(p1, 96);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 112); wb = v128.load(wB, 112); xa = v128.load(p0, 112); xb = v128.load(p1, 112);
      u00 = i16x8.add(u00, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wa)); u01 = i16x8.add(u01, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wa)); u10 = i16x8.add(u10, i16x8.relaxed_dot_i8x16_i7x16_s(xa, wb)); u11 = i16x8.add(u11, i16x8.relaxed_dot_i8x16_i7x16_s(xb, wb));
      const ones = v128.load(QC, 16);
      u00 = i32x4.dot_i16x8_s(u00, ones); u01 = i32x4.dot_i16x8_s(u01, ones);
      u10 = i32x4.dot_i16x8_s(u10, ones); u11 = i32x4.dot_i16x8_s(u11, ones);
      fence4(out, u00, u01, u10, u11);
    } else {
      wa = v128.load(wA, 0); wb = v128.load(wB, 0); xa = v128.load(p0, 0); xb = v128.load(p1, 0);
      u00 = i32x4.dot_i16x8_s(xa, wa); u01 = i32x4.dot_i16x8_s(xb, wa); u10 = i32x4.dot_i16x8_s(xa, wb); u11 = i32x4.dot_i16x8_s(xb, wb);
      wa = v128.load(wA, 16); wb = v128.load(wB, 16); xa = v128.load(p0, 16); xb = v128.load(p1, 16);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 32); wb = v128.load(wB, 32); xa = v128.load(p0, 32); xb = v128.load(p1, 32);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      wa = v128.load(wA, 48); wb = v128.load(wB, 48); xa = v128.load(p0, 48); xb = v128.load(p1, 48);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 64); wb = v128.load(wB, 64); xa = v128.load(p0, 64); xb = v128.load(p1, 64);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      wa = v128.load(wA, 80); wb = v128.load(wB, 80); xa = v128.load(p0, 80); xb = v128.load(p1, 80);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 96); wb = v128.load(wB, 96); xa = v128.load(p0, 96); xb = v128.load(p1, 96);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      wa = v128.load(wA, 112); wb = v128.load(wB, 112); xa = v128.load(p0, 112); xb = v128.load(p1, 112);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 128); wb = v128.load(wB, 128); xa = v128.load(p0, 128); xb = v128.load(p1, 128);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      wa = v128.load(wA, 144); wb = v128.load(wB, 144); xa = v128.load(p0, 144); xb = v128.load(p1, 144);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 160); wb = v128.load(wB, 160); xa = v128.load(p0, 160); xb = v128.load(p1, 160);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      wa = v128.load(wA, 176); wb = v128.load(wB, 176); xa = v128.load(p0, 176); xb = v128.load(p1, 176);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 192); wb = v128.load(wB, 192); xa = v128.load(p0, 192); xb = v128.load(p1, 192);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      wa = v128.load(wA, 208); wb = v128.load(wB, 208); xa = v128.load(p0, 208); xb = v128.load(p1, 208);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
      wa = v128.load(wA, 224); wb = v128.load(wB, 224); xa = v128.load(p0, 224); xb = v128.load(p1, 224);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      wa = v128.load(wA, 240); wb = v128.load(wB, 240); xa = v128.load(p0, 240); xb = v128.load(p1, 240);
      u00 = i32x4.add(u00, i32x4.dot_i16x8_s(xa, wa)); u01 = i32x4.add(u01, i32x4.dot_i16x8_s(xb, wa)); u10 = i32x4.add(u10, i32x4.dot_i16x8_s(xa, wb)); u11 = i32x4.add(u11, i32x4.dot_i16x8_s(xb, wb));
      fence4(out, u00, u01, u10, u11);
    }
    // (the fence4 that ends both branches above keeps the scaling's loads below it: without it
    // TurboFan hoisted them, with the last two steps' eight, and spilled the sums. In-process
    // A/B, 128 tokens, the same bits: relaxed build Q4_K +9 to +18%, Q4_0 with long rows (the
    // one-pass loop) +4 to +8%, Q8_0 +2 to +4%; SIMD128 build Q4_0 +31%, Q4_K +20%, Q8_0 +12%.
    // Q5_K and Q6_K, whose branches end otherwise, measured ±0 with it.)
    if (type == Q4_0) {
      const m0 = v128.load(p0 + qs - Q_S8), m1 = v128.load(p1 + qs - Q_S8);
      u00 = i32x4.sub(u00, m0); u01 = i32x4.sub(u01, m1); u10 = i32x4.sub(u10, m0); u11 = i32x4.sub(u11, m1);
    }
    const d0 = v128.load(p0 + qs - Q_D), d1 = v128.load(p1 + qs - Q_D);
    if (type == Q4_K || type == Q5_K) {
      // d·sc·Σq·x − dmin·m·(d_x·Σq_x) per sub-block
      const dA = v128.load(wA + pb - 32), dB = v128.load(wB + pb - 32), mA = v128.load(wA + pb - 16), mB = v128.load(wB + pb - 16);
      const s0 = v128.load(p0 + qs - Q_DS), s1 = v128.load(p1 + qs - Q_DS);
      a00 = f32x4.sub(f32x4.add(a00, f32x4.mul(f32x4.convert_i32x4_s(u00), f32x4.mul(dA, d0))), f32x4.mul(mA, s0));
      a01 = f32x4.sub(f32x4.add(a01, f32x4.mul(f32x4.convert_i32x4_s(u01), f32x4.mul(dA, d1))), f32x4.mul(mA, s1));
      a10 = f32x4.sub(f32x4.add(a10, f32x4.mul(f32x4.convert_i32x4_s(u10), f32x4.mul(dB, d0))), f32x4.mul(mB, s0));
      a11 = f32x4.sub(f32x4.add(a11, f32x4.mul(f32x4.convert_i32x4_s(u11), f32x4.mul(dB, d1))), f32x4.mul(mB, s1));
    } else {
      const dA = v128.load(wA + pb - 16), dB = v128.load(wB + pb - 16);
      a00 = madd(f32x4.convert_i32x4_s(u00), f32x4.mul(dA, d0), a00);
      a01 = madd(f32x4.convert_i32x4_s(u01), f32x4.mul(dA, d1), a01);
      a10 = madd(f32x4.convert_i32x4_s(u10), f32x4.mul(dB, d0), a10);
      a11 = madd(f32x4.convert_i32x4_s(u11), f32x4.mul(dB, d1), a11);
    }
  }
  storeTile(out, os, nt, two, a00, a01, a10, a11);
}

/**
 * quad2x2 for a single quad (the last one to four tokens of a tile): the panels at wA0, wB0
 * against the quad at x0; results of its first nt (≤ 4) tokens as quad2x2 stores them. The
 * integer sums cover the same spans (the i16 partial sums of the i8 form widened after the same
 * number of steps, so they cannot overflow), and being exact their order is free; the scaling
 * steps are quad2x2's, so each token's bits are the same. Written as loops: it runs at most once
 * per row pair and tile, and each step is three loads and two products where a quad2x2 pass
 * over the quad twice took four loads and four.
 */
// @ts-ignore: decorator
@inline function quad2x1(type: i32, wA0: usize, wB0: usize, nb: i32, x0: usize, out: usize, os: usize, nt: i32, two: bool): void {
  const i8 = i8Form(type);
  const pb = panelBlock(type), qs = i8 ? QUAD_I8 : QUAD_I16;
  // bytes of a block's quant vectors; of one span of integer sums (Q6_K: a 16-value sub-block);
  // of the steps summed before widening (i8 form: in i16 lanes, as in quad2x2; i16 form: a span)
  const vecs: usize = i8 ? PANEL_I8 : PANEL_I16, span: usize = type == Q6_K ? vecs >> 1 : vecs;
  const group: usize = !i8 ? span : type == Q5_K ? 64 : type == Q6_K ? 32 : 128;
  const ones = v128.load(QC, 16);
  let a0 = f32x4.splat(0), a1 = a0;
  const wEnd = wA0 + <usize>nb * pb;
  for (let wA = wA0, wB = wB0, p = x0; wA < wEnd; wA += pb, wB += pb, p += qs) {
    const d = v128.load(p + qs - Q_D);
    for (let k0: usize = 0; k0 < vecs; k0 += span) {
      let uA = i32x4.splat(0), uB = uA;
      // steps of two vectors with immediate load offsets: in Q8_0 768×2048 the tail pass costs 0.66
      // of a full pass (a quad2x2 pass over the quad twice: 0.96), one vector a step 0.78, four 0.71
      for (let g = k0; g < k0 + span; g += group) {
        let vA = i32x4.splat(0), vB = vA;
        for (let k = g; k < g + group; k += 32) {
          const xA = p + k, a = wA + k, b = wB + k;
          let x = v128.load(xA);
          vA = dotAdd(i8, vA, x, v128.load(a)); vB = dotAdd(i8, vB, x, v128.load(b));
          x = v128.load(xA, 16);
          vA = dotAdd(i8, vA, x, v128.load(a, 16)); vB = dotAdd(i8, vB, x, v128.load(b, 16));
        }
        // i8 form: the i16 partial sums widened
        if (ASC_FEATURE_RELAXED_SIMD && i8) { vA = i32x4.dot_i16x8_s(vA, ones); vB = i32x4.dot_i16x8_s(vB, ones); }
        uA = i32x4.add(uA, vA); uB = i32x4.add(uB, vB);
      }
      if (type == Q6_K) {
        // d·scale of this sub-block, minus 32·Σq over its positions
        const m = v128.load(p + qs - (k0 == 0 ? Q_LO32 : Q_HI32));
        const sA = v128.load(wA + pb - (k0 == 0 ? 32 : 16)), sB = v128.load(wB + pb - (k0 == 0 ? 32 : 16));
        a0 = f32x4.add(a0, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(uA, m)), f32x4.mul(sA, d)));
        a1 = f32x4.add(a1, f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(uB, m)), f32x4.mul(sB, d)));
      } else if (type == Q4_K || type == Q5_K) {
        const dA = v128.load(wA + pb - 32), dB = v128.load(wB + pb - 32), mA = v128.load(wA + pb - 16), mB = v128.load(wB + pb - 16);
        const s = v128.load(p + qs - Q_DS);
        a0 = f32x4.sub(f32x4.add(a0, f32x4.mul(f32x4.convert_i32x4_s(uA), f32x4.mul(dA, d))), f32x4.mul(mA, s));
        a1 = f32x4.sub(f32x4.add(a1, f32x4.mul(f32x4.convert_i32x4_s(uB), f32x4.mul(dB, d))), f32x4.mul(mB, s));
      } else {
        if (type == Q4_0) {
          const m = v128.load(p + qs - Q_S8);
          uA = i32x4.sub(uA, m); uB = i32x4.sub(uB, m);
        }
        const dA = v128.load(wA + pb - 16), dB = v128.load(wB + pb - 16);
        a0 = madd(f32x4.convert_i32x4_s(uA), f32x4.mul(dA, d), a0);
        a1 = madd(f32x4.convert_i32x4_s(uB), f32x4.mul(dB, d), a1);
      }
    }
  }
  storeTile(out, os, nt, two, a0, a0, a1, a1);
}

/** acc + x·w: i16 lanes += the relaxed 8-bit dot products (i8 form), or i32 lanes += the 16-bit ones. */
// @ts-ignore: decorator
@inline function dotAdd(i8: bool, acc: v128, x: v128, w: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD && i8) return i16x8.add(acc, i16x8.relaxed_dot_i8x16_i7x16_s(x, w));
  return i32x4.add(acc, i32x4.dot_i16x8_s(x, w));
}

/** quad2x2's results: the first nt tokens of rows r (a00: tokens 0..3, a01: 4..7) and, when `two`, r + 1 (a10, a11). */
// @ts-ignore: decorator
@inline function storeTile(out: usize, os: usize, nt: i32, two: bool, a00: v128, a01: v128, a10: v128, a11: v128): void {
  storeLanes(out, os, a00, min(nt, 4));
  if (nt > 4) storeLanes(out + 4 * os, os, a01, nt - 4);
  if (two) {
    storeLanes(out + 4, os, a10, min(nt, 4));
    if (nt > 4) storeLanes(out + 4 + 4 * os, os, a11, nt - 4);
  }
}

/** Stores of each running sum (to scratch space at `out`): keeps V8 from scheduling the products late. */
// @ts-ignore: decorator
@inline function fence4(out: usize, a: v128, b: v128, c: v128, d: v128): void {
  v128.store32_lane(out, a, 0); v128.store32_lane(out, b, 0); v128.store32_lane(out, c, 0); v128.store32_lane(out, d, 0);
}

/** Lanes 0..nt−1 of v at out, out + os, out + 2·os, out + 3·os. */
// @ts-ignore: decorator
@inline function storeLanes(out: usize, os: usize, v: v128, nt: i32): void {
  v128.store32_lane(out, v, 0);
  if (nt > 1) v128.store32_lane(out + os, v, 1);
  if (nt > 2) v128.store32_lane(out + 2 * os, v, 2);
  if (nt > 3) v128.store32_lane(out + 3 * os, v, 3);
}
