// Decode matrix-vector kernels over row-interleaved weights: the backend rearranges a weight
// matrix once at load (interleaveRows) so that each group of four rows is stored chunk by chunk
// (row 0 chunk 0, row 1 chunk 0, row 2 chunk 0, row 3 chunk 0, row 0 chunk 1, ...; a chunk is one
// quant block (for Q4_K one 256-value super-block), or 16 f32/f16/bf16 values). Each chunk keeps
// its GGUF encoding; only the order changes, in place, with no copy of the weights (llama.cpp's
// CPU backend repacks Q4_0 the same way).
// A decode step then reads the four rows as one sequential stream and loads each activation
// vector once for four rows. Reading four separate rows side by side instead measured 2-4× slower
// per byte on our 2-core machine (the hardware prefetcher follows one stream, not four).
//
// Every kernel takes the first row w, the row stride rs and the chunk stride cs: interleaved
// groups use (rs, cs) = (chunk bytes, 4·chunk bytes); one row in GGUF order uses rs = 0 and
// cs = chunk bytes (four copies of the same row; lane 0 is kept). Each lane's arithmetic depends
// only on its own row, so a row's value is bit-identical in both uses, whatever the grouping or
// thread split. Q4_0 and Q8_0 are the exceptions: their groups are also transposed inside each
// block (see interleave.ts), so rows4Q4_0 and rows4Q8_0 read whole groups only. Results come back
// as one f32x4 (lane j = row j). The Q8_0/Q4_0 kernels add each block's scaled sum with a fused
// multiply-add in the relaxed build (Q4_0 decode 10% faster on a Zen 5 core: one instruction less
// per block and a shorter chain); their prefill (panel.ts) is not tied to them bit for bit, only
// to the int8 error bound.
import { half4Seq, halfK4, madd, reduce4, reduce4i16 } from './simd';
import { QC, k45Quants, reduce4i16w, subK } from './q8';

/** i16x8 / i8x16 / f32 constants (see q8.ts QC for why loop constants live in memory). */
const C4 = memory.data<u16>([
  15, 15, 15, 15, 15, 15, 15, 15, // +0: i16 0x000f
  0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, // +16: bytes 0x0f
  0xe000, 0x8fff, 0xe000, 0x8fff, 0xe000, 0x8fff, 0xe000, 0x8fff, // +32: f16 → f32 mask (i32)
  0, 0x7780, 0, 0x7780, 0, 0x7780, 0, 0x7780, // +48: 2^112 (f32)
  1, 1, 1, 1, 1, 1, 1, 1, // +64: i16 ones
  8192, 0, 8192, 0, 8192, 0, 8192, 0, // +80: i16 pairs (2^13, 0): the low half of each lane, shifted
  0, 0, 0, 0, 0, 0, 0, 0, // +96: (unused)
  0, 0xffff, 0, 0xffff, 0, 0xffff, 0, 0xffff, // +112: the high half of each lane (bf16)
  0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f, // +128: bytes 0x3f (Q4_K 6-bit scales)
  0x0303, 0x0303, 0x0303, 0x0303, 0x0303, 0x0303, 0x0303, 0x0303, // +144: bytes 0x03
  0xffff, 0, 0xffff, 0, 0xffff, 0, 0xffff, 0, // +160: the low half of each lane
  0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, // +176: i32 0xff
], 16);

/**
 * Four f32 rows of n values (n a multiple of 16; a chunk is 16 values) · x. One accumulator per
 * row, multiply-adds in element order: lane for lane the steps of the prefill tile group4x2F32,
 * so a token's logits are the same bits whether it was decoded or prefilled. `fence`: 4 bytes of
 * this thread's scratch (see rows4F32Steps).
 */
export function rows4F32(w: usize, rs: usize, cs: usize, x: usize, n: i32, fence: usize): v128 {
  return rows4F32Steps(w, rs, cs, x, n, 0, true, true, fence);
}

/**
 * rows4F32 over a run of chunks that continues (first = false) or starts (first = true) the four
 * rows' accumulators kept at acc (four f32x4, 64 bytes): n more values from w / x. last: the sums
 * are reduced into out (four f32) as rows4F32 returns them; otherwise the accumulators go back to
 * acc. The same steps as rows4F32 in the same order, so a row computed in runs over consecutive
 * column ranges (the column blocks of a banded matrix, interleave.ts) has rows4F32's bits.
 */
export function rows4F32Run(w: usize, rs: usize, cs: usize, x: usize, n: i32, acc: usize, first: bool, last: bool, out: usize): void {
  // the fence is acc itself: read before the first step, written after the last
  const r = rows4F32Steps(w, rs, cs, x, n, acc, first, last, acc);
  if (last) v128.store(out, r);
}

/**
 * The body of rows4F32 and rows4F32Run: the accumulators start at zero (first) or from acc, and
 * end reduced (last: returned) or back in acc (the return value is then meaningless). With
 * constant first and last (rows4F32) the acc code folds away.
 */
// @ts-ignore: decorator
@inline function rows4F32Steps(w: usize, rs: usize, cs: usize, x: usize, n: i32, acc: usize, first: bool, last: bool, fence: usize): v128 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  if (!first) { a0 = v128.load(acc); a1 = v128.load(acc, 16); a2 = v128.load(acc, 32); a3 = v128.load(acc, 48); }
  // pointers stepped per chunk (see quad2x2 in panel.ts)
  for (let i = 0, xo = x, p0 = w; i < n; i += 16, xo += 64, p0 += cs) {
    const p1 = p0 + rs, p2 = p1 + rs, p3 = p2 + rs;
    // unrolled with immediate offsets: a loop here costs V8 a stack check and reloads per step.
    // A store after each x vector's four multiply-adds keeps the next loads below it: without
    // them TurboFan hoisted all 20 loads of a chunk to its top, ran out of registers and kept a3
    // on the stack, so a3's chain took a store and a reload per chunk (22 instead of 16 cycles
    // per chunk on a Zen 5 core: 37 GB/s from the L2 cache instead of the FMA chains' 51)
    let u = v128.load(xo);
    a0 = madd(v128.load(p0), u, a0); a1 = madd(v128.load(p1), u, a1); a2 = madd(v128.load(p2), u, a2); a3 = madd(v128.load(p3), u, a3);
    v128.store32_lane(fence, a3, 0);
    u = v128.load(xo, 16);
    a0 = madd(v128.load(p0, 16), u, a0); a1 = madd(v128.load(p1, 16), u, a1); a2 = madd(v128.load(p2, 16), u, a2); a3 = madd(v128.load(p3, 16), u, a3);
    v128.store32_lane(fence, a3, 0);
    u = v128.load(xo, 32);
    a0 = madd(v128.load(p0, 32), u, a0); a1 = madd(v128.load(p1, 32), u, a1); a2 = madd(v128.load(p2, 32), u, a2); a3 = madd(v128.load(p3, 32), u, a3);
    v128.store32_lane(fence, a3, 0);
    u = v128.load(xo, 48);
    a0 = madd(v128.load(p0, 48), u, a0); a1 = madd(v128.load(p1, 48), u, a1); a2 = madd(v128.load(p2, 48), u, a2); a3 = madd(v128.load(p3, 48), u, a3);
    v128.store32_lane(fence, a3, 0);
  }
  if (last) return sums4(a0, a1, a2, a3);
  v128.store(acc, a0); v128.store(acc, a1, 16); v128.store(acc, a2, 32); v128.store(acc, a3, 48);
  return a0;
}

/**
 * Four f16 rows of n values (n a multiple of 16; a chunk is 16 halves, paired as interleave.ts
 * stores them: lane j of each 16 bytes holds halves j and j + 4) · x, with x pre-multiplied by
 * 2^112 (rows.ts scaleHalfX). i32x4.dot_i16x8_s against (2^13, 0) sign-extends the low half of
 * every lane and shifts it into f32 position in one instruction, an arithmetic shift right by 3
 * does the same for the high half; the mask drops the copies of the sign, and the 2^112 scale of
 * x undoes the exponent offset exactly, so every product equals w·x.
 * Relaxed build: one sum per row, added to once per chunk; the chunk's 16 products are first
 * summed in a chain of their own (a multiply, then three multiply-adds, in element order:
 * halfChunk), so a row's sum takes one add per chunk instead of four dependent multiply-adds.
 * The four-deep chains had bound the loop (16 cycles a chunk at the multiply-add latency, where
 * its 48 vector instructions issue in 12): per matrix +5–24% from cache, 0–8% from memory; 110M
 * F16 one-thread decode +0 to +20% end to end by the host's phase (session 25, `npm run bench --
 * ab`). Prefill takes the same steps over the converted group (rows4HalfChunks), so a token's
 * logits are the same bits decoded or prefilled; that is slower than group4x2F32's tile (110M F16
 * prefill 0.82–0.94× of before). SIMD128 build (a
 * multiply then an add for each multiply-add): one chain per row in element order, rows4F32's
 * steps (prefilled by dequantGroupHalf and group4x2F32); the chunk sums there cost an add and
 * gained nothing (decode 0.98×).
 * Until session 20 the relaxed build kept two sums per row (low and high halves): 93
 * instructions a chunk (V8 x64 code) against 72, and slower.
 * (Load-and-extend, shift and mask per four values, before the dot trick, ran at 17.7 GB/s from
 * cache on a Zen 3 core, the dot trick at 21.)
 */
export function rows4Half(w: usize, rs: usize, cs: usize, x: usize, n: i32, fence: usize): v128 {
  return rows4Paired(false, w, rs, cs, x, n, fence);
}

/**
 * Four bf16 rows of n values (paired as rows4Half's) · x: a bf16 value is the top half of its f32,
 * so the low half of each lane is shifted up and the high half masked. The steps per lane are
 * rows4F32's (one multiply-add chain per row), as are its prefill's (dequantGroupHalf and
 * group4x2F32).
 */
export function rows4BF16(w: usize, rs: usize, cs: usize, x: usize, n: i32, fence: usize): v128 {
  return rows4Paired(true, w, rs, cs, x, n, fence);
}

/** rows4Half (bf false) or rows4BF16 (bf true). */
// @ts-ignore: decorator
@inline function rows4Paired(bf: bool, w: usize, rs: usize, cs: usize, x: usize, n: i32, fence: usize): v128 {
  if (rs == 32 && cs == 128) return rows4PairedGroup(bf, w, x, n, fence);
  return rows4PairedAny(bf, w, rs, cs, x, n, fence);
}

/** rows4Paired for any row stride (a single row in GGUF order: rs = 0). */
// @ts-ignore: decorator
@inline function rows4PairedAny(bf: bool, w: usize, rs: usize, cs: usize, x: usize, n: i32, fence: usize): v128 {
  const mask = v128.load(C4 + (bf ? 112 : 32)), lo = v128.load(C4, 80);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  if (!bf && ASC_FEATURE_RELAXED_SIMD) {
    for (let i = 0, xo = x, p0 = w; i < n; i += 16, xo += 64, p0 += cs) {
      const p1 = p0 + rs, p2 = p1 + rs, p3 = p2 + rs;
      const u0 = v128.load(xo), v0 = v128.load(xo, 16), u1 = v128.load(xo, 32), v1 = v128.load(xo, 48);
      a0 = f32x4.add(a0, halfChunk(p0, u0, v0, u1, v1, lo, mask)); v128.store32_lane(fence, a0, 0);
      a1 = f32x4.add(a1, halfChunk(p1, u0, v0, u1, v1, lo, mask)); v128.store32_lane(fence, a1, 0);
      a2 = f32x4.add(a2, halfChunk(p2, u0, v0, u1, v1, lo, mask)); v128.store32_lane(fence, a2, 0);
      a3 = f32x4.add(a3, halfChunk(p3, u0, v0, u1, v1, lo, mask)); v128.store32_lane(fence, a3, 0);
    }
    return sums4(a0, a1, a2, a3);
  }
  for (let i = 0, xo = x, p0 = w; i < n; i += 16, xo += 64, p0 += cs) {
    const p1 = p0 + rs, p2 = p1 + rs, p3 = p2 + rs;
    // unrolled with immediate offsets (a loop here costs V8 a stack check and reloads per step);
    // the stores keep TurboFan from hoisting all eight loads (see q8.ts dotRowQ)
    let u: v128, v: v128, c0: v128, c1: v128, c2: v128, c3: v128;
    u = v128.load(xo, 0); v = v128.load(xo, 16);
    c0 = v128.load(p0); c1 = v128.load(p1); c2 = v128.load(p2); c3 = v128.load(p3);
    a0 = madd(pairLo(bf, c0, lo, mask), u, a0); a1 = madd(pairLo(bf, c1, lo, mask), u, a1); a2 = madd(pairLo(bf, c2, lo, mask), u, a2); a3 = madd(pairLo(bf, c3, lo, mask), u, a3);
    a0 = madd(pairHi(bf, c0, mask), v, a0); a1 = madd(pairHi(bf, c1, mask), v, a1); a2 = madd(pairHi(bf, c2, mask), v, a2); a3 = madd(pairHi(bf, c3, mask), v, a3);
    v128.store32_lane(fence, a0, 0); v128.store32_lane(fence, a1, 0); v128.store32_lane(fence, a2, 0); v128.store32_lane(fence, a3, 0);
    u = v128.load(xo, 32); v = v128.load(xo, 48);
    c0 = v128.load(p0, 16); c1 = v128.load(p1, 16); c2 = v128.load(p2, 16); c3 = v128.load(p3, 16);
    a0 = madd(pairLo(bf, c0, lo, mask), u, a0); a1 = madd(pairLo(bf, c1, lo, mask), u, a1); a2 = madd(pairLo(bf, c2, lo, mask), u, a2); a3 = madd(pairLo(bf, c3, lo, mask), u, a3);
    a0 = madd(pairHi(bf, c0, mask), v, a0); a1 = madd(pairHi(bf, c1, mask), v, a1); a2 = madd(pairHi(bf, c2, mask), v, a2); a3 = madd(pairHi(bf, c3, mask), v, a3);
  }
  return sums4(a0, a1, a2, a3);
}

/**
 * rows4Paired over an interleaved group (rs = 32, cs = 128), its row offsets as immediates: with
 * them computed from rs the loop spent seven more instructions per chunk on addresses (79, not
 * 72). The same steps per row as rows4PairedAny, so the same bits.
 */
// @ts-ignore: decorator
@inline function rows4PairedGroup(bf: bool, w: usize, x: usize, n: i32, fence: usize): v128 {
  return rows4PairedSteps(bf, w, x, n, 0, true, true, fence);
}

/**
 * rows4PairedGroup over a run of chunks, its four accumulators started (first) or continued from
 * acc (64 bytes) and reduced into out (last) or parked in acc again: rows4F32Run's scheme, so a
 * banded f16 group (interleave.ts) computed block by block has rows4Half's bits. (One function per
 * type: with bf a run-time argument its selects stayed in the loop, 0.7× the speed.)
 */
export function rows4HalfRun(w: usize, x: usize, n: i32, acc: usize, first: bool, last: bool, out: usize): void {
  // the fence is acc itself: read before the first step, written after the last
  const r = rows4PairedSteps(false, w, x, n, acc, first, last, acc);
  if (last) v128.store(out, r);
}

/** rows4HalfRun for a banded bf16 group (rows4BF16's bits). */
export function rows4BF16Run(w: usize, x: usize, n: i32, acc: usize, first: bool, last: bool, out: usize): void {
  const r = rows4PairedSteps(true, w, x, n, acc, first, last, acc);
  if (last) v128.store(out, r);
}

/** The body of rows4PairedGroup, rows4HalfRun and rows4BF16Run (acc, first and last as in rows4F32Steps). */
// @ts-ignore: decorator
@inline function rows4PairedSteps(bf: bool, w: usize, x: usize, n: i32, acc: usize, first: bool, last: bool, fence: usize): v128 {
  const mask = v128.load(C4 + (bf ? 112 : 32)), lo = v128.load(C4, 80);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  if (!first) { a0 = v128.load(acc); a1 = v128.load(acc, 16); a2 = v128.load(acc, 32); a3 = v128.load(acc, 48); }
  const end = w + (<usize>n << 3);
  if (!bf && ASC_FEATURE_RELAXED_SIMD) {
    // one add per row and chunk (rows4Half); the stores after them keep TurboFan's schedule
    for (let xo = x, p = w; p < end; xo += 64, p += 128) {
      const u0 = v128.load(xo), v0 = v128.load(xo, 16), u1 = v128.load(xo, 32), v1 = v128.load(xo, 48);
      a0 = f32x4.add(a0, halfChunk(p, u0, v0, u1, v1, lo, mask)); v128.store32_lane(fence, a0, 0);
      a1 = f32x4.add(a1, halfChunk(p + 32, u0, v0, u1, v1, lo, mask)); v128.store32_lane(fence, a1, 0);
      a2 = f32x4.add(a2, halfChunk(p + 64, u0, v0, u1, v1, lo, mask)); v128.store32_lane(fence, a2, 0);
      a3 = f32x4.add(a3, halfChunk(p + 96, u0, v0, u1, v1, lo, mask)); v128.store32_lane(fence, a3, 0);
    }
    if (last) return sums4(a0, a1, a2, a3);
    v128.store(acc, a0); v128.store(acc, a1, 16); v128.store(acc, a2, 32); v128.store(acc, a3, 48);
    return a0;
  }
  for (let xo = x, p = w; p < end; xo += 64, p += 128) {
    let u: v128, v: v128, c0: v128, c1: v128, c2: v128, c3: v128;
    u = v128.load(xo, 0); v = v128.load(xo, 16);
    c0 = v128.load(p); c1 = v128.load(p, 32); c2 = v128.load(p, 64); c3 = v128.load(p, 96);
    a0 = madd(pairLo(bf, c0, lo, mask), u, a0); a1 = madd(pairLo(bf, c1, lo, mask), u, a1); a2 = madd(pairLo(bf, c2, lo, mask), u, a2); a3 = madd(pairLo(bf, c3, lo, mask), u, a3);
    a0 = madd(pairHi(bf, c0, mask), v, a0); a1 = madd(pairHi(bf, c1, mask), v, a1); a2 = madd(pairHi(bf, c2, mask), v, a2); a3 = madd(pairHi(bf, c3, mask), v, a3);
    v128.store32_lane(fence, a0, 0); v128.store32_lane(fence, a1, 0); v128.store32_lane(fence, a2, 0); v128.store32_lane(fence, a3, 0);
    u = v128.load(xo, 32); v = v128.load(xo, 48);
    c0 = v128.load(p, 16); c1 = v128.load(p, 48); c2 = v128.load(p, 80); c3 = v128.load(p, 112);
    a0 = madd(pairLo(bf, c0, lo, mask), u, a0); a1 = madd(pairLo(bf, c1, lo, mask), u, a1); a2 = madd(pairLo(bf, c2, lo, mask), u, a2); a3 = madd(pairLo(bf, c3, lo, mask), u, a3);
    a0 = madd(pairHi(bf, c0, mask), v, a0); a1 = madd(pairHi(bf, c1, mask), v, a1); a2 = madd(pairHi(bf, c2, mask), v, a2); a3 = madd(pairHi(bf, c3, mask), v, a3);
  }
  if (last) return sums4(a0, a1, a2, a3);
  v128.store(acc, a0); v128.store(acc, a1, 16); v128.store(acc, a2, 32); v128.store(acc, a3, 48);
  return a0;
}

/**
 * Σ of one chunk's 16 products, four f32 lanes: w0·x0 (a multiply), then w1·x1, w2·x2, w3·x3
 * multiply-added in that order. The f16 chunk sum of the relaxed build's rows4Half and
 * rows4HalfChunks.
 */
// @ts-ignore: decorator
@inline function chunkSum(w0: v128, x0: v128, w1: v128, x1: v128, w2: v128, x2: v128, w3: v128, x3: v128): v128 {
  return madd(w3, x3, madd(w2, x2, madd(w1, x1, f32x4.mul(w0, x0))));
}

/**
 * One row's 16 paired f16 at p (32 bytes; halves 0–7, then 8–15) · x·2^112 (u0 v0 u1 v1: values
 * 0–3, 4–7, 8–11, 12–15) as chunkSum in element order.
 */
// @ts-ignore: decorator
@inline function halfChunk(p: usize, u0: v128, v0: v128, u1: v128, v1: v128, lo: v128, mask: v128): v128 {
  const c = v128.load(p), d = v128.load(p, 16);
  return chunkSum(halfLanes(c, lo, mask), u0, pairHi(false, c, mask), v0, halfLanes(d, lo, mask), u1, pairHi(false, d, mask), v1);
}

/** The low half of each 32-bit lane of paired halves as f32 bits: bf16 shifted up, f16 via halfLanes (w·2^−112). */
// @ts-ignore: decorator
@inline export function pairLo(bf: bool, v: v128, lo: v128, mask: v128): v128 {
  return bf ? i32x4.shl(v, 16) : halfLanes(v, lo, mask);
}

/**
 * The high half of each lane: bf16 masked (mask = the lane's top half); f16 shifted right by 3
 * with its sign copied into bits 28..31, then masked as halfLanes masks (the same bits as
 * halfLanes with (0, 2^13), but a shift instead of a multiply: the multiply pipes also run the
 * low halves and the fused multiply-adds; relaxed build +2%, SIMD128 +12% from cache).
 */
// @ts-ignore: decorator
@inline export function pairHi(bf: bool, v: v128, mask: v128): v128 {
  return bf ? v128.and(v, mask) : v128.and(i32x4.shr_s(v, 3), mask);
}

/** The low half of each 32-bit lane of v (sel: C4 +80) as f32 bits of w·2^−112. */
// @ts-ignore: decorator
@inline function halfLanes(v: v128, sel: v128, mask: v128): v128 {
  return v128.and(i32x4.dot_i16x8_s(v, sel), mask);
}

/**
 * n f32 at y = the n interleaved f16 (bf: bf16) values at w (a group: 4·nIn, paired as interleave.ts stores them),
 * in the group's chunk order with each chunk back in element order: what group4x2F32 and rows4F32
 * read; attention.ts widenCache undoes an f16 KV cache's pairing with it. Exact (the same values
 * as rows.ts dequantRow).
 */
export function dequantGroupHalf(bf: bool, w: usize, y: usize, n: i32): void {
  // the decode kernels' conversions; f16 then takes its 2^112 back (exact)
  const mask = v128.load(C4 + (bf ? 112 : 32)), lo = v128.load(C4, 80), k = v128.load(C4, 48);
  for (let i: usize = 0; i < <usize>n << 1; i += 16) {
    const v = v128.load(w + i), d = y + (i << 1);
    const a = pairLo(bf, v, lo, mask), b = pairHi(bf, v, mask);
    v128.store(d, bf ? a : f32x4.mul(a, k));
    v128.store(d, bf ? b : f32x4.mul(b, k), 16);
  }
}

/**
 * The four Q8_0 rows of an interleaved group (interleave.ts: 136 bytes per block, the rows' four
 * f16 scales, then eight vectors whose 32-bit lane j holds quants 4k..4k+3 of row j) against
 * activations quantized by q8.ts quantizeBlocks (32 i16 per block at xq, scale at xd + 8b). Lanes
 * are rows, as in rows4Q4_0: each half of a vector is widened on load (rows 0, 1 and rows 2, 3)
 * and multiplied with the four positions' activations in both halves, so the four rows' exact
 * integer sums need one pairwise add per block instead of a four-row reduction, and the four
 * scales are one load. The same bits as reducing GGUF-order blocks row by row.
 */
export function rows4Q8_0(w: usize, xq: usize, xd: usize, n: i32, fence: usize): v128 {
  const mask = v128.load(C4, 32), k = v128.load(C4, 48);
  let acc = f32x4.splat(0);
  const end = w + <usize>(n >> 5) * 136;
  for (let p = w, xp = xq, dp = xd; p < end; p += 136, xp += 64, dp += 8) {
    // a: rows 0, 1 (two i32 partial sums each), b: rows 2, 3; vector k at p + 8 + 16k
    let x = v128.load64_splat(xp, 0);
    let a = i32x4.dot_i16x8_s(v128.load8x8_s(p, 8), x), b = i32x4.dot_i16x8_s(v128.load8x8_s(p, 16), x);
    x = v128.load64_splat(xp, 8);
    a = i32x4.add(a, i32x4.dot_i16x8_s(v128.load8x8_s(p, 24), x)); b = i32x4.add(b, i32x4.dot_i16x8_s(v128.load8x8_s(p, 32), x));
    v128.store32_lane(fence, a, 0); v128.store32_lane(fence, b, 0); // keeps TurboFan from hoisting every load (see q8.ts dotRowQ)
    x = v128.load64_splat(xp, 16);
    a = i32x4.add(a, i32x4.dot_i16x8_s(v128.load8x8_s(p, 40), x)); b = i32x4.add(b, i32x4.dot_i16x8_s(v128.load8x8_s(p, 48), x));
    x = v128.load64_splat(xp, 24);
    a = i32x4.add(a, i32x4.dot_i16x8_s(v128.load8x8_s(p, 56), x)); b = i32x4.add(b, i32x4.dot_i16x8_s(v128.load8x8_s(p, 64), x));
    v128.store32_lane(fence, a, 0); v128.store32_lane(fence, b, 0);
    x = v128.load64_splat(xp, 32);
    a = i32x4.add(a, i32x4.dot_i16x8_s(v128.load8x8_s(p, 72), x)); b = i32x4.add(b, i32x4.dot_i16x8_s(v128.load8x8_s(p, 80), x));
    x = v128.load64_splat(xp, 40);
    a = i32x4.add(a, i32x4.dot_i16x8_s(v128.load8x8_s(p, 88), x)); b = i32x4.add(b, i32x4.dot_i16x8_s(v128.load8x8_s(p, 96), x));
    v128.store32_lane(fence, a, 0); v128.store32_lane(fence, b, 0);
    x = v128.load64_splat(xp, 48);
    a = i32x4.add(a, i32x4.dot_i16x8_s(v128.load8x8_s(p, 104), x)); b = i32x4.add(b, i32x4.dot_i16x8_s(v128.load8x8_s(p, 112), x));
    x = v128.load64_splat(xp, 56);
    a = i32x4.add(a, i32x4.dot_i16x8_s(v128.load8x8_s(p, 120), x)); b = i32x4.add(b, i32x4.dot_i16x8_s(v128.load8x8_s(p, 128), x));
    const sums = i32x4.add(v128.shuffle<i32>(a, b, 0, 2, 4, 6), v128.shuffle<i32>(a, b, 1, 3, 5, 7));
    const dw = half4Seq(p, mask, k);
    acc = madd(f32x4.convert_i32x4_s(sums), f32x4.mul(dw, v128.load32_splat(dp)), acc);
  }
  return acc;
}

/**
 * The four Q4_0 rows of an interleaved group (interleave.ts: 72 bytes per block, the rows' four
 * f16 scales, then four vectors whose 32-bit lane j holds quant bytes 4k..4k+3 of row j; quant byte
 * i holds element i in its low nibble and i + 16 in its high one) against quantized activations:
 * i8 (quantizeBlocksI8, 32 bytes per block) with relaxed 8-bit dot products in the relaxed build,
 * i16 (quantizeBlocks, 64 bytes) otherwise. Lanes are rows throughout: the activations of the four
 * positions a lane holds are broadcast to all lanes, so every product adds straight into its
 * row's lane, with no per-block reduction across rows, and the four scales are one load. The −8
 * offset goes through the activation block sums: d_w·(d_x·Σq·x_q) − 8·d_w·(d_x·Σx_q), both added
 * with madd (one FMA per block in the relaxed build).
 * (Against GGUF-order blocks of four rows reduced per block: 110M-shaped matrices 15–25% faster
 * on a Zen 5 core, in-process A/B, the same bits.)
 */
export function rows4Q4_0(w: usize, xq: usize, xd: usize, n: i32, fence: usize): v128 {
  const mask = v128.load(C4, 32), k = v128.load(C4, 48), m4 = v128.load(C4, 16);
  let acc = f32x4.splat(0), m = f32x4.splat(0);
  const end = w + <usize>(n >> 5) * 72;
  for (let p = w, xp = xq, dp = xd; p < end; p += 72, xp += ASC_FEATURE_RELAXED_SIMD ? 32 : 64, dp += 8) {
    let sums: v128;
    if (ASC_FEATURE_RELAXED_SIMD) {
      // vector k: positions 4k..4k+3 (low nibbles) and 16 + 4k.. (high); eight products of
      // |·| ≤ 2·15·128 per i16 lane: ≤ 30720, exact
      let v = v128.load(p, 8);
      let s = i16x8.add(dotR(v128.load32_splat(xp, 0), v128.and(v, m4)), dotR(v128.load32_splat(xp, 16), v128.and(i16x8.shr_u(v, 4), m4)));
      v128.store32_lane(fence, s, 0);
      v = v128.load(p, 24);
      s = i16x8.add(s, i16x8.add(dotR(v128.load32_splat(xp, 4), v128.and(v, m4)), dotR(v128.load32_splat(xp, 20), v128.and(i16x8.shr_u(v, 4), m4))));
      v128.store32_lane(fence, s, 0);
      v = v128.load(p, 40);
      s = i16x8.add(s, i16x8.add(dotR(v128.load32_splat(xp, 8), v128.and(v, m4)), dotR(v128.load32_splat(xp, 24), v128.and(i16x8.shr_u(v, 4), m4))));
      v128.store32_lane(fence, s, 0);
      v = v128.load(p, 56);
      s = i16x8.add(s, i16x8.add(dotR(v128.load32_splat(xp, 12), v128.and(v, m4)), dotR(v128.load32_splat(xp, 28), v128.and(i16x8.shr_u(v, 4), m4))));
      sums = i32x4.dot_i16x8_s(s, v128.load(C4, 64));
    } else {
      // widened to i16: rows 0, 1 (low half of a vector) and 2, 3 (high half) against the
      // positions' four i16 activations in both halves; two i32 partial sums per row
      let a = i32x4.splat(0), b = i32x4.splat(0);
      for (let c: usize = 0; c < 4; c++) {
        const v = v128.load(p + 8 + (c << 4));
        const lo = v128.and(v, m4), up = v128.and(i16x8.shr_u(v, 4), m4);
        const xl = v128.load64_splat(xp + (c << 3)), xh = v128.load64_splat(xp + 32 + (c << 3));
        a = i32x4.add(a, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(lo), xl), i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(up), xh)));
        b = i32x4.add(b, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(lo), xl), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(up), xh)));
      }
      sums = i32x4.add(v128.shuffle<i32>(a, b, 0, 2, 4, 6), v128.shuffle<i32>(a, b, 1, 3, 5, 7));
    }
    const dw = half4Seq(p, mask, k);
    acc = madd(f32x4.convert_i32x4_s(sums), f32x4.mul(dw, v128.load32_splat(dp)), acc);
    m = madd(dw, v128.load32_splat(dp, 4), m);
  }
  return f32x4.sub(acc, f32x4.mul(m, f32x4.splat(8)));
}

// @ts-ignore: decorator
@inline function dotR(x: v128, q: v128): v128 {
  return i16x8.relaxed_dot_i8x16_i7x16_s(x, q);
}

/**
 * Four Q4_K rows (144-byte super-blocks of 256 values: f16 d and dmin, 12 bytes of 6-bit
 * sub-block scales and mins as ggml packs them, 128 bytes of 4-bit quants; quant byte 32j+i holds
 * sub-block 2j element i in its low nibble and 2j+1 element i in its high one) against activations
 * quantized per 32-value block (i8 in the relaxed build, i16 otherwise; xd: block scales, xs: the
 * blocks' exact Σx for the min term). Lanes are rows throughout: per sub-block k the four rows'
 * exact integer sums come out of one reduction and share the activation loads, and the
 * scale/min arithmetic runs once for four rows (d·sc_k·d_x·Σq·x_q − dmin·m_k·Σx, each sub-block's
 * term added with multiply-adds). The headers of the four rows are decoded together, byte-wise.
 * Not tied bit for bit to the one-row kernel (q8.ts dotQ4K) or the prefill: the same terms in
 * another order, within the int8 bound. hs: 256 bytes of the calling thread's scratch.
 * (110M Q4_K decode 126.7 → 142.3 tok/s on a Zen 5 core against dotQ4K row by row.)
 */
export function rows4Q4K(w: usize, rs: usize, cs: usize, xq: usize, xd: usize, xs: usize, n: i32, hs: usize, fence: usize): v128 {
  return rows4KT(false, w, rs, cs, xq, xd, xs, n, hs, fence);
}

/**
 * rows4Q4K for Q5_K (176-byte super-blocks: the same header, then 32 bytes qh whose bit k of byte
 * i is the fifth bit of sub-block k's element i, then the 128 quant bytes).
 */
export function rows4Q5K(w: usize, rs: usize, cs: usize, xq: usize, xd: usize, xs: usize, n: i32, hs: usize, fence: usize): v128 {
  return rows4KT(true, w, rs, cs, xq, xd, xs, n, hs, fence);
}

/** rows4Q4K (five false) or rows4Q5K (true). */
// @ts-ignore: decorator
@inline function rows4KT(five: bool, w: usize, rs: usize, cs: usize, xq: usize, xd: usize, xs: usize, n: i32, hs: usize, fence: usize): v128 {
  const m4 = ASC_FEATURE_RELAXED_SIMD ? v128.load(C4, 16) : v128.load(C4);
  const ones = v128.load(C4, 64);
  let acc = f32x4.splat(0), macc = f32x4.splat(0);
  for (let sb = 0; sb < (n >> 8); sb++) {
    const p0 = w + <usize>sb * cs, p1 = p0 + rs, p2 = p1 + rs, p3 = p2 + rs;
    // headers: the four rows' first 16 bytes (kHeaders)
    const v0 = v128.load(p0), v1 = v128.load(p1), v2 = v128.load(p2), v3 = v128.load(p3);
    // the rows' sub-block scales and mins, parked in the thread's scratch (see kHeaders)
    const dd = kHeaders(hs, v0, v1, v2, v3, false);
    const d = halfK4(v128.and(dd, v128.load(C4, 160))), dmin = halfK4(i32x4.shr_u(dd, 16));
    const blk = sb << 3;
    // sub-blocks k and k + 4 per step, written out so that k is a constant in each (a loop over
    // pairs of steps measured 7% slower for Q4_K, 15% for Q5_K); the stores of the running sums
    // make TurboFan do each step's scaling in place (it sank all of it to the end of the loop,
    // keeping every step's sums alive in spilled registers)
    acc = madd(q4kTerm(five, 0, p0, rs, xq, xd, blk, hs, m4, ones, fence), d, acc);
    macc = madd(q4kMins(0, xs, blk, hs), dmin, macc);
    fence2(fence, acc, macc);
    acc = madd(q4kTerm(five, 1, p0, rs, xq, xd, blk, hs, m4, ones, fence), d, acc);
    macc = madd(q4kMins(1, xs, blk, hs), dmin, macc);
    fence2(fence, acc, macc);
    acc = madd(q4kTerm(five, 2, p0, rs, xq, xd, blk, hs, m4, ones, fence), d, acc);
    macc = madd(q4kMins(2, xs, blk, hs), dmin, macc);
    fence2(fence, acc, macc);
    acc = madd(q4kTerm(five, 3, p0, rs, xq, xd, blk, hs, m4, ones, fence), d, acc);
    macc = madd(q4kMins(3, xs, blk, hs), dmin, macc);
    fence2(fence, acc, macc);
  }
  return f32x4.sub(acc, macc);
}

/**
 * The K-quant headers of four rows (v0..v3: each row's first 16 bytes, f16 d and dmin, then the 12
 * bytes of 6-bit scales and mins as ggml packs them, get_scale_min_k4) decoded into `hs`: for k =
 * 0..3, at hs + 64k, sub-block k's scales, sub-block k + 4's, then their mins, lane r = row r (i32;
 * with `pairs` the scales as i16 pairs, both halves of the lane). Returns lane r = row r's d |
 * dmin << 16. The stores are written out: as a loop over k, TurboFan recomputed the decoding in
 * each iteration. Parked in scratch, since held in registers they left too few for the kernels' sums.
 */
// @ts-ignore: decorator
@inline function kHeaders(hs: usize, v0: v128, v1: v128, v2: v128, v3: v128, pairs: bool): v128 {
  const b3f = v128.load(C4, 128), b03 = v128.load(C4, 144), b0f = v128.load(C4, 16);
  // i32 lane r of dd = row r's d | dmin << 16, of aa/bb/cc its scale bytes 0..3/4..7/8..11
  const x01 = v128.shuffle<u8>(v0, v1, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const x23 = v128.shuffle<u8>(v2, v3, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const y01 = v128.shuffle<u8>(v0, v1, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  const y23 = v128.shuffle<u8>(v2, v3, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  const dd = v128.shuffle<u8>(x01, x23, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const aa = v128.shuffle<u8>(x01, x23, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  const bb = v128.shuffle<u8>(y01, y23, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const cc = v128.shuffle<u8>(y01, y23, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  // byte k of lane r: sub-block k's scale (scLo) and min (mLo), and sub-block k + 4's (scHi, mHi)
  // (the i16 shifts move no set bit across a byte after the masks)
  const scLo = v128.and(aa, b3f), mLo = v128.and(bb, b3f);
  const scHi = v128.or(v128.and(cc, b0f), i16x8.shl(v128.and(i16x8.shr_u(aa, 6), b03), 4));
  const mHi = v128.or(v128.and(i16x8.shr_u(cc, 4), b0f), i16x8.shl(v128.and(i16x8.shr_u(bb, 6), b03), 4));
  kScales(hs, scLo, scHi, mLo, mHi, 0, pairs);
  kScales(hs + 64, scLo, scHi, mLo, mHi, 1, pairs);
  kScales(hs + 128, scLo, scHi, mLo, mHi, 2, pairs);
  kScales(hs + 192, scLo, scHi, mLo, mHi, 3, pairs);
  return dd;
}

/** kHeaders' stores for one k at o. */
// @ts-ignore: decorator
@inline function kScales(o: usize, scLo: v128, scHi: v128, mLo: v128, mHi: v128, k: i32, pairs: bool): void {
  const a = lanesByte(scLo, k), b = lanesByte(scHi, k);
  v128.store(o, pairs ? v128.or(a, i32x4.shl(a, 16)) : a); v128.store(o, pairs ? v128.or(b, i32x4.shl(b, 16)) : b, 16);
  v128.store(o, lanesByte(mLo, k), 32); v128.store(o, lanesByte(mHi, k), 48);
}

/**
 * Four Q4_K rows of a transposed group (interleave.ts, relaxed build: per super-block the rows'
 * 16-byte headers, then 32 vectors whose 32-bit lane r holds quant bytes 4k..4k+3 of row r) against
 * i8 activations, lanes = rows throughout, as rows4Q4_0 does for Q4_0: four activations splat
 * against each vector's low nibbles (sub-block 2p) and high nibbles (2p + 1) give each row's sums
 * in its own lane pair, so no reduction across lanes is needed; each i16 lane sums 16 products
 * (≤ 16·15·127), then one i32x4.dot_i16x8_s against the rows' sub-block scales (i16 pairs) widens
 * and scales them at once. Per sub-block: d·sc·(d_x·Σq·x_q) − dmin·m·Σx, as rows4Q4K computes it
 * (its scale and min decoding, parked in `hs`: 272 bytes, the header's d and dmin last). The same exact integer sums, so within
 * rounding of rows4Q4K (the same f32 terms in another order). About two thirds of rows4Q4K's
 * instructions: no reductions, one load per four rows' quant words.
 */
export function rows4Q4KT(w: usize, xq: usize, xd: usize, xs: usize, n: i32, hs: usize, fence: usize): v128 {
  if (!ASC_FEATURE_RELAXED_SIMD) return f32x4.splat(0); // (SIMD128 keeps Q4_K groups untransposed: interleave.ts transposed)
  const m4 = v128.load(C4, 16);
  let acc = f32x4.splat(0), macc = f32x4.splat(0);
  for (let sb = 0; sb < (n >> 8); sb++) {
    const g = w + <usize>sb * 576;
    // headers: the four rows' 16 bytes at the front of the super-block group (kHeaders)
    const v0 = v128.load(g), v1 = v128.load(g, 16), v2 = v128.load(g, 32), v3 = v128.load(g, 48);
    // the rows' sub-block scales (as i16 pairs, both halves of a row's lane) and mins at hs (kHeaders)
    const dd = kHeaders(hs, v0, v1, v2, v3, true);
    v128.store(hs, dd, 256);
    const xb = xq + (<usize>sb << 8), blk = sb << 3;
    let t = f32x4.splat(0), tm = f32x4.splat(0);
    for (let p = 0; p < 4; p++) {
      // sub-blocks 2p (low nibbles) and 2p + 1 (high) of the 32 bytes of pair p
      const q = g + 64 + (<usize>p << 7), xa = xb + (<usize>p << 6);
      let u = i16x8.splat(0), v = i16x8.splat(0), c: v128;
      c = v128.load(q); u = kDot(u, v128.load32_splat(xa, 0), v128.and(c, m4)); v = kDot(v, v128.load32_splat(xa, 32), v128.and(i16x8.shr_u(c, 4), m4));
      c = v128.load(q, 16); u = kDot(u, v128.load32_splat(xa, 4), v128.and(c, m4)); v = kDot(v, v128.load32_splat(xa, 36), v128.and(i16x8.shr_u(c, 4), m4));
      fence2(fence, u, v);
      c = v128.load(q, 32); u = kDot(u, v128.load32_splat(xa, 8), v128.and(c, m4)); v = kDot(v, v128.load32_splat(xa, 40), v128.and(i16x8.shr_u(c, 4), m4));
      c = v128.load(q, 48); u = kDot(u, v128.load32_splat(xa, 12), v128.and(c, m4)); v = kDot(v, v128.load32_splat(xa, 44), v128.and(i16x8.shr_u(c, 4), m4));
      fence2(fence, u, v);
      c = v128.load(q, 64); u = kDot(u, v128.load32_splat(xa, 16), v128.and(c, m4)); v = kDot(v, v128.load32_splat(xa, 48), v128.and(i16x8.shr_u(c, 4), m4));
      c = v128.load(q, 80); u = kDot(u, v128.load32_splat(xa, 20), v128.and(c, m4)); v = kDot(v, v128.load32_splat(xa, 52), v128.and(i16x8.shr_u(c, 4), m4));
      fence2(fence, u, v);
      c = v128.load(q, 96); u = kDot(u, v128.load32_splat(xa, 24), v128.and(c, m4)); v = kDot(v, v128.load32_splat(xa, 56), v128.and(i16x8.shr_u(c, 4), m4));
      c = v128.load(q, 112); u = kDot(u, v128.load32_splat(xa, 28), v128.and(c, m4)); v = kDot(v, v128.load32_splat(xa, 60), v128.and(i16x8.shr_u(c, 4), m4));
      // sub-block s's scales at hs + 64(s mod 4) + 16(s ≥ 4), its mins 32 bytes after them
      const oa = hs + (<usize>((p << 1) & 3) << 6) + (<usize>(p >> 1) << 4), ob = oa + 64;
      const su = i32x4.dot_i16x8_s(u, v128.load(oa)), sv = i32x4.dot_i16x8_s(v, v128.load(ob));
      const da = v128.load32_splat(xd + (<usize>(blk + (p << 1)) << 3)), db = v128.load32_splat(xd + (<usize>(blk + (p << 1) + 1) << 3));
      t = madd(f32x4.convert_i32x4_s(sv), db, madd(f32x4.convert_i32x4_s(su), da, t));
      const sa = v128.load32_splat(xs + (<usize>(blk + (p << 1)) << 2)), sbx = v128.load32_splat(xs + (<usize>(blk + (p << 1) + 1) << 2));
      tm = madd(f32x4.convert_i32x4_s(v128.load(ob, 32)), sbx, madd(f32x4.convert_i32x4_s(v128.load(oa, 32)), sa, tm));
      fence2(fence, t, tm);
    }
    // d and dmin from the header parked at hs + 256 (kept in a register across the loop above,
    // TurboFan spilled it and its conversions' constants)
    const dd2 = v128.load(hs, 256);
    const d = halfK4(v128.and(dd2, v128.load(C4, 160))), dmin = halfK4(i32x4.shr_u(dd2, 16));
    acc = madd(t, d, acc);
    macc = madd(tm, dmin, macc);
    fence2(fence, acc, macc);
  }
  return f32x4.sub(acc, macc);
}

/** u + the relaxed 8-bit dot of four activations x (splat to every row's lane) with q (four rows' unsigned quants). */
// @ts-ignore: decorator
@inline function kDot(u: v128, x: v128, q: v128): v128 {
  return i16x8.add(u, i16x8.relaxed_dot_i8x16_i7x16_s(x, q));
}

/** Σ over sub-blocks k and k + 4 of the four rows: sc·(d_x·Σq·x_q), lanes = rows (scales at hs, see rows4Q4K). */
// @ts-ignore: decorator
@inline function q4kTerm(five: bool, k: i32, p0: usize, rs: usize, xq: usize, xd: usize, blk: i32, hs: usize, m4: v128, ones: v128, fence: usize): v128 {
  const sa = q4kSums4(five, p0, rs, k, xq, blk + k, m4, ones, fence);
  v128.store32_lane(fence, sa, 0);
  const sb = q4kSums4(five, p0, rs, k + 4, xq, blk + k + 4, m4, ones, fence);
  // a store before the loads below: TurboFan places a load right after the last store before it,
  // so without one every step's scale loads moved to the top of the super-block and were spilled
  v128.store32_lane(fence, sb, 0);
  const dxa = v128.load32_splat(xd + (<usize>(blk + k) << 3)), dxb = v128.load32_splat(xd + (<usize>(blk + k + 4) << 3));
  const o = hs + (<usize>k << 6);
  return madd(f32x4.convert_i32x4_s(i32x4.mul(sb, v128.load(o, 16))), dxb, f32x4.mul(f32x4.convert_i32x4_s(i32x4.mul(sa, v128.load(o))), dxa));
}

/** Σ over sub-blocks k and k + 4 of the four rows: m·Σx (the min term before dmin), lanes = rows. */
// @ts-ignore: decorator
@inline function q4kMins(k: i32, xs: usize, blk: i32, hs: usize): v128 {
  const xa = v128.load32_splat(xs + (<usize>(blk + k) << 2)), xb = v128.load32_splat(xs + (<usize>(blk + k + 4) << 2));
  const o = hs + (<usize>k << 6);
  return madd(f32x4.convert_i32x4_s(v128.load(o, 48)), xb, f32x4.mul(f32x4.convert_i32x4_s(v128.load(o, 32)), xa));
}

/** Stores of lane 0 of a and b at `fence` (see rows4Q4K). */
// @ts-ignore: decorator
@inline function fence2(fence: usize, a: v128, b: v128): void {
  v128.store32_lane(fence, a, 0); v128.store32_lane(fence, b, 0);
}

/** Byte k (0..3) of each i32 lane, zero-extended. */
// @ts-ignore: decorator
@inline function lanesByte(v: v128, k: i32): v128 {
  return v128.and(i32x4.shr_u(v, k << 3), v128.load(C4, 176));
}

/**
 * [Σq·x of row 0, …, row 3] for sub-block k (0..7) of the four Q4_K (Q5_K: `five`) super-blocks
 * at p0, p0 + rs, … against activation block `blk`: exact integers (relaxed: i8 activations,
 * 8-bit dot products reduced in i16, for Q5_K widened after one pairwise step; SIMD128: q8.ts
 * subK, i16 activations and widened quants).
 */
// @ts-ignore: decorator
@inline function q4kSums4(five: bool, p0: usize, rs: usize, k: i32, xq: usize, blk: i32, m4: v128, ones: v128, fence: usize): v128 {
  const j = k >> 1, upper = (k & 1) != 0;
  if (ASC_FEATURE_RELAXED_SIMD) {
    const xp = xq + (<usize>blk << 5);
    const x0 = v128.load(xp), x1 = v128.load(xp, 16);
    const d0 = q4kPart(five, p0, j, upper, x0, x1, m4), d1 = q4kPart(five, p0 + rs, j, upper, x0, x1, m4);
    v128.store32_lane(fence, d1, 0);
    const d2 = q4kPart(five, p0 + 2 * rs, j, upper, x0, x1, m4), d3 = q4kPart(five, p0 + 3 * rs, j, upper, x0, x1, m4);
    return five ? reduce4i16w(d0, d1, d2, d3, ones) : reduce4i16(d0, d1, d2, d3, ones);
  }
  const one = v128.load(QC, 16);
  const s0 = subK(five, p0, j, upper, xq, blk, m4, one);
  v128.store32_lane(fence, s0, 0);
  const s1 = subK(five, p0 + rs, j, upper, xq, blk, m4, one);
  v128.store32_lane(fence, s1, 0);
  const s2 = subK(five, p0 + 2 * rs, j, upper, xq, blk, m4, one);
  v128.store32_lane(fence, s2, 0);
  return reduce4(s0, s1, s2, subK(five, p0 + 3 * rs, j, upper, xq, blk, m4, one));
}

/**
 * One row's sub-block 2j (+1 when `upper`) of the super-block at p (q8.ts k45Quants) · 32 i8
 * activations (x0, x1) as eight i16 partial sums (|·| ≤ 7620 for Q4_K, 15748 for Q5_K).
 */
// @ts-ignore: decorator
@inline function q4kPart(five: bool, p: usize, j: i32, upper: bool, x0: v128, x1: v128, m4: v128): v128 {
  const one = v128.load(QC, 144);
  return i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(x0, k45Quants(five, p, j, upper, 0, m4, one)),
    i16x8.relaxed_dot_i8x16_i7x16_s(x1, k45Quants(five, p, j, upper, 16, m4, one)));
}

/** [Σa, Σb, Σc, Σd] for four f32x4 (transpose-and-add; lane j sums as ((0+2)+(1+3))). */
// @ts-ignore: decorator
@inline function sums4(a: v128, b: v128, c: v128, d: v128): v128 {
  const t0 = f32x4.add(v128.shuffle<f32>(a, b, 0, 1, 4, 5), v128.shuffle<f32>(a, b, 2, 3, 6, 7));
  const t1 = f32x4.add(v128.shuffle<f32>(c, d, 0, 1, 4, 5), v128.shuffle<f32>(c, d, 2, 3, 6, 7));
  return f32x4.add(v128.shuffle<f32>(t0, t1, 0, 2, 4, 6), v128.shuffle<f32>(t0, t1, 1, 3, 5, 7));
}

/**
 * Prefill: one interleaved f32 group (four rows, 16-value chunks, row j of chunk c at
 * w + (4c + j)·64) against two tokens' activations (x and x + xs), n a multiple of 16. Register
 * tile of 4 rows × 2 tokens: per four values, four weight vectors and two activation vectors feed
 * eight multiply-adds (eight independent accumulators), so loads no longer bound the loop.
 * Stores lanes = rows: token 0 at out, token 1 at out + os. Each (row, token) takes the steps of
 * rows4F32.
 */
export function group4x2F32(w: usize, x: usize, xs: usize, n: i32, out: usize, os: usize): void {
  group4x2F32Steps(w, x, xs, n, 0, true, true, out, os);
}

/**
 * group4x2F32 over a run of chunks that continues (first = false) or starts the eight sums kept at
 * acc (128 bytes); last: they are reduced into out and out + os, else stored back. The same steps
 * in the same order, so a banded group (interleave.ts) computed block by block has
 * group4x2F32's bits.
 */
export function group4x2F32Run(w: usize, x: usize, xs: usize, n: i32, acc: usize, first: bool, last: bool, out: usize, os: usize): void {
  group4x2F32Steps(w, x, xs, n, acc, first, last, out, os);
}

/** The body of group4x2F32 and group4x2F32Run (see rows4F32Steps). */
// @ts-ignore: decorator
@inline function group4x2F32Steps(w: usize, x: usize, xs: usize, n: i32, acc: usize, first: bool, last: bool, out: usize, os: usize): void {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  if (!first) {
    a0 = v128.load(acc); a1 = v128.load(acc, 16); a2 = v128.load(acc, 32); a3 = v128.load(acc, 48);
    b0 = v128.load(acc, 64); b1 = v128.load(acc, 80); b2 = v128.load(acc, 96); b3 = v128.load(acc, 112);
  }
  for (let i = 0; i < n; i += 16) {
    const c = w + (<usize>i << 4), xo = x + (<usize>i << 2);
    for (let s: usize = 0; s < 64; s += 16) {
      const u = v128.load(xo + s), v = v128.load(xo + xs + s);
      const w0 = v128.load(c + s), w1 = v128.load(c + s, 64), w2 = v128.load(c + s, 128), w3 = v128.load(c + s, 192);
      a0 = madd(w0, u, a0); a1 = madd(w1, u, a1); a2 = madd(w2, u, a2); a3 = madd(w3, u, a3);
      b0 = madd(w0, v, b0); b1 = madd(w1, v, b1); b2 = madd(w2, v, b2); b3 = madd(w3, v, b3);
    }
  }
  if (last) {
    v128.store(out, sums4(a0, a1, a2, a3));
    v128.store(out + os, sums4(b0, b1, b2, b3));
    return;
  }
  v128.store(acc, a0); v128.store(acc, a1, 16); v128.store(acc, a2, 32); v128.store(acc, a3, 48);
  v128.store(acc, b0, 64); v128.store(acc, b1, 80); v128.store(acc, b2, 96); v128.store(acc, b3, 112);
}

/**
 * Prefill of one f16 group converted by dequantGroupHalf (row j of chunk c at w + (4c + j)·64,
 * each chunk in element order) against one token's x: rows4Half's steps per row, so prefilled
 * logits have decode's bits. Returns the four rows' sums; `fence`: 4 bytes written after (a store
 * after each row's add keeps TurboFan from hoisting the next row's loads). The tile's tokens
 * take it one after another, each reading the converted group again from L1/L2: 0.86–0.92× the
 * speed of group4x2F32's 4-row × 2-token tile (in-process, 128 tokens, 110M shapes), the best of
 * the tiles tried with these steps. Two tokens need eight sums beside a row's weights and the
 * activations, more than V8's 16 vector registers: kept in registers they spilled (0.65–0.79×),
 * kept in memory the loads bound the loop (0.82×).
 */
export function rows4HalfChunks(w: usize, x: usize, n: i32, fence: usize): v128 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  // two chunks per iteration (+4–7% over one: V8's loop overhead), then an odd last chunk
  for (let i = 0; i < n; i += 32) {
    let c = w + (<usize>i << 4), xo = x + (<usize>i << 2);
    // a chunk's activations once, for the four rows (loaded per row, they bound the loop)
    let x0 = v128.load(xo), x1 = v128.load(xo, 16), x2 = v128.load(xo, 32), x3 = v128.load(xo, 48);
    a0 = f32x4.add(a0, rowChunk(c, x0, x1, x2, x3)); v128.store32_lane(fence, a0, 0);
    a1 = f32x4.add(a1, rowChunk(c + 64, x0, x1, x2, x3)); v128.store32_lane(fence, a1, 0);
    a2 = f32x4.add(a2, rowChunk(c + 128, x0, x1, x2, x3)); v128.store32_lane(fence, a2, 0);
    a3 = f32x4.add(a3, rowChunk(c + 192, x0, x1, x2, x3)); v128.store32_lane(fence, a3, 0);
    if (i + 16 == n) break;
    c += 256; xo += 64;
    x0 = v128.load(xo); x1 = v128.load(xo, 16); x2 = v128.load(xo, 32); x3 = v128.load(xo, 48);
    a0 = f32x4.add(a0, rowChunk(c, x0, x1, x2, x3)); v128.store32_lane(fence, a0, 0);
    a1 = f32x4.add(a1, rowChunk(c + 64, x0, x1, x2, x3)); v128.store32_lane(fence, a1, 0);
    a2 = f32x4.add(a2, rowChunk(c + 128, x0, x1, x2, x3)); v128.store32_lane(fence, a2, 0);
    a3 = f32x4.add(a3, rowChunk(c + 192, x0, x1, x2, x3)); v128.store32_lane(fence, a3, 0);
  }
  return sums4(a0, a1, a2, a3);
}

/** One converted row chunk (16 f32 at c) · the chunk's activations x0..x3 as chunkSum. */
// @ts-ignore: decorator
@inline function rowChunk(c: usize, x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  return chunkSum(v128.load(c), x0, v128.load(c, 16), x1, v128.load(c, 32), x2, v128.load(c, 48), x3);
}
