// Causal scaled dot-product attention (Vaswani et al. 2017) over the KV cache, with grouped-query
// heads (GQA), for a cache of f32 or f16 values. The cache (src/kv/cache.ts) is stored in blocks of
// BLOCK positions, head-major, and inside a head's block in the order these loops read it (keys in
// tiles of 4 positions × 4 dims, values in 16-dim columns), so every block is read front to back
// with fixed offsets. The two element types share one generic body (T = f32 | u16, resolved at
// compile time). f16 values are widened with the shift-and-mask method of simd.ts half4 but
// without its final ·2^112: the other operand (the query, or the softmax weight) carries that
// factor instead, so a product equals the exact f16 value's (for |q| < 2^16).
// In the tile/column layout an f16 cache also pairs its halves as the f16 weights are paired
// (interleave.ts): each aligned run of 8 halves h0..h7 is stored h0 h4 h1 h5 h2 h6 h3 h7, so one
// 16-byte load gives two four-value vectors (rows4.ts pairLo, pairHi: two instructions each)
// where an unpaired run took two load-and-extends, shifts and masks. Those two vectors are always
// read together: two positions' four dims of a key tile, or dims 0..7 (8..15) of a value row.
import { expSumMax } from './ops';
import { exp4, half, madd } from './simd';
import { dequantGroupHalf, pairHi, pairLo } from './rows4';
import { F16, dequantRow } from './rows';

/**
 * i32 mask sign | exponent | mantissa after the shift, 2^112 (f16 → f32, see simd.ts), i16 pairs
 * (2^13, 0) (pairLo's shift of a lane's low half), i32 masks of a lane's low and high half.
 */
const HC = memory.data<u32>([0x8fffe000, 0x8fffe000, 0x8fffe000, 0x8fffe000, 0x77800000, 0x77800000, 0x77800000, 0x77800000,
  0x2000, 0x2000, 0x2000, 0x2000, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff0000, 0xffff0000, 0xffff0000, 0xffff0000], 16);

/** An f16 cache's paired run of 8 values at p (the first and second four: lo4, hi4); f32: unused. */
// @ts-ignore: decorator
@inline function run8<T>(p: usize): v128 {
  return sizeof<T>() == 4 ? i32x4.splat(0) : v128.load(p);
}

/** Values 0..3 of the run of 8 at p (c = run8<T>(p); m, sel = pairMask<T>(), pairSel<T>()); f16 times 2^−112. */
// @ts-ignore: decorator
@inline function lo4<T>(p: usize, c: v128, m: v128, sel: v128): v128 {
  return sizeof<T>() == 4 ? v128.load(p) : pairLo(false, c, sel, m);
}

/** Values 4..7 of the run of 8 at p (c = run8<T>(p); m = pairMask<T>()); f16 times 2^−112. */
// @ts-ignore: decorator
@inline function hi4<T>(p: usize, c: v128, m: v128): v128 {
  return sizeof<T>() == 4 ? v128.load(p, 16) : pairHi(false, c, m);
}

/** lo4's and hi4's constants, loaded once per kernel call (loads of them inside the loops stayed there). */
// @ts-ignore: decorator
@inline function pairMask<T>(): v128 {
  return sizeof<T>() == 4 ? i32x4.splat(0) : v128.load(HC);
}
// @ts-ignore: decorator
@inline function pairSel<T>(): v128 {
  return sizeof<T>() == 4 ? i32x4.splat(0) : v128.load(HC, 32);
}

/** Four cache values at p as f32x4; f16 values come out times 2^−112 (see the file comment). */
// @ts-ignore: decorator
@inline function load4<T>(p: usize): v128 {
  if (sizeof<T>() == 4) return v128.load(p);
  return v128.and(i32x4.shl(v128.load16x4_s(p), 13), v128.load(HC));
}

/** The factor the other operand carries: 1 for f32, 2^112 for f16. */
// @ts-ignore: decorator
@inline function unscale<T>(): v128 {
  return sizeof<T>() == 4 ? f32x4.splat(1) : v128.load(HC, 16);
}

/** Positions per cache block (src/kv/cache.ts KV_BLOCK). */
const BLOCK = 32;

/**
 * Attention of nTok queries at positions start.. over the KV cache. q, out: (nTok, nHead·headDim)
 * f32; k, v: blocks of BLOCK positions, each (nHeadKv, BLOCK, headDim) (src/kv/cache.ts), holding
 * at least start + nTok positions; `kvHalf` ≠ 0: they hold f16 bits. Computes heads [h0, h1) only
 * (threads split by head). `scores`: attentionScratchBytes(h1 − h0, headDim) bytes of scratch,
 * and with kvHalf = KV_HALF_WIDEN attentionWidenBytes(start + nTok, headDim) bytes after them.
 * Per query and segment of its positions (SEG): every head's scores, block by block (so the keys
 * are read front to back once), then per head exponentiated in place, then the values block by
 * block, each head's weighted sum carried between blocks; the segments are folded in order and
 * the sum scaled by 1/Σ at the end. Decode and prefill take the same steps per (token, head): a
 * position's output does not depend on how the prompt was split into calls, nor on the thread
 * split (attentionSegments + attentionFold take the same steps too).
 */
export function attention(out: usize, q: usize, k: usize, v: usize, nTok: i32, start: i32, nHead: i32, nHeadKv: i32,
  headDim: i32, scale: f32, h0: i32, h1: i32, scores: usize, kvHalf: i32): void {
  if (kvHalf == KV_HALF_WIDEN) widenedAttention(out, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale, h0, h1, scores);
  else if (kvHalf != 0) attentionT<u16>(out, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale, h0, h1, scores, 0, nHeadKv);
  else attentionT<f32>(out, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale, h0, h1, scores, 0, nHeadKv);
}

/**
 * `kvHalf` of an f16 cache in a prefill: each KV head's keys and values are widened to f32 once
 * (into the thread's scratch) for all the queries, and the f32 steps run on them; the products
 * are the exact f16 values' (see the file comment), so the bits are the f16 kernels'. Per KV head
 * rather than the whole layer at once, the copy is (positions × headDim) f32 twice: 64 KiB for
 * 128 positions of 64-dim heads, where the layer's (768-dim KV) took 768 KiB and grew with the
 * context (12 MiB at 2000 positions), kept as staging from then on.
 */
export const KV_HALF_WIDEN = 2;

/** Scratch bytes after attentionScratchBytes' that a widened f16 prefill (KV_HALF_WIDEN) uses: one KV head's keys and values for nPos positions as f32. */
export function attentionWidenBytes(nPos: i32, headDim: i32): usize {
  return <usize>((nPos + BLOCK - 1) / BLOCK) * <usize>(BLOCK * headDim) << 3;
}

/** attention's KV_HALF_WIDEN case: KV head by KV head, its heads within [h0, h1) over its widened keys and values. */
function widenedAttention(out: usize, q: usize, k: usize, v: usize, nTok: i32, start: i32, nHead: i32, nHeadKv: i32,
  headDim: i32, scale: f32, h0: i32, h1: i32, scores: usize): void {
  const group = nHead / nHeadKv, nPos = start + nTok, nBlocks = (nPos + BLOCK - 1) / BLOCK;
  const hv = BLOCK * headDim, hb16 = <usize>hv << 1, hb32 = <usize>hv << 2, bb16 = <usize>nHeadKv * hb16;
  const k32 = scores + attentionScratchBytes(h1 - h0, headDim), v32 = k32 + <usize>nBlocks * hb32;
  for (let j = h0 / group; j * group < h1; j++) {
    for (let b = 0; b < nBlocks; b++) {
      // a tile/column block is widened whole (its rows are not a prefix); plain rows up to the last position
      const n = (headDim & 15) == 0 ? hv : min(BLOCK, nPos - b * BLOCK) * headDim;
      const src = <usize>b * bb16 + <usize>j * hb16, dst = <usize>b * hb32;
      widenCache(k32 + dst, k + src, n, headDim);
      widenCache(v32 + dst, v + src, n, headDim);
    }
    attentionT<f32>(out, q, k32, v32, nTok, start, nHead, nHeadKv, headDim, scale, max(h0, j * group), min(h1, (j + 1) * group), scores, j, 1);
  }
}

// @ts-ignore: decorator
@inline function attentionT<T>(out: usize, q: usize, k: usize, v: usize, nTok: i32, start: i32, nHead: i32, nHeadKv: i32,
  headDim: i32, scale: f32, h0: i32, h1: i32, scores: usize, kv0: i32, kvN: i32): void {
  let t = 0;
  // prefill: two queries at a time share every key and value load (the same steps per query)
  for (; t + 2 <= nTok; t += 2) pairT<T>(out, q, k, v, t, start, nHead, nHeadKv, headDim, scale, h0, h1, scores, kv0, kvN);
  if (t < nTok) singleT<T>(out, q, k, v, t, start, nHead, nHeadKv, headDim, scale, h0, h1, scores, kv0, kvN);
}

/**
 * Positions per attention segment (a multiple of BLOCK). Each query's positions are taken in
 * segments [0, SEG), [SEG, 2·SEG), …: per segment and head the scores' maximum m, Σ = l of
 * exp(score − m) and the unnormalized Σ exp(score − m)·v, then the segments are folded in order
 * (foldSegment) and the sum scaled by 1/l. The segments do not depend on the thread count nor on
 * how the queries were split into calls, so neither do the bits; with one segment the steps are
 * those of a single softmax. Decode with two threads or more gives each thread whole segments
 * (attentionSegments, then attentionFold): each reads one stretch of the cache, all heads, front
 * to back. Split by heads, each thread's part of a 32-position block is a run of a few KiB, and
 * with the cache coming from memory two threads were no faster than one (110M shapes, f16 cache,
 * 12 layers after the caches were evicted, two threads: 65 µs a layer by heads, 50 by segments at
 * 197 positions; 255 and 148 at 1000). Segments of 64 balanced two threads better but cost one
 * thread 10–14% at 1000 positions (each segment's maxima, sums and fold); 128: 4–5%.
 */
const SEG = 128;

/** Bytes of one query's segment scratch for heads [h0, h1): scores (SEG f32 each), then m, l and a segment's sums (headDim f32) each. */
// @ts-ignore: decorator
@inline function segScratch(nh: i32, headDim: i32): usize {
  return <usize>nh * <usize>(SEG + 2 + 2 + headDim) << 2;
}

/**
 * Query t over positions [p0s, p1s) (p0s a multiple of SEG), heads [h0, h1): every head's scores
 * block by block (the keys read front to back once) into scores (SEG f32 per head), per head its
 * maximum and Σ exp (ml + 8·(h − h0): m, l), then the values block by block, each head's
 * unnormalized weighted sum at o + (h − h0)·os (carried there between blocks).
 */
// not inlined: inlined into singleT and pairT (twice each), the larger functions' code made
// one-thread 110M Q4_0 decode 6% slower
function segmentT<T>(o: usize, os: usize, ml: usize, q: usize, k: usize, v: usize, t: i32, p0s: i32, p1s: i32,
  nHead: i32, nHeadKv: i32, headDim: i32, scale: f32, h0: i32, h1: i32, scores: usize, kv0: i32, kvN: i32): void {
  const group = nHead / nHeadKv;
  const hb = <usize>(BLOCK * headDim) * sizeof<T>(), bb = <usize>kvN * hb;
  const fast = (headDim & 15) == 0;
  const sb: usize = SEG << 2;
  const qt = q + (<usize>(t * nHead) * headDim << 2);
  // grouped-query heads (GQA): two query heads of one KV head take the two-query steps (scores2T,
  // weighted2T: each head's steps are scoresT's and weightedT's, so the same bits), and each key
  // and value load serves both. 12 query heads over 3 KV heads, 200 and 1000 positions: with an
  // f32 cache 18–26% faster (SIMD128 build 11–22%); with an f16 cache (relaxed build) the value
  // pairs 1–20% faster (SIMD128 0.93–1.02×, not taken) and the key pairs 2–9% more, in two passes
  // of four sums (scoresHeads2T: scores2T itself gained nothing there, its widening constants
  // leave V8 too few vector registers).
  const pairs = fast && group > 1 && (sizeof<T>() == 4 || ASC_FEATURE_RELAXED_SIMD);
  for (let p0 = p0s; p0 < p1s; p0 += BLOCK) {
    const n = min(BLOCK, p1s - p0), kb = k + <usize>(p0 / BLOCK) * bb;
    for (let h = h0; h < h1; h++) {
      const s = scores + <usize>(h - h0) * sb + (<usize>(p0 - p0s) << 2), qh = qt + (<usize>(h * headDim) << 2), kh = kb + <usize>(h / group - kv0) * hb;
      if (pairs && h + 1 < h1 && (h + 1) / group == h / group) {
        if (sizeof<T>() == 4) scores2T<T>(s, s + sb, qh, qh + (<usize>headDim << 2), kh, n, headDim, scale);
        else scoresHeads2T<T>(s, s + sb, qh, qh + (<usize>headDim << 2), kh, n, headDim, scale);
        h++;
      } else if (fast) scoresT<T>(s, qh, kh, n, headDim, scale);
      else scoresAny<T>(s, qh, kh, n, headDim, scale);
    }
  }
  for (let h = h0; h < h1; h++) expSumMax(scores + <usize>(h - h0) * sb, p1s - p0s, ml + (<usize>(h - h0) << 3), sizeof<T>() == 2);
  for (let p0 = p0s; p0 < p1s; p0 += BLOCK) {
    const n = min(BLOCK, p1s - p0), vb = v + <usize>(p0 / BLOCK) * bb;
    for (let h = h0; h < h1; h++) {
      const w = scores + <usize>(h - h0) * sb + (<usize>(p0 - p0s) << 2), oh = o + <usize>(h - h0) * os, vh = vb + <usize>(h / group - kv0) * hb;
      if (pairs && h + 1 < h1 && (h + 1) / group == h / group) {
        weighted2T<T>(oh, oh + os, vh, w, w + sb, n, n, headDim, p0 == p0s);
        h++;
      } else if (fast) weightedT<T>(oh, vh, w, n, headDim, p0 == p0s);
      else weightedAny<T>(oh, vh, w, n, headDim, p0 == p0s);
    }
  }
}

/**
 * Fold one segment (its maximum and Σ at mls, sums at os) into one head's running maximum and Σ
 * (ml: m, l) and sums (o, headDim f32): with M = max(m, ms), l ← l·e^(m−M) + ls·e^(ms−M) and
 * o ← o·e^(m−M) + os·e^(ms−M).
 */
// @ts-ignore: decorator
@inline function foldSegment(o: usize, ml: usize, os: usize, mls: usize, hd: i32): void {
  const m = load<f32>(ml), ms = load<f32>(mls), ls = load<f32>(mls, 4), mx = max(m, ms);
  const a = f32x4.extract_lane(exp4(f32x4.splat(m - mx)), 0), b = f32x4.extract_lane(exp4(f32x4.splat(ms - mx)), 0);
  store<f32>(ml, mx);
  store<f32>(ml, load<f32>(ml, 4) * a + ls * b, 4);
  const av = f32x4.splat(a), bv = f32x4.splat(b), h4 = hd & ~3;
  let i = 0;
  for (; i < h4; i += 4) {
    const p = <usize>i << 2;
    v128.store(o + p, f32x4.add(f32x4.mul(v128.load(o + p), av), f32x4.mul(v128.load(os + p), bv)));
  }
  for (; i < hd; i++) {
    const p = <usize>i << 2;
    store<f32>(o + p, load<f32>(o + p) * a + load<f32>(os + p) * b);
  }
}

/**
 * foldSegment for nh heads: running sums at o and a segment's at os (hd f32 per head), running
 * (m, l) pairs at ml and the segment's at mls (8 bytes per head).
 */
// @ts-ignore: decorator
@inline function foldHeads(o: usize, ml: usize, os: usize, mls: usize, nh: usize, hd: i32): void {
  const hdb = <usize>hd << 2;
  for (let j: usize = 0; j < nh; j++) foldSegment(o + j * hdb, ml + (j << 3), os + j * hdb, mls + (j << 3), hd);
}

/** normalize for nh heads (sums at o, hd f32 per head; (m, l) pairs at ml). */
// @ts-ignore: decorator
@inline function normalizeHeads(o: usize, ml: usize, nh: usize, hd: i32): void {
  const hdb = <usize>hd << 2;
  for (let j: usize = 0; j < nh; j++) normalize(o + j * hdb, ml + (j << 3), hd);
}

/** o[0..hd) ·= 1/l (ml + 4): the end of a head's fold. */
// @ts-ignore: decorator
@inline function normalize(o: usize, ml: usize, hd: i32): void {
  const inv: f32 = 1 / load<f32>(ml, 4), iv = f32x4.splat(inv), h4 = hd & ~3;
  let i = 0;
  for (; i < h4; i += 4) v128.store(o + (<usize>i << 2), f32x4.mul(v128.load(o + (<usize>i << 2)), iv));
  for (; i < hd; i++) store<f32>(o + (<usize>i << 2), load<f32>(o + (<usize>i << 2)) * inv);
}

/** Query t over positions 0..start+t (see attention), heads [h0, h1): segment by segment, folded in order. */
// @ts-ignore: decorator
@inline function singleT<T>(out: usize, q: usize, k: usize, v: usize, t: i32, start: i32, nHead: i32, nHeadKv: i32,
  headDim: i32, scale: f32, h0: i32, h1: i32, scores: usize, kv0: i32, kvN: i32): void {
  const nPos = start + t + 1, nh = <usize>(h1 - h0), hdb = <usize>headDim << 2;
  const ot = out + (<usize>(t * nHead + h0) * headDim << 2);
  const ml = scores + (nh * SEG << 2), mls = ml + (nh << 3), tmp = mls + (nh << 3);
  // the first segment's sums go straight to the output, the others to tmp and are folded in
  segmentT<T>(ot, hdb, ml, q, k, v, t, 0, min(SEG, nPos), nHead, nHeadKv, headDim, scale, h0, h1, scores, kv0, kvN);
  for (let p = SEG; p < nPos; p += SEG) {
    segmentT<T>(tmp, hdb, mls, q, k, v, t, p, min(p + SEG, nPos), nHead, nHeadKv, headDim, scale, h0, h1, scores, kv0, kvN);
    foldHeads(ot, ml, tmp, mls, nh, headDim);
  }
  normalizeHeads(ot, ml, nh, headDim);
}

/**
 * Queries t (A) and t + 1 (B, one position more) together: each segment's scores, maxima, sums and
 * folds are singleT's for each query (same accumulators, same order), but the key and value loads
 * (and an f16 cache's widening) serve both. Scratch: A's then B's segment scratch (segScratch).
 */
// @ts-ignore: decorator
@inline function pairT<T>(out: usize, q: usize, k: usize, v: usize, t: i32, start: i32, nHead: i32, nHeadKv: i32,
  headDim: i32, scale: f32, h0: i32, h1: i32, scores: usize, kv0: i32, kvN: i32): void {
  const nA = start + t + 1, nB = nA + 1, nh = <usize>(h1 - h0), hdb = <usize>headDim << 2;
  const row = <usize>(nHead * headDim) << 2;
  const oA = out + (<usize>(t * nHead + h0) * headDim << 2), oB = oA + row;
  const sA = scores, mlA = sA + (nh * SEG << 2), mlsA = mlA + (nh << 3), tA = mlsA + (nh << 3);
  const sB = scores + segScratch(<i32>nh, headDim), mlB = sB + (nh * SEG << 2), mlsB = mlB + (nh << 3), tB = mlsB + (nh << 3);
  for (let p = 0; p < nB; p += SEG) {
    const eA = min(p + SEG, nA), eB = min(p + SEG, nB), first = p == 0;
    const dA = first ? oA : tA, dB = first ? oB : tB, mA = first ? mlA : mlsA, mB = first ? mlB : mlsB;
    if (eA > p) segment2T<T>(dA, dB, hdb, mA, mB, q, k, v, t, p, eA, eB, nHead, nHeadKv, headDim, scale, h0, h1, sA, sB, kv0, kvN);
    else segmentT<T>(dB, hdb, mB, q, k, v, t + 1, p, eB, nHead, nHeadKv, headDim, scale, h0, h1, sB, kv0, kvN); // B's last position opens a segment
    if (first) continue;
    if (eA > p) foldHeads(oA, mlA, tA, mlsA, nh, headDim);
    foldHeads(oB, mlB, tB, mlsB, nh, headDim);
  }
  normalizeHeads(oA, mlA, nh, headDim);
  normalizeHeads(oB, mlB, nh, headDim);
}

/**
 * segmentT for queries t (A: positions [p0s, eA)) and t + 1 (B: [p0s, eB), eB ≤ eA + 1), sharing
 * every key and value load; each query's steps are segmentT's. Scores of A at sa, of B at sb.
 */
function segment2T<T>(oa: usize, ob: usize, os: usize, mla: usize, mlb: usize, q: usize, k: usize, v: usize, t: i32,
  p0s: i32, eA: i32, eB: i32, nHead: i32, nHeadKv: i32, headDim: i32, scale: f32, h0: i32, h1: i32, sa: usize, sb: usize, kv0: i32, kvN: i32): void {
  const group = nHead / nHeadKv;
  const hb = <usize>(BLOCK * headDim) * sizeof<T>(), bb = <usize>kvN * hb;
  const fast = (headDim & 15) == 0;
  const ss: usize = SEG << 2;
  const row = <usize>(nHead * headDim) << 2;
  const qA = q + <usize>t * row;
  for (let p0 = p0s; p0 < eB; p0 += BLOCK) {
    const cA = max(0, min(BLOCK, eA - p0)), cB = min(BLOCK, eB - p0), kb = k + <usize>(p0 / BLOCK) * bb;
    for (let h = h0; h < h1; h++) {
      const o = <usize>(h - h0) * ss + (<usize>(p0 - p0s) << 2), hq = <usize>(h * headDim) << 2, kh = kb + <usize>(h / group - kv0) * hb;
      if (fast) {
        if (cA > 0) scores2T<T>(sa + o, sb + o, qA + hq, qA + row + hq, kh, cA, headDim, scale);
        if (cB > cA) scoreOneT<T>(sb + o, qA + row + hq, kh, cA, headDim, scale);
      } else {
        if (cA > 0) scoresAny<T>(sa + o, qA + hq, kh, cA, headDim, scale);
        scoresAny<T>(sb + o, qA + row + hq, kh, cB, headDim, scale);
      }
    }
  }
  for (let h = h0; h < h1; h++) {
    const j = <usize>(h - h0);
    expSumMax(sa + j * ss, eA - p0s, mla + (j << 3), sizeof<T>() == 2);
    expSumMax(sb + j * ss, eB - p0s, mlb + (j << 3), sizeof<T>() == 2);
  }
  for (let p0 = p0s; p0 < eB; p0 += BLOCK) {
    const cA = max(0, min(BLOCK, eA - p0)), cB = min(BLOCK, eB - p0), vb = v + <usize>(p0 / BLOCK) * bb;
    const first = p0 == p0s;
    for (let h = h0; h < h1; h++) {
      const j = <usize>(h - h0), o = j * ss + (<usize>(p0 - p0s) << 2), vh = vb + <usize>(h / group - kv0) * hb;
      const dA = oa + j * os, dB = ob + j * os;
      if (fast && cA > 0) weighted2T<T>(dA, dB, vh, sa + o, sb + o, cA, cB, headDim, first);
      else if (fast) weightedT<T>(dB, vh, sb + o, cB, headDim, first);
      else {
        if (cA > 0) weightedAny<T>(dA, vh, sa + o, cA, headDim, first);
        weightedAny<T>(dB, vh, sb + o, cB, headDim, first);
      }
    }
  }
}

/**
 * Decode of one query at position start over segments [s0, s1), all heads: each (segment, head)'s
 * maximum, Σ and unnormalized sums into partials (per segment: nHead·headDim f32 of sums, then
 * nHead (m, l) pairs) for attentionFold. The pool deals each thread a run of whole segments, so
 * each thread reads one stretch of the cache front to back. scores: segScratch(nHead, headDim) bytes.
 */
export function attentionSegments(partials: usize, q: usize, k: usize, v: usize, start: i32, nHead: i32, nHeadKv: i32,
  headDim: i32, scale: f32, s0: i32, s1: i32, scores: usize, kvHalf: i32): void {
  const nPos = start + 1, hdb = <usize>headDim << 2, rec = <usize>nHead * (hdb + 8);
  for (let s = s0; s < s1; s++) {
    const o = partials + <usize>s * rec, ml = o + <usize>nHead * hdb, p = s * SEG, e = min(p + SEG, nPos);
    if (kvHalf != 0) segmentT<u16>(o, hdb, ml, q, k, v, 0, p, e, nHead, nHeadKv, headDim, scale, 0, nHead, scores, 0, nHeadKv);
    else segmentT<f32>(o, hdb, ml, q, k, v, 0, p, e, nHead, nHeadKv, headDim, scale, 0, nHead, scores, 0, nHeadKv);
  }
}

/** Segments of attention over nPos positions (decode: start + 1). */
export function attentionSegmentCount(nPos: i32): i32 {
  return (nPos + SEG - 1) / SEG;
}

/** Scratch bytes attention needs per thread for nh heads (two queries' segment scratch: prefill pairs). */
export function attentionScratchBytes(nh: i32, headDim: i32): usize {
  return segScratch(nh, headDim) << 1;
}

/**
 * out (nHead·headDim f32) = the fold of attentionSegments' nSeg segments, in order, as singleT
 * folds them (the same bits): the first segment's sums copied, the others folded in, then 1/l.
 */
export function attentionFold(out: usize, partials: usize, nSeg: i32, nHead: i32, headDim: i32): void {
  const hdb = <usize>headDim << 2, rec = <usize>nHead * (hdb + 8), sums = <usize>nHead * hdb, nh = <usize>nHead;
  // the first segment's (m, l) pairs (at partials + sums) become the running ones
  memory.copy(out, partials, sums);
  for (let s = 1; s < nSeg; s++) {
    const base = partials + <usize>s * rec;
    foldHeads(out, partials + sums, base, base + sums, nh, headDim);
  }
  normalizeHeads(out, partials + sums, nh, headDim);
}

/**
 * s[p] = scale · q·k_p for the n positions of one head's key block (kv/cache.ts: tiles of 4
 * positions × 4 dims, so the four-key loop reads 64 consecutive bytes per step; hd a multiple of
 * 16). Each position's sum runs in one accumulator in dimension order, lanes summed as
 * ((0+2)+(1+3)): the same steps in the four-wide loop and the tail.
 */
// @ts-ignore: decorator
@inline function scoresT<T>(s: usize, q: usize, k: usize, n: i32, hd: i32, scale: f32): void {
  const es = <usize>sizeof<T>(), tile = <usize>(hd << 2) * es;
  const sc = f32x4.splat(scale), u = unscale<T>(), m = pairMask<T>(), sel = pairSel<T>();
  let p = 0;
  for (; p + 4 <= n; p += 4) {
    const kt = k + <usize>(p >> 2) * tile;
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    for (let i = 0; i < hd; i += 4) {
      const x = query<T>(q + (<usize>i << 2), u), o = kt + (<usize>i << 2) * es, o2 = o + 8 * es;
      const c = run8<T>(o), d = run8<T>(o2);
      a0 = madd(lo4<T>(o, c, m, sel), x, a0); a1 = madd(hi4<T>(o, c, m), x, a1);
      a2 = madd(lo4<T>(o2, d, m, sel), x, a2); a3 = madd(hi4<T>(o2, d, m), x, a3);
    }
    v128.store(s + (<usize>p << 2), f32x4.mul(sums4(a0, a1, a2, a3), sc));
  }
  for (; p < n; p++) scoreOneT<T>(s, q, k, p, hd, scale);
}

/** scoresT for two queries (qa → sa, qb → sb) over the same n positions, sharing the key loads. */
// @ts-ignore: decorator
@inline function scores2T<T>(sa: usize, sb: usize, qa: usize, qb: usize, k: usize, n: i32, hd: i32, scale: f32): void {
  const es = <usize>sizeof<T>(), tile = <usize>(hd << 2) * es;
  const sc = f32x4.splat(scale), u = unscale<T>(), m = pairMask<T>(), sel = pairSel<T>();
  let p = 0;
  for (; p + 4 <= n; p += 4) {
    const kt = k + <usize>(p >> 2) * tile;
    let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    for (let i = 0; i < hd; i += 4) {
      const x = query<T>(qa + (<usize>i << 2), u), y = query<T>(qb + (<usize>i << 2), u), o = kt + (<usize>i << 2) * es, o2 = o + 8 * es;
      const c = run8<T>(o), d = run8<T>(o2);
      const k0 = lo4<T>(o, c, m, sel), k1 = hi4<T>(o, c, m), k2 = lo4<T>(o2, d, m, sel), k3 = hi4<T>(o2, d, m);
      a0 = madd(k0, x, a0); a1 = madd(k1, x, a1); a2 = madd(k2, x, a2); a3 = madd(k3, x, a3);
      b0 = madd(k0, y, b0); b1 = madd(k1, y, b1); b2 = madd(k2, y, b2); b3 = madd(k3, y, b3);
    }
    v128.store(sa + (<usize>p << 2), f32x4.mul(sums4(a0, a1, a2, a3), sc));
    v128.store(sb + (<usize>p << 2), f32x4.mul(sums4(b0, b1, b2, b3), sc));
  }
  for (; p < n; p++) {
    const kp = keyAt<T>(k, p, tile);
    let a = f32x4.splat(0), b = a;
    for (let i = 0; i < hd; i += 4) {
      const kv = key4<T>(kp + (<usize>i << 2) * es, p, m, sel);
      a = madd(kv, query<T>(qa + (<usize>i << 2), u), a);
      b = madd(kv, query<T>(qb + (<usize>i << 2), u), b);
    }
    store<f32>(sa + (<usize>p << 2), lanesSum(a, sc));
    store<f32>(sb + (<usize>p << 2), lanesSum(b, sc));
  }
}

/**
 * scores2T for two query heads over an f16 cache's key block: the same sums per head and position
 * (so scoresT's bits), but each tile step's two paired runs are taken in two passes, four sums at a
 * time: with scores2T's eight sums, four keys, two queries and the widening constants V8 ran out
 * of vector registers. Each run is widened once for both heads.
 */
// @ts-ignore: decorator
@inline function scoresHeads2T<T>(sa: usize, sb: usize, qa: usize, qb: usize, k: usize, n: i32, hd: i32, scale: f32): void {
  const es = <usize>sizeof<T>(), tile = <usize>(hd << 2) * es;
  const sc = f32x4.splat(scale), u = unscale<T>(), m = pairMask<T>(), sel = pairSel<T>();
  let p = 0;
  for (; p + 4 <= n; p += 4) {
    const kt = k + <usize>(p >> 2) * tile;
    let ha = f32x4.splat(0), hb = ha;
    for (let g: usize = 0; g < 2; g++) {
      // positions p, p + 1 (the first run of each tile step), then p + 2, p + 3; each pair of
      // sums takes sums4's first step, the second pass its last
      let a0 = f32x4.splat(0), a1 = a0, b0 = a0, b1 = a0;
      for (let i = 0; i < hd; i += 4) {
        const x = query<T>(qa + (<usize>i << 2), u), y = query<T>(qb + (<usize>i << 2), u), o = kt + (<usize>i << 2) * es + g * 8 * es;
        const c = run8<T>(o);
        const k0 = lo4<T>(o, c, m, sel), k1 = hi4<T>(o, c, m);
        a0 = madd(k0, x, a0); a1 = madd(k1, x, a1);
        b0 = madd(k0, y, b0); b1 = madd(k1, y, b1);
      }
      const ta = sumsHalf(a0, a1), tb = sumsHalf(b0, b1);
      if (g == 0) { ha = ta; hb = tb; continue; }
      v128.store(sa + (<usize>p << 2), f32x4.mul(sumsJoin(ha, ta), sc));
      v128.store(sb + (<usize>p << 2), f32x4.mul(sumsJoin(hb, tb), sc));
    }
  }
  for (; p < n; p++) { scoreOneT<T>(sa, qa, k, p, hd, scale); scoreOneT<T>(sb, qb, k, p, hd, scale); }
}

/** s[p] of scoresT for the one position p of the block (its tail steps, the same as in the four-wide loop). */
// @ts-ignore: decorator
@inline function scoreOneT<T>(s: usize, q: usize, k: usize, p: i32, hd: i32, scale: f32): void {
  const es = <usize>sizeof<T>(), tile = <usize>(hd << 2) * es, u = unscale<T>();
  const kp = keyAt<T>(k, p, tile);
  let a = f32x4.splat(0);
  const m = pairMask<T>(), sel = pairSel<T>();
  for (let i = 0; i < hd; i += 4) a = madd(key4<T>(kp + (<usize>i << 2) * es, p, m, sel), query<T>(q + (<usize>i << 2), u), a);
  store<f32>(s + (<usize>p << 2), lanesSum(a, f32x4.splat(scale)));
}

/**
 * Where position p's dims 0..3 sit in its key block k (tiles of `tile` bytes): f32, its row of
 * the tile; f16, the paired run holding it and the position next to it (see key4).
 */
// @ts-ignore: decorator
@inline function keyAt<T>(k: usize, p: i32, tile: usize): usize {
  return k + <usize>(p >> 2) * tile + (sizeof<T>() == 4 ? <usize>((p & 3) << 4) : <usize>((p & 2) << 3));
}

/** One position's four key dims at kp (keyAt, plus the dims' offset): f16, the half of the paired run that is p's. */
// @ts-ignore: decorator
@inline function key4<T>(kp: usize, p: i32, m: v128, sel: v128): v128 {
  if (sizeof<T>() == 4) return v128.load(kp);
  const c = v128.load(kp);
  return p & 1 ? hi4<T>(kp, c, m) : lo4<T>(kp, c, m, sel);
}

/** (lanes ((0+2)+(1+3))) · scale: scoresT's reduction of one position's accumulator. */
// @ts-ignore: decorator
@inline function lanesSum(a: v128, sc: v128): f32 {
  const t = f32x4.add(a, v128.shuffle<f32>(a, a, 2, 3, 0, 1));
  return f32x4.extract_lane(f32x4.mul(f32x4.add(t, v128.shuffle<f32>(t, t, 1, 0, 3, 2)), sc), 0);
}

/** Four query values at p, times 2^112 for an f16 cache (see the file comment). */
// @ts-ignore: decorator
@inline function query<T>(p: usize, u: v128): v128 {
  return sizeof<T>() == 4 ? v128.load(p) : f32x4.mul(v128.load(p), u);
}

/**
 * One cache block's share of a head's output: o[0..hd) += Σ_p w[p]·v_p over the block's n
 * positions (kv/cache.ts: 16-dim columns of BLOCK rows, so each pass reads consecutive bytes; hd
 * a multiple of 16), starting from 0 when `first` (unnormalized: the fold scales by 1/Σ). Per column four
 * accumulators take two positions per step, a += (w_p·v_p + w_{p+1}·v_{p+1}), so the
 * loop-carried chain is one add per two positions; pairs start at even positions (blocks hold an
 * even number of them).
 */
// @ts-ignore: decorator
@inline function weightedT<T>(o: usize, v: usize, w: usize, n: i32, hd: i32, first: bool): void {
  const col = <usize>(BLOCK << 4) * <usize>sizeof<T>();
  for (let d = 0; d < hd; d += 16) weightedColumn<T>(o + (<usize>d << 2), v + <usize>(d >> 4) * col, w, 0, n, first);
}

/**
 * weightedT's steps for one 16-dim column (od: its four output vectors, vd: its value rows) over
 * positions [p0, n) (p0 even), continuing the sums stored at od unless `first`.
 */
// @ts-ignore: decorator
@inline function weightedColumn<T>(od: usize, vd: usize, w: usize, p0: i32, n: i32, first: bool): void {
  const es = <usize>sizeof<T>(), m = pairMask<T>(), sel = pairSel<T>();
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  if (!first) { a0 = v128.load(od); a1 = v128.load(od, 16); a2 = v128.load(od, 32); a3 = v128.load(od, 48); }
  let p = p0;
  for (; p + 2 <= n; p += 2) {
    const r = vd + (<usize>p << 4) * es;
    const s0 = v128.load32_splat(w + (<usize>p << 2)), s1 = v128.load32_splat(w + (<usize>p << 2), 4);
    // position p's dims 0..7 (runs at r, r + 8) and 8..15, then p + 1's (r + 16, r + 24)
    const r1 = r + 8 * es, r2 = r + 16 * es, r3 = r + 24 * es;
    const c0 = run8<T>(r), c1 = run8<T>(r1), c2 = run8<T>(r2), c3 = run8<T>(r3);
    a0 = f32x4.add(a0, madd(lo4<T>(r2, c2, m, sel), s1, f32x4.mul(lo4<T>(r, c0, m, sel), s0)));
    a1 = f32x4.add(a1, madd(hi4<T>(r2, c2, m), s1, f32x4.mul(hi4<T>(r, c0, m), s0)));
    a2 = f32x4.add(a2, madd(lo4<T>(r3, c3, m, sel), s1, f32x4.mul(lo4<T>(r1, c1, m, sel), s0)));
    a3 = f32x4.add(a3, madd(hi4<T>(r3, c3, m), s1, f32x4.mul(hi4<T>(r1, c1, m), s0)));
  }
  if (p < n) {
    const r = vd + (<usize>p << 4) * es, r1 = r + 8 * es;
    const s0 = v128.load32_splat(w + (<usize>p << 2));
    const c0 = run8<T>(r), c1 = run8<T>(r1);
    a0 = madd(lo4<T>(r, c0, m, sel), s0, a0); a1 = madd(hi4<T>(r, c0, m), s0, a1);
    a2 = madd(lo4<T>(r1, c1, m, sel), s0, a2); a3 = madd(hi4<T>(r1, c1, m), s0, a3);
  }
  v128.store(od, a0); v128.store(od, a1, 16); v128.store(od, a2, 32); v128.store(od, a3, 48);
}

/**
 * weightedT for two queries over one block: A (weights wa, nA positions) and B (wb, nB = nA or
 * nA + 1 positions), sharing the value loads. Each query takes weightedT's steps: pairs from
 * position 0, then a single last position when its count is odd.
 */
// @ts-ignore: decorator
@inline function weighted2T<T>(oa: usize, ob: usize, v: usize, wa: usize, wb: usize, nA: i32, nB: i32, hd: i32,
  first: bool): void {
  const es = <usize>sizeof<T>(), col = <usize>(BLOCK << 4) * es;
  const m = pairMask<T>(), sel = pairSel<T>();
  const e = nA & ~1;
  for (let d = 0; d < hd; d += 16) {
    const vd = v + <usize>(d >> 4) * col, da = oa + (<usize>d << 2), db = ob + (<usize>d << 2);
    // the column's dims 0..7, then 8..15: four sums per query at a time. All sixteen at once,
    // with the four weights and the values, did not fit x64's 16 vector registers: per 12 heads
    // of 64, 127 or 512 queries, this is 5–13% faster (relaxed build), 15% (SIMD128), the same
    // bits. (Splitting scores2T's eight sums the same way was 14% slower: the queries are then
    // loaded twice.)
    for (let g: usize = 0; g < 2; g++) {
      const vg = vd + g * 8 * es, ga = da + (g << 5), gb = db + (g << 5);
      let a0 = f32x4.splat(0), a1 = a0, b0 = a0, b1 = a0;
      if (!first) { a0 = v128.load(ga); a1 = v128.load(ga, 16); b0 = v128.load(gb); b1 = v128.load(gb, 16); }
      for (let p = 0; p < e; p += 2) {
        // position p's dims (run at r), then p + 1's (r + 16 values)
        const r = vg + (<usize>p << 4) * es, r2 = r + 16 * es;
        const s0 = v128.load32_splat(wa + (<usize>p << 2)), s1 = v128.load32_splat(wa + (<usize>p << 2), 4);
        const t0 = v128.load32_splat(wb + (<usize>p << 2)), t1 = v128.load32_splat(wb + (<usize>p << 2), 4);
        const c = run8<T>(r), d2 = run8<T>(r2);
        let x = lo4<T>(r, c, m, sel), y = lo4<T>(r2, d2, m, sel);
        a0 = f32x4.add(a0, madd(y, s1, f32x4.mul(x, s0))); b0 = f32x4.add(b0, madd(y, t1, f32x4.mul(x, t0)));
        x = hi4<T>(r, c, m); y = hi4<T>(r2, d2, m);
        a1 = f32x4.add(a1, madd(y, s1, f32x4.mul(x, s0))); b1 = f32x4.add(b1, madd(y, t1, f32x4.mul(x, t0)));
      }
      v128.store(ga, a0); v128.store(ga, a1, 16);
      v128.store(gb, b0); v128.store(gb, b1, 16);
    }
    // the positions from e on (A: one, when nA is odd; B: one or two): the one-query steps,
    // continuing from the sums stored
    weightedColumn<T>(da, vd, wa, e, nA, false);
    weightedColumn<T>(db, vd, wb, e, nB, false);
  }
}

/** scoresT for other head sizes (rows of hd values): four dims at a time, then the rest. */
// @ts-ignore: decorator
@inline function scoresAny<T>(s: usize, q: usize, k: usize, n: i32, hd: i32, scale: f32): void {
  const es = <usize>sizeof<T>(), u = unscale<T>(), h4 = hd & ~3;
  for (let p = 0; p < n; p++) {
    const kp = k + <usize>(p * hd) * es;
    let a = f32x4.splat(0);
    for (let i = 0; i < h4; i += 4) a = madd(load4<T>(kp + <usize>i * es), query<T>(q + (<usize>i << 2), u), a);
    let t: f32 = (f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 2)) + (f32x4.extract_lane(a, 1) + f32x4.extract_lane(a, 3));
    for (let i = h4; i < hd; i++) t += value<T>(kp + <usize>i * es) * load<f32>(q + (<usize>i << 2));
    store<f32>(s + (<usize>p << 2), t * scale);
  }
}

/** weightedT for other head sizes (rows of hd values): four dims at a time, then the rest. */
// @ts-ignore: decorator
@inline function weightedAny<T>(o: usize, v: usize, w: usize, n: i32, hd: i32, first: bool): void {
  const es = <usize>sizeof<T>(), h4 = hd & ~3;
  for (let d = 0; d < h4; d += 4) {
    const od = o + (<usize>d << 2);
    let a = first ? f32x4.splat(0) : v128.load(od);
    for (let p = 0; p < n; p++) {
      a = madd(load4<T>(v + <usize>(p * hd + d) * es), v128.load32_splat(w + (<usize>p << 2)), a);
    }
    v128.store(od, a);
  }
  for (let i = h4; i < hd; i++) {
    let a: f32 = first ? 0 : load<f32>(o + (<usize>i << 2));
    // the weights of an f16 cache come times 2^112 (expSumMax); value<T> is exact: take it back (exact)
    for (let p = 0; p < n; p++) a += (sizeof<T>() == 4 ? load<f32>(w + (<usize>p << 2)) : load<f32>(w + (<usize>p << 2)) * 1.925929944387236e-34) * value<T>(v + <usize>(p * hd + i) * es);
    store<f32>(o + (<usize>i << 2), a);
  }
}

/** One cache value at p as f32 (exact). */
// @ts-ignore: decorator
@inline function value<T>(p: usize): f32 {
  if (sizeof<T>() == 4) return load<f32>(p);
  return half(<u32>load<u16>(p));
}

/** [Σa, Σb, Σc, Σd] for four f32x4, each summed as ((0+2)+(1+3)). */
// @ts-ignore: decorator
@inline function sums4(a: v128, b: v128, c: v128, d: v128): v128 {
  return sumsJoin(sumsHalf(a, b), sumsHalf(c, d));
}

/** sums4's first step for two of its vectors: [a0+a2, a1+a3, b0+b2, b1+b3]. */
// @ts-ignore: decorator
@inline function sumsHalf(a: v128, b: v128): v128 {
  return f32x4.add(v128.shuffle<f32>(a, b, 0, 1, 4, 5), v128.shuffle<f32>(a, b, 2, 3, 6, 7));
}

/** sums4's last step: [Σa, Σb, Σc, Σd] from sumsHalf(a, b) and sumsHalf(c, d). */
// @ts-ignore: decorator
@inline function sumsJoin(ab: v128, cd: v128): v128 {
  return f32x4.add(v128.shuffle<f32>(ab, cd, 0, 2, 4, 6), v128.shuffle<f32>(ab, cd, 1, 3, 5, 7));
}

/**
 * Append nTok positions to one layer's keys (`keys` ≠ 0) or values: src holds nTok rows of
 * heads·headDim f32; row t's head h goes to position pos0 + t of head h in dst (src/kv/cache.ts
 * kvIndex: blocks of BLOCK positions, head-major; key tiles and value columns when headDim is a
 * multiple of 16, rows otherwise), as f32 or (half ≠ 0) as f16 bits (storeHalf's rounding).
 */
export function storeKV(dst: usize, src: usize, nTok: i32, heads: i32, headDim: i32, pos0: i32, half: i32, keys: i32): void {
  storeKVHeads(dst, src, nTok, heads, headDim, pos0, half, keys, 0, heads);
}

/** storeKV of heads [h0, h1) only (the thread pool's chunks: each head's blocks are its own). */
export function storeKVHeads(dst: usize, src: usize, nTok: i32, heads: i32, headDim: i32, pos0: i32, half: i32, keys: i32, h0: i32, h1: i32): void {
  const es: usize = half != 0 ? 2 : 4;
  const laid = (headDim & 15) == 0;
  for (let t = 0; t < nTok; t++) {
    const p = pos0 + t, b = p / BLOCK, r = p - b * BLOCK;
    for (let h = h0; h < h1; h++) {
      const sp = src + (<usize>(t * heads + h) * <usize>headDim << 2);
      const base = dst + <usize>((b * heads + h) * BLOCK * headDim) * es;
      if (!laid) { put(base + <usize>(r * headDim) * es, sp, headDim, half); continue; }
      // keys: four values at a time into their tile; values: sixteen at a time into their column
      // (f16: paired runs of 8, see the file comment; a key's four values are every other half
      // of the run it shares with the position next to it)
      if (keys != 0 && half != 0) {
        const dp = base + <usize>((r >> 2) * 4 * headDim + ((r & 2) << 2)) * es;
        for (let i = 0; i < headDim; i += 4) pairedKeyTo(dp + (<usize>i << 2) * es, sp + (<usize>i << 2), r & 1);
      } else if (keys != 0) {
        const dp = base + <usize>((r >> 2) * 4 * headDim + ((r & 3) << 2)) * es;
        for (let i = 0; i < headDim; i += 4) put(dp + (<usize>i << 2) * es, sp + (<usize>i << 2), 4, half);
      } else if (half != 0) {
        const dp = base + <usize>(r << 4) * es;
        for (let i = 0; i < headDim; i += 16) {
          const d = dp + <usize>((i >> 4) * BLOCK * 16) * es, x = sp + (<usize>i << 2);
          pairedTo(d, x);
          pairedTo(d + 16, x + 32);
        }
      } else {
        const dp = base + <usize>(r << 4) * es;
        for (let i = 0; i < headDim; i += 16) put(dp + <usize>((i >> 4) * BLOCK * 16) * es, sp + (<usize>i << 2), 16, half);
      }
    }
  }
}

/**
 * n f32 from src to dst as f32, or (half ≠ 0) as f16 bits. The key tiles' and value columns' runs
 * of 4 and 16 are converted here, inline: as calls to storeHalf (one per four keys) they cost
 * storeKV about as much as the conversions.
 */
// @ts-ignore: decorator
@inline function put(dst: usize, src: usize, n: i32, half: i32): void {
  if (half != 0) {
    if (n == 4) half4To(dst, src);
    else if (n == 16) { half4To(dst, src); half4To(dst + 8, src + 16); half4To(dst + 16, src + 32); half4To(dst + 24, src + 48); }
    else storeHalf(dst, src, n);
  } else memory.copy(dst, src, <usize>n << 2);
}

/** Eight f32 at src as a paired run of f16 bits at dst (h0 h4 h1 h5 h2 h6 h3 h7). */
// @ts-ignore: decorator
@inline function pairedTo(dst: usize, src: usize): void {
  v128.store(dst, v128.or(toHalf4(v128.load(src)), i32x4.shl(toHalf4(v128.load(src, 16)), 16)));
}

/** Four f32 at src as f16 bits into the low (odd = 0) or high halves of the paired run at dst; the other halves kept. */
// @ts-ignore: decorator
@inline function pairedKeyTo(dst: usize, src: usize, odd: i32): void {
  const h = toHalf4(v128.load(src)), c = v128.load(dst);
  v128.store(dst, odd != 0 ? v128.or(v128.and(c, v128.load(HC, 48)), i32x4.shl(h, 16)) : v128.or(v128.and(c, v128.load(HC, 64)), h));
}

/**
 * dst (n f32) = the first n values of one layer's f16 cache at src, in the f32 cache's layout
 * (src/kv/cache.ts kvIndex): the paired runs of the tile/column layout (head sizes that are
 * multiples of 16; n then a multiple of 8) put back in order, rows converted as they are. Exact.
 */
function widenCache(dst: usize, src: usize, n: i32, headDim: i32): void {
  if ((headDim & 15) == 0) dequantGroupHalf(false, src, dst, n);
  else dequantRow(F16, src, dst, n);
}

/** Four f32 at src as f16 bits at dst (storeHalf's step). */
// @ts-ignore: decorator
@inline function half4To(dst: usize, src: usize): void {
  const h = toHalf4(v128.load(src));
  v128.store64_lane(dst, i16x8.narrow_i32x4_u(h, h), 0);
}

/**
 * dst[i] = f16 bits of src[i] (f32), rounded to nearest even, for n values: the KV cache write.
 * Overflow gives ±inf, NaN a quiet NaN (0x7e00), values below half the smallest subnormal ±0;
 * bit-identical to src/format/dtypes.ts f32ToF16.
 */
export function storeHalf(dst: usize, src: usize, n: i32): void {
  let i = 0;
  for (; i + 4 <= n; i += 4) half4To(dst + (<usize>i << 1), src + (<usize>i << 2));
  for (; i < n; i++) store<u16>(dst + (<usize>i << 1), <u16>i32x4.extract_lane(toHalf4(f32x4.splat(load<f32>(src + (<usize>i << 2)))), 0));
}

/**
 * Four f32 → f16 bit patterns in i32 lanes (round to nearest even). Normal results: rebias the
 * exponent and round the 13 dropped mantissa bits in integer arithmetic (+0xfff, +1 if the kept
 * lsb is odd). Subnormal results: add 0.5 as a float so the FPU rounds the value into the low
 * mantissa bits, then take them. Inf/NaN/overflow are selected separately.
 */
// @ts-ignore: decorator
@inline function toHalf4(x: v128): v128 {
  const sign = v128.and(x, i32x4.splat(0x80000000));
  const a = v128.xor(x, sign); // |x| bits
  // normal range: ((a >> 13) & 1) + a + ((15 − 127) << 23) + 0xfff, then >> 13
  const odd = v128.and(i32x4.shr_u(a, 13), i32x4.splat(1));
  const nrm = i32x4.shr_u(i32x4.add(i32x4.add(a, i32x4.splat(((15 - 127) << 23) + 0xfff)), odd), 13);
  // subnormal range (|x| < 2^−14): |x| + 0.5 puts round(|x|·2^24) in the low mantissa bits
  const sub = i32x4.sub(f32x4.add(a, f32x4.splat(0.5)), i32x4.splat(0x3f000000));
  let h = v128.bitselect(sub, nrm, i32x4.lt_s(a, i32x4.splat(113 << 23)));
  // |x| ≥ 65520 (rounds past the largest f16) → inf; NaN → 0x7e00
  h = v128.bitselect(i32x4.splat(0x7c00), h, i32x4.ge_s(a, i32x4.splat((127 + 16) << 23)));
  h = v128.bitselect(i32x4.splat(0x7e00), h, i32x4.gt_s(a, i32x4.splat(0x7f800000)));
  return v128.or(h, i32x4.shr_u(sign, 16));
}

