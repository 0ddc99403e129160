// Integer dot products for the block-quantized weight types (the approach of llama.cpp's
// ggml_vec_dot_q*_q8_0): the activation vector is quantized once per matmul to int8 in 32-element
// blocks with one f32 scale each (Q8_0-style: d = amax/127, q = round(x/d)), stored pre-widened
// to i16 so that every weight block is one run of i32x4.dot_i16x8_s; the weight and activation
// scales are applied once per block. Weight block layouts: ggml-common.h (block_q4_0 … block_q6_k).
import { bit5, half, half2K, half4At, halfK, reduce4, reduce4i16 } from './simd';
import { Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, bitsK23 } from './rows';

/**
 * i16x8 loop constants read from memory (binaryen would re-materialize a v128.const at each use
 * inside loops, costing V8 several instructions each): 0x0f, 1, 3, 32, 0x10, bit selectors, and
 * (as i32x4) the f16 → f32 mask 0x8fffe000 and 2^112, and (bytes) 0x0f at offset 128, 0x01 at 144,
 * 0x03 at 160, 0x20 at 176, 0x30 at 192, and (i32) 0x7fffffff at 208.
 */
export const QC = memory.data<u16>([
  15, 15, 15, 15, 15, 15, 15, 15,
  1, 1, 1, 1, 1, 1, 1, 1,
  3, 3, 3, 3, 3, 3, 3, 3,
  32, 32, 32, 32, 32, 32, 32, 32,
  16, 16, 16, 16, 16, 16, 16, 16,
  1, 2, 4, 8, 16, 32, 64, 128,
  0xe000, 0x8fff, 0xe000, 0x8fff, 0xe000, 0x8fff, 0xe000, 0x8fff,
  0, 0x7780, 0, 0x7780, 0, 0x7780, 0, 0x7780,
  0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f,
  0x0101, 0x0101, 0x0101, 0x0101, 0x0101, 0x0101, 0x0101, 0x0101,
  0x0303, 0x0303, 0x0303, 0x0303, 0x0303, 0x0303, 0x0303, 0x0303,
  0x2020, 0x2020, 0x2020, 0x2020, 0x2020, 0x2020, 0x2020, 0x2020,
  0x3030, 0x3030, 0x3030, 0x3030, 0x3030, 0x3030, 0x3030, 0x3030,
  0xffff, 0x7fff, 0xffff, 0x7fff, 0xffff, 0x7fff, 0xffff, 0x7fff,
], 16);

/** Bytes 0x3f and 0xc0: the packed Q6_K layout's value and top-bit masks (q6Pack). */
export const P6_MASKS = memory.data<u16>([
  0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f, 0x3f3f,
  0xc0c0, 0xc0c0, 0xc0c0, 0xc0c0, 0xc0c0, 0xc0c0, 0xc0c0, 0xc0c0,
], 16);

/** i32 lanes 63 and 15 (K-quant 6-bit scale masks), from memory: splats inside a loop cost V8 three instructions each per iteration. */
const K6 = memory.data<u32>([63, 63, 63, 63, 15, 15, 15, 15], 16);

/** Whether `type` has an integer dot product here (the matmul then wants quantized activations). */
export function hasIntDot(type: i32): bool {
  return type == Q8_0 || type == Q4_0 || type == Q4_1 || type == Q5_0 || type == Q5_1 || type == Q4_K || type == Q5_K || type == Q6_K
    || (ASC_FEATURE_RELAXED_SIMD && (type == Q2_K || type == Q3_K));
}

/**
 * Quantize nBlocks consecutive 32-element blocks of f32 at x: xq receives 32 i16 per block
 * (values in [−127, 127]), xd two f32 per block: the scale d (x ≈ d·xq[b][i]) and d·Σxq[b]
 * (for the constant offset of Q4_0/Q5_0 quants). Rounds half to even.
 */
export function quantizeBlocks(xq: usize, xd: usize, x: usize, nBlocks: i32): void {
  for (let b = 0; b < nBlocks; b++) {
    const p = x + (<usize>b << 7);
    const d: f32 = absMax32(p) / 127;
    const id = f32x4.splat(d != 0 ? <f32>1 / d : 0);
    const q = xq + (<usize>b << 6);
    let sum = i32x4.splat(0);
    for (let k = 0; k < 4; k++) {
      const o = <usize>k << 5;
      const a = roundInt(f32x4.mul(v128.load(p + o), id));
      const c = roundInt(f32x4.mul(v128.load(p + o, 16), id));
      sum = i32x4.add(sum, i32x4.add(a, c));
      v128.store(q + (<usize>k << 4), i16x8.narrow_i32x4_s(a, c));
    }
    store<f32>(xd + (<usize>b << 3), d);
    store<f32>(xd + (<usize>b << 3), d * <f32>isum(sum), 4);
  }
}

/**
 * Lanes rounded to the nearest integer, ties to even, as i32 (for |v| < 2^22, which holds for
 * activations scaled to ±127): adding 1.5·2^23 makes the f32 adder round, and the integer then
 * sits in the low mantissa bits. Same results as trunc_sat(nearest(v)), which V8 lowers to about
 * ten x64 instructions (NaN and saturation fix-ups) instead of two.
 */
// @ts-ignore: decorator
@inline function roundInt(v: v128): v128 {
  return i32x4.sub(f32x4.add(v, f32x4.splat(12582912)), i32x4.splat(0x4b400000));
}

/**
 * max |x[i]| over the 32 f32 at p. Compares the magnitudes' bit patterns as unsigned integers,
 * which order like the values (a NaN's pattern is above every number's, so a NaN input still
 * gives a NaN scale): one pmaxud per step, where f32x4.max's NaN and ±0 rules cost V8 about
 * seven instructions each and the scalar max of the last lanes as many again (quantization ran
 * at 1 G values/s on a Zen 5 core, ~4% of a 110M Q4_0 prefill).
 */
// @ts-ignore: decorator
@inline function absMax32(p: usize): f32 {
  const a = v128.load(QC, 208);
  let m = i32x4.max_u(v128.and(v128.load(p), a), v128.and(v128.load(p, 16), a));
  m = i32x4.max_u(m, i32x4.max_u(v128.and(v128.load(p, 32), a), v128.and(v128.load(p, 48), a)));
  m = i32x4.max_u(m, i32x4.max_u(v128.and(v128.load(p, 64), a), v128.and(v128.load(p, 80), a)));
  m = i32x4.max_u(m, i32x4.max_u(v128.and(v128.load(p, 96), a), v128.and(v128.load(p, 112), a)));
  m = i32x4.max_u(m, v128.shuffle<i32>(m, m, 2, 3, 0, 1));
  m = i32x4.max_u(m, v128.shuffle<i32>(m, m, 1, 0, 3, 2));
  return f32x4.extract_lane(m, 0);
}

/**
 * quantizeBlocks with the same values and scales, stored as 32 i8 per block at xq + 32·b (the
 * layout of the relaxed 8-bit dot products, see compactInt8).
 */
export function quantizeBlocksI8(xq: usize, xd: usize, x: usize, nBlocks: i32): void {
  for (let b = 0; b < nBlocks; b++) {
    const p = x + (<usize>b << 7);
    const d: f32 = absMax32(p) / 127;
    const id = f32x4.splat(d != 0 ? <f32>1 / d : 0);
    const q = xq + (<usize>b << 5);
    let sum = i32x4.splat(0);
    for (let k = 0; k < 2; k++) {
      const o = <usize>k << 6;
      const a = roundInt(f32x4.mul(v128.load(p + o), id));
      const c = roundInt(f32x4.mul(v128.load(p + o, 16), id));
      const e = roundInt(f32x4.mul(v128.load(p + o, 32), id));
      const f = roundInt(f32x4.mul(v128.load(p + o, 48), id));
      sum = i32x4.add(sum, i32x4.add(i32x4.add(a, c), i32x4.add(e, f)));
      v128.store(q + (<usize>k << 4), i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(a, c), i16x8.narrow_i32x4_s(e, f)));
    }
    store<f32>(xd + (<usize>b << 3), d);
    store<f32>(xd + (<usize>b << 3), d * <f32>isum(sum), 4);
  }
}

/**
 * Whether matmul of `type` reads i8 activations (quantizeBlocksI8): the relaxed-SIMD build's
 * Q4_0 kernels, which feed the unsigned nibbles (0..15, top bit clear, so the i7 operand is
 * exact) to i16x8.relaxed_dot_i8x16_i7x16_s: 16 multiply-adds per instruction.
 */
export function compactInt8(type: i32): bool {
  return ASC_FEATURE_RELAXED_SIMD && (type == Q4_0 || type == Q5_0 || type == Q5_1 || type == Q2_K || type == Q3_K || type == Q4_K || type == Q5_K || type == Q6_K);
}

/**
 * dotRowQ for Q4_K/Q5_K: 256-element super-blocks of 8 sub-blocks of 32 with 6-bit scales and
 * mins (ggml get_scale_min_k4); quant byte 32j+i holds sub-block 2j element i (low nibble) and
 * 2j+1 element i (high nibble), Q5_K's fifth bits are bit 2j / 2j+1 of qh byte i. The eight
 * exact integer sub-block sums are reduced into two vectors, and scales, mins, activation scales
 * and block sums are applied as vectors (8 lanes per super-block). The relaxed build reads i8
 * activations (compactInt8) and uses relaxed 8-bit dot products; the float steps are the same in
 * both builds, so they agree bit for bit.
 */
export function dotQ4K(five: bool, w: usize, xq: usize, xd: usize, xs: usize, n: i32, fence: usize): f32 {
  const bs: usize = five ? 176 : 144;
  const m4 = ASC_FEATURE_RELAXED_SIMD ? v128.load(QC, 128) : v128.load(QC);
  const one = ASC_FEATURE_RELAXED_SIMD ? v128.load(QC, 144) : v128.load(QC, 16);
  const c63 = v128.load(K6), c15 = v128.load(K6, 16), z = i32x4.splat(0), ones = v128.load(QC, 16);
  let acc = f32x4.splat(0), macc = f32x4.splat(0);
  for (let sb = 0; sb < (n >> 8); sb++) {
    const p = w + <usize>sb * bs;
    const xb = sb << 3;
    let sLo: v128, sHi: v128;
    if (ASC_FEATURE_RELAXED_SIMD && !five) {
      // 4-bit quants: reduce the sub-block sums in i16 first (reduce4i16; exact)
      sLo = reduce4i16(subK4r(p, 0, false, xq, xb, m4), subK4r(p, 0, true, xq, xb + 1, m4),
        subK4r(p, 1, false, xq, xb + 2, m4), subK4r(p, 1, true, xq, xb + 3, m4), ones);
      sHi = reduce4i16(subK4r(p, 2, false, xq, xb + 4, m4), subK4r(p, 2, true, xq, xb + 5, m4),
        subK4r(p, 3, false, xq, xb + 6, m4), subK4r(p, 3, true, xq, xb + 7, m4), ones);
    } else {
      // the stores keep TurboFan from loading all eight sub-blocks up front (spills)
      sLo = subSums4(five, p, 0, xq, xb, m4, one, fence);
      v128.store32_lane(fence, sLo, 0);
      sHi = subSums4(five, p, 2, xq, xb + 4, m4, one, fence);
    }
    // the 12 scale bytes at p+4, zero-extended to i32 lanes: A = bytes 0..3, B = 4..7, C = 8..11
    const v = v128.load(p, 4);
    const A = v128.shuffle<u8>(v, z, 0, 16, 16, 16, 1, 16, 16, 16, 2, 16, 16, 16, 3, 16, 16, 16);
    const B = v128.shuffle<u8>(v, z, 4, 16, 16, 16, 5, 16, 16, 16, 6, 16, 16, 16, 7, 16, 16, 16);
    const C = v128.shuffle<u8>(v, z, 8, 16, 16, 16, 9, 16, 16, 16, 10, 16, 16, 16, 11, 16, 16, 16);
    const scLo = v128.and(A, c63), scHi = v128.or(v128.and(C, c15), i32x4.shl(i32x4.shr_u(A, 6), 4));
    const mLo = v128.and(B, c63), mHi = v128.or(i32x4.shr_u(C, 4), i32x4.shl(i32x4.shr_u(B, 6), 4));
    const dp = xd + (<usize>xb << 3), sp = xs + (<usize>xb << 2);
    const dxLo = actScales4(dp), dxHi = actScales4(dp + 32);
    const t = f32x4.add(f32x4.mul(f32x4.convert_i32x4_s(i32x4.mul(sLo, scLo)), dxLo), f32x4.mul(f32x4.convert_i32x4_s(i32x4.mul(sHi, scHi)), dxHi));
    const dm = half2K(p);
    acc = f32x4.add(acc, f32x4.mul(t, v128.shuffle<f32>(dm, dm, 0, 0, 0, 0)));
    const mt = f32x4.add(f32x4.mul(f32x4.convert_i32x4_s(mLo), v128.load(sp)), f32x4.mul(f32x4.convert_i32x4_s(mHi), v128.load(sp, 16)));
    macc = f32x4.add(macc, f32x4.mul(mt, v128.shuffle<f32>(dm, dm, 1, 1, 1, 1)));
  }
  return hsum4(acc) - hsum4(macc);
}

/**
 * [Σ sub-block 2j, 2j+1, 2j+2, 2j+3] of a Q4_K/Q5_K super-block (subK) against activation blocks
 * blk..blk+3, with a store between them (see dotQ4K).
 */
// @ts-ignore: decorator
@inline function subSums4(five: bool, p: usize, j: i32, xq: usize, blk: i32, m4: v128, one: v128, fence: usize): v128 {
  const e0 = subK(five, p, j, false, xq, blk, m4, one);
  v128.store32_lane(fence, e0, 0);
  const e1 = subK(five, p, j, true, xq, blk + 1, m4, one);
  v128.store32_lane(fence, e1, 0);
  const e2 = subK(five, p, j + 1, false, xq, blk + 2, m4, one);
  v128.store32_lane(fence, e2, 0);
  return reduce4(e0, e1, e2, subK(five, p, j + 1, true, xq, blk + 3, m4, one));
}

/** Relaxed-build Q4_K sub-block 2j (+1 when `upper`) · activation block `blk` as eight i16 partial sums (dotr16). */
// @ts-ignore: decorator
@inline function subK4r(p: usize, j: i32, upper: bool, xq: usize, blk: i32, m4: v128): v128 {
  return dotr16(k45Quants(false, p, j, upper, 0, m4, m4), k45Quants(false, p, j, upper, 16, m4, m4), xq + (<usize>blk << 5));
}

/**
 * Integer dot of Q4_K/Q5_K sub-block 2j (+1 when `upper`: the high nibbles) with activation
 * block `blk`, as i32x4 partial sums: relaxed build over i8 activations (m4/one: byte masks 0x0f,
 * 0x01), SIMD128 build over i16 activations with widened quants (m4/one: i16 masks).
 */
// @ts-ignore: decorator
@inline export function subK(five: bool, p: usize, j: i32, upper: bool, xq: usize, blk: i32, m4: v128, one: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    return dotr(k45Quants(five, p, j, upper, 0, m4, one), k45Quants(five, p, j, upper, 16, m4, one), xq + (<usize>blk << 5));
  }
  return dot32(k45Wide(five, p, j, upper, 0, m4, one), k45Wide(five, p, j, upper, 8, m4, one),
    k45Wide(five, p, j, upper, 16, m4, one), k45Wide(five, p, j, upper, 24, m4, one), xq + (<usize>blk << 6));
}

/**
 * The 16 unsigned quants at positions off..off+15 (off 0 or 16) of Q4_K/Q5_K sub-block 2j (+1
 * when `upper`: the high nibbles) of the super-block at p, as bytes: for Q5_K (`five`) bit 2j(+1)
 * of the qh bytes becomes bit 4 (`fifth`; one: bytes of 1). m4: bytes 0x0f.
 */
// @ts-ignore: decorator
@inline export function k45Quants(five: bool, p: usize, j: i32, upper: bool, off: usize, m4: v128, one: v128): v128 {
  const v = v128.load(p + (five ? 48 : 16) + (<usize>j << 5) + off);
  const a = upper ? v128.and(i16x8.shr_u(v, 4), m4) : v128.and(v, m4);
  if (!five) return a;
  return v128.or(a, fifth(v128.load(p + 16 + off), 2 * j + (upper ? 1 : 0), one));
}

/** k45Quants for positions off..off+7 widened to i16 lanes (SIMD128 build; m4, one: i16 masks 0x0f, 1). */
// @ts-ignore: decorator
@inline function k45Wide(five: bool, p: usize, j: i32, upper: bool, off: usize, m4: v128, one: v128): v128 {
  const v = v128.load8x8_u(p + (five ? 48 : 16) + (<usize>j << 5) + off);
  const a = upper ? i16x8.shr_u(v, 4) : v128.and(v, m4);
  if (!five) return a;
  return v128.or(a, fifth(v128.load8x8_u(p + 16 + off), 2 * j + (upper ? 1 : 0), one));
}

/**
 * dotRowQ for Q6_K: 256-element super-blocks in two halves of 128; element l (0..31) of quarter k
 * takes its low 4 bits from ql (byte l, +32 when k is odd; low nibble for k < 2, high for k ≥ 2)
 * and 2 high bits from qh byte l (bits 2k, 2k+1), minus 32; one i8 scale per 16 elements
 * (ggml dequantize_row_q6_K). Per half, the eight exact integer 16-element sums are reduced into
 * two vectors, scaled by the i8 scales in integer, pairs added into the four quarter sums, and
 * those scaled by the activation scales as one vector. The relaxed build takes the group sums from
 * relaxed 8-bit dot products (the unsigned 6-bit quants are the i7 operand; the −32 offset is a
 * second dot product against 32s); integer group sums are exact, so both builds agree bit for bit.
 */
export function dotQ6K(w: usize, xq: usize, xd: usize, n: i32, fence: usize): f32 {
  return q6KRow(false, w, xq, xd, 0, n, fence);
}

/**
 * dotQ6K for decode in the relaxed build, with 32·Σx of every 16-value activation group computed
 * once per matmul (q6GroupSums at gs) instead of a second 8-bit dot product per group and row:
 * the group sums Σx·q (i16 halves widened before they could overflow) minus those, the same exact
 * integers, so the same bits as dotQ6K.
 */
export function dotQ6Kd(w: usize, xq: usize, xd: usize, gs: usize, n: i32, fence: usize): f32 {
  return q6KRow(ASC_FEATURE_RELAXED_SIMD, w, xq, xd, gs, n, fence);
}

/** dotQ6Kd over a row in the packed layout (q6Pack; relaxed build): the same exact integer sums, so the same bits. */
export function dotQ6Kp(w: usize, xq: usize, xd: usize, gs: usize, n: i32, fence: usize): f32 {
  return q6KRow(ASC_FEATURE_RELAXED_SIMD, w, xq, xd, gs, n, fence, true);
}

// The packed Q6_K layout (relaxed build; interleave.ts chunkBytes 210). A super-block's 128 bytes
// of low nibbles and 64 of high bit pairs become, per half of 128 values, six vectors B0..B5:
// byte l of B_g holds value l of the half's 16-value group g (0..5) in its low six bits, and its
// top two bits hold bits 0-1, 2-3, 4-5 of value l of group 6 (B0..B2) or of group 7 (B3..B5).
// Group g covers values 16g..16g + 15 of the half (GGUF: quarter g/2, part g mod 2). Scales and d
// stay where they were (bytes 192..209). A decode step then takes the eight groups' quants out
// of their bytes in 22 vector operations per half instead of 34 (one mask each for six groups,
// three masks, three shifts and two ors for each of the other two): 110M Q6_K decode 1.11× as
// fast in a timing stand-in with that instruction count (bench/HISTORY.md, session 31). The bytes
// are the same in number, rearranged in place once at load like the other interleaved layouts.

/** Group 6 (from b0, b1, b2) or 7 (b3, b4, b5) of a packed half: the top bit pairs, low first. */
// @ts-ignore: decorator
@inline export function q6TopGroup(b0: v128, b1: v128, b2: v128, mc: v128): v128 {
  // i16 shifts of bytes masked to bits 6-7 keep every bit inside its own byte
  return v128.or(v128.or(i16x8.shr_u(v128.and(b0, mc), 6), i16x8.shr_u(v128.and(b1, mc), 4)), i16x8.shr_u(v128.and(b2, mc), 2));
}

/** Rearrange the Q6_K super-block at p into the packed layout, in place. */
export function q6Pack(p: usize): void {
  const m4 = v128.load(QC, 128), m30 = v128.load(QC, 192), mc = v128.load(P6_MASKS, 16);
  const a00 = v128.load(p), a01 = v128.load(p, 16), a02 = v128.load(p, 32), a03 = v128.load(p, 48);
  const a10 = v128.load(p, 64), a11 = v128.load(p, 80), a12 = v128.load(p, 96), a13 = v128.load(p, 112);
  const h00 = v128.load(p, 128), h01 = v128.load(p, 144), h10 = v128.load(p, 160), h11 = v128.load(p, 176);
  q6PackHalf(p, a00, a01, a02, a03, h00, h01, m4, m30, mc);
  q6PackHalf(p + 96, a10, a11, a12, a13, h10, h11, m4, m30, mc);
}

// @ts-ignore: decorator
@inline function q6PackHalf(d: usize, a0: v128, a1: v128, a2: v128, a3: v128, h0: v128, h1: v128, m4: v128, m30: v128, mc: v128): void {
  const g6 = q6QuantR(a2, h0, 6, m4, m30), g7 = q6QuantR(a3, h1, 6, m4, m30);
  // value bits 0-1, 2-3, 4-5 of groups 6 and 7 into bits 6-7 (i16 shifts, then the byte mask)
  v128.store(d, v128.or(q6QuantR(a0, h0, 0, m4, m30), v128.and(i16x8.shl(g6, 6), mc)));
  v128.store(d, v128.or(q6QuantR(a1, h1, 0, m4, m30), v128.and(i16x8.shl(g6, 4), mc)), 16);
  v128.store(d, v128.or(q6QuantR(a2, h0, 2, m4, m30), v128.and(i16x8.shl(g6, 2), mc)), 32);
  v128.store(d, v128.or(q6QuantR(a3, h1, 2, m4, m30), v128.and(i16x8.shl(g7, 6), mc)), 48);
  v128.store(d, v128.or(q6QuantR(a0, h0, 4, m4, m30), v128.and(i16x8.shl(g7, 4), mc)), 64);
  v128.store(d, v128.or(q6QuantR(a1, h1, 4, m4, m30), v128.and(i16x8.shl(g7, 2), mc)), 80);
}

/** Copy the packed Q6_K super-block at src to dst in GGUF order (scales and d included). */
export function q6Unpack(dst: usize, src: usize): void {
  const m3f = v128.load(P6_MASKS), mc = v128.load(P6_MASKS, 16), m0f = v128.load(QC, 128), m30 = v128.load(QC, 192);
  for (let h: usize = 0; h < 2; h++) {
    const b = src + h * 96;
    const b0 = v128.load(b), b1 = v128.load(b, 16), b2 = v128.load(b, 32), b3 = v128.load(b, 48), b4 = v128.load(b, 64), b5 = v128.load(b, 80);
    const q0 = v128.and(b0, m3f), q1 = v128.and(b1, m3f), q2 = v128.and(b2, m3f), q3 = v128.and(b3, m3f);
    const q4 = v128.and(b4, m3f), q5 = v128.and(b5, m3f), q6 = q6TopGroup(b0, b1, b2, mc), q7 = q6TopGroup(b3, b4, b5, mc);
    // ql: groups 0..3 in the low nibbles, 4..7 in the high ones; qh: bits 4-5 of groups g, g + 2,
    // g + 4, g + 6 (g = 0, 1) at bits 0-1, 2-3, 4-5, 6-7
    const ql = dst + (h << 6), qh = dst + 128 + (h << 5);
    v128.store(ql, v128.or(v128.and(q0, m0f), i16x8.shl(v128.and(q4, m0f), 4)));
    v128.store(ql, v128.or(v128.and(q1, m0f), i16x8.shl(v128.and(q5, m0f), 4)), 16);
    v128.store(ql, v128.or(v128.and(q2, m0f), i16x8.shl(v128.and(q6, m0f), 4)), 32);
    v128.store(ql, v128.or(v128.and(q3, m0f), i16x8.shl(v128.and(q7, m0f), 4)), 48);
    v128.store(qh, v128.or(v128.or(i16x8.shr_u(v128.and(q0, m30), 4), i16x8.shr_u(v128.and(q2, m30), 2)), v128.or(v128.and(q4, m30), i16x8.shl(v128.and(q6, m30), 2))));
    v128.store(qh, v128.or(v128.or(i16x8.shr_u(v128.and(q1, m30), 4), i16x8.shr_u(v128.and(q3, m30), 2)), v128.or(v128.and(q5, m30), i16x8.shl(v128.and(q7, m30), 2))), 16);
  }
  memory.copy(dst + 192, src + 192, 18);
}

/**
 * dotQ6Kp's four group sums of one half's groups 0..3 (lo) or 4..7 against the 64 i8 activations
 * at xp (relaxed build), widened (reduce4i16w); b0..b5: the half's packed vectors.
 */
// @ts-ignore: decorator
@inline function q6GroupsP(lo: bool, xp: usize, b0: v128, b1: v128, b2: v128, b3: v128, b4: v128, b5: v128, m3f: v128, mc: v128, ones: v128, fence: usize): v128 {
  const d0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp), v128.and(lo ? b0 : b4, m3f));
  v128.store32_lane(fence, d0, 0);
  const d1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp, 16), v128.and(lo ? b1 : b5, m3f));
  v128.store32_lane(fence, d1, 0);
  const d2 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp, 32), lo ? v128.and(b2, m3f) : q6TopGroup(b0, b1, b2, mc));
  v128.store32_lane(fence, d2, 0);
  const d3 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp, 48), lo ? v128.and(b3, m3f) : q6TopGroup(b3, b4, b5, mc));
  return reduce4i16w(d0, d1, d2, d3, ones);
}

/** gs[g] = 32·Σ xq[16g .. 16g+15] (i32) for the n/16 groups of one token's i8 activations (dotQ6Kd). */
export function q6GroupSums(gs: usize, xq: usize, n: i32): void {
  for (let g = 0; g < n >> 4; g++) {
    const v = i32x4.extadd_pairwise_i16x8_s(i16x8.extadd_pairwise_i8x16_s(v128.load(xq + (<usize>g << 4))));
    store<i32>(gs + (<usize>g << 2), (i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) + i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3)) << 5);
  }
}

// @ts-ignore: decorator
@inline function q6KRow(sums: bool, w: usize, xq: usize, xd: usize, gs: usize, n: i32, fence: usize, packed: bool = false): f32 {
  // The relaxed build reads compact i8 activations (32 bytes per block, q6PartR); SIMD128 reads
  // them widened (64 bytes per block, q6Part). Both give the same exact integer group sums.
  const R = ASC_FEATURE_RELAXED_SIMD;
  const c: usize = R ? 128 : 0;
  const m4 = v128.load(QC + c), m3 = v128.load(QC + c, 32), e32 = v128.load(QC + c, 48);
  const xsh: usize = R ? 5 : 6, part: usize = R ? 16 : 32;
  const ones = v128.load(QC, 16);
  let acc = f32x4.splat(0);
  for (let sb = 0; sb < (n >> 8); sb++) {
    const p = w + <usize>sb * 210;
    let t = f32x4.splat(0);
    for (let h = 0; h < 2; h++) {
      const ql = p + (<usize>h << 6), qh = p + 128 + (<usize>h << 5), sc = p + 192 + (<usize>h << 3);
      const xb = (sb << 3) + (h << 2);
      const xp = xq + (<usize>xb << xsh);
      // group sums [quarter 0 part 0, q0 p1, q1 p0, q1 p1] and the same for quarters 2, 3.
      // Relaxed build: i16 partials of Σx·(q−32), each |·| ≤ 2·32·127 = 8128, so four sum in i16
      // (reduce4i16); with `sums` (dotQ6Kd) partials of Σx·q, widened earlier, minus 32·Σx from gs.
      // SIMD128 build: i32 partials. The stores keep TurboFan from loading all eight groups up
      // front (it spilled most of them).
      const gp = gs + (<usize>xb << 3);
      let gLo: v128, gHi: v128;
      if (R && sums && packed) {
        // the packed layout (q6Pack): the half's six vectors, loaded once
        const b = p + <usize>h * 96, m3f = v128.load(P6_MASKS), mc = v128.load(P6_MASKS, 16);
        const b0 = v128.load(b), b1 = v128.load(b, 16), b2 = v128.load(b, 32), b3 = v128.load(b, 48), b4 = v128.load(b, 64), b5 = v128.load(b, 80);
        gLo = i32x4.sub(q6GroupsP(true, xp, b0, b1, b2, b3, b4, b5, m3f, mc, ones, fence), v128.load(gp));
        v128.store32_lane(fence, gLo, 0);
        gHi = i32x4.sub(q6GroupsP(false, xp + 64, b0, b1, b2, b3, b4, b5, m3f, mc, ones, fence), v128.load(gp, 16));
      } else if (R && sums) {
        // dotQ6Kd: the half's four ql and two qh vectors loaded once (each serves two or four
        // groups: low and high nibbles, bit pairs 0..3 and 4..7), not once per group (q6Quant)
        const a0 = v128.load(ql), a1 = v128.load(ql, 16), a2 = v128.load(ql, 32), a3 = v128.load(ql, 48);
        const h0 = v128.load(qh), h1 = v128.load(qh, 16), m30 = v128.load(QC, 192);
        gLo = i32x4.sub(q6GroupsR(xp, a0, a1, a2, a3, h0, h1, 0, m4, m30, ones, fence), v128.load(gp));
        v128.store32_lane(fence, gLo, 0);
        gHi = i32x4.sub(q6GroupsR(xp + 64, a0, a1, a2, a3, h0, h1, 4, m4, m30, ones, fence), v128.load(gp, 16));
      } else {
        const d0 = q6Part4(sums, ql, qh, 0, xp, m4, m3, e32);
        v128.store32_lane(fence, d0, 0);
        const d1 = q6Part4(sums, ql + 16, qh + 16, 0, xp + part, m4, m3, e32);
        v128.store32_lane(fence, d1, 0);
        const d2 = q6Part4(sums, ql + 32, qh, 2, xp + 2 * part, m4, m3, e32);
        v128.store32_lane(fence, d2, 0);
        const d3 = q6Part4(sums, ql + 48, qh + 16, 2, xp + 3 * part, m4, m3, e32);
        gLo = q6Sums4(sums, d0, d1, d2, d3, ones, gp);
        v128.store32_lane(fence, gLo, 0);
        const d4 = q6Part4(sums, ql, qh, 4, xp + 4 * part, m4, m3, e32);
        v128.store32_lane(fence, d4, 0);
        const d5 = q6Part4(sums, ql + 16, qh + 16, 4, xp + 5 * part, m4, m3, e32);
        v128.store32_lane(fence, d5, 0);
        const d6 = q6Part4(sums, ql + 32, qh, 6, xp + 6 * part, m4, m3, e32);
        v128.store32_lane(fence, d6, 0);
        const d7 = q6Part4(sums, ql + 48, qh + 16, 6, xp + 7 * part, m4, m3, e32);
        gHi = q6Sums4(sums, d4, d5, d6, d7, ones, gp + 16);
      }
      const s16 = i16x8.extend_low_i8x16_s(v128.load64_zero(sc));
      const l = i32x4.mul(gLo, i32x4.extend_low_i16x8_s(s16)), u = i32x4.mul(gHi, i32x4.extend_high_i16x8_s(s16));
      t = f32x4.add(t, f32x4.mul(f32x4.convert_i32x4_s(pairSums(l, u)), actScales4(xd + (<usize>xb << 3))));
    }
    acc = f32x4.add(acc, f32x4.mul(t, f32x4.splat(halfK(load<u16>(p, 208)))));
  }
  return hsum4(acc);
}

/**
 * One-token Q3_K row (relaxed build, decode; the SIMD128 build keeps Q3_K on the f32 path): per
 * half of a super-block, the 3-bit quants of each 16-value group (q23Part: unsigned 0..7) against
 * the i8 activations by relaxed 8-bit dot products, as i16 partials (each ≤ 2·7·127, four of them
 * still fit), reduced four groups at a time (reduce4i16), minus the format's offset 4·Σx from the
 * activations' group sums (q6GroupSums at gs: 32·Σx per 16 values, once per matmul), times the
 * groups' signed 6-bit scales in integer, pairs added into one sum per 32-value activation
 * block, scaled by the blocks' activation scales; the super-block's d last. Exact integers.
 */
export function dotQ3K(w: usize, xq: usize, xd: usize, gs: usize, n: i32, fence: usize): f32 {
  return q23KRow(true, w, xq, xd, gs, n, fence);
}

/**
 * One-token Q2_K row (relaxed build, decode): as dotQ3K with unsigned 2-bit quants and 4-bit
 * scales, plus the min term dmin·Σ m·Σx per group, Σx taken from the activations' group sums
 * (q6GroupSums at gs: 32·Σx per 16 values, computed once per matmul).
 */
export function dotQ2K(w: usize, xq: usize, xd: usize, gs: usize, n: i32, fence: usize): f32 {
  return q23KRow(false, w, xq, xd, gs, n, fence);
}

// @ts-ignore: decorator
@inline function q23KRow(three: bool, w: usize, xq: usize, xd: usize, gs: usize, n: i32, fence: usize): f32 {
  const ones = v128.load(QC, 16), m15 = i8x16.splat(15), z = i32x4.splat(0);
  let acc = f32x4.splat(0);
  for (let sb = 0; sb < (n >> 8); sb++) {
    const p = w + <usize>sb * (three ? 110 : 84);
    let sc: v128, mn = z, hm0 = z, hm1 = z;
    if (three) {
      sc = scalesQ3(p + 96);
      hm0 = v128.load(p); hm1 = v128.load(p, 16);
    } else {
      const v = v128.load(p);
      sc = v128.and(v, m15); mn = v128.and(i16x8.shr_u(v, 4), m15);
    }
    let t = f32x4.splat(0), tm = f32x4.splat(0);
    for (let h = 0; h < 2; h++) {
      const qb = p + (three ? 32 : 16) + (<usize>h << 5);
      const q0 = v128.load(qb), q1 = v128.load(qb, 16);
      const xb = (sb << 3) + (h << 2);
      const xp = xq + (<usize>xb << 5);
      // quarter k of the half: elements 32k..32k+31, activation block xb + k, groups 8h + 2k, 8h + 2k + 1
      const e0 = q23Part(three, q0, hm0, 0, 4 * h, xp);
      v128.store32_lane(fence, e0, 0);
      const e1 = q23Part(three, q1, hm1, 0, 4 * h, xp + 16);
      v128.store32_lane(fence, e1, 0);
      const e2 = q23Part(three, q0, hm0, 2, 4 * h + 1, xp + 32);
      v128.store32_lane(fence, e2, 0);
      const e3 = q23Part(three, q1, hm1, 2, 4 * h + 1, xp + 48);
      let gLo = reduce4i16(e0, e1, e2, e3, ones);
      v128.store32_lane(fence, gLo, 0);
      const e4 = q23Part(three, q0, hm0, 4, 4 * h + 2, xp + 64);
      v128.store32_lane(fence, e4, 0);
      const e5 = q23Part(three, q1, hm1, 4, 4 * h + 2, xp + 80);
      v128.store32_lane(fence, e5, 0);
      const e6 = q23Part(three, q0, hm0, 6, 4 * h + 3, xp + 96);
      v128.store32_lane(fence, e6, 0);
      const e7 = q23Part(three, q1, hm1, 6, 4 * h + 3, xp + 112);
      let gHi = reduce4i16(e4, e5, e6, e7, ones);
      const gp = gs + (<usize>((sb << 4) + (h << 3)) << 2);
      if (three) {
        // the offset: Σx·(q − 4) = Σx·q − (32·Σx >> 3)
        gLo = i32x4.sub(gLo, i32x4.shr_s(v128.load(gp), 3));
        gHi = i32x4.sub(gHi, i32x4.shr_s(v128.load(gp, 16), 3));
      }
      const s16 = h == 0 ? i16x8.extend_low_i8x16_s(sc) : i16x8.extend_high_i8x16_s(sc);
      const dx = actScales4(xd + (<usize>xb << 3));
      t = f32x4.add(t, f32x4.mul(f32x4.convert_i32x4_s(pairSums(i32x4.mul(gLo, i32x4.extend_low_i16x8_s(s16)), i32x4.mul(gHi, i32x4.extend_high_i16x8_s(s16)))), dx));
      if (!three) {
        // Σ m·Σx over the groups of each activation block (exact integers: 32·Σx >> 5)
        const m16 = h == 0 ? i16x8.extend_low_i8x16_s(mn) : i16x8.extend_high_i8x16_s(mn);
        const sLo = i32x4.shr_s(v128.load(gp), 5), sHi = i32x4.shr_s(v128.load(gp, 16), 5);
        tm = f32x4.add(tm, f32x4.mul(f32x4.convert_i32x4_s(pairSums(i32x4.mul(sLo, i32x4.extend_low_i16x8_s(m16)), i32x4.mul(sHi, i32x4.extend_high_i16x8_s(m16)))), dx));
      }
    }
    if (three) acc = f32x4.add(acc, f32x4.mul(t, f32x4.splat(halfK(load<u16>(p, 108)))));
    else acc = f32x4.sub(f32x4.add(acc, f32x4.mul(t, f32x4.splat(halfK(load<u16>(p, 80))))), f32x4.mul(tm, f32x4.splat(halfK(load<u16>(p, 82)))));
  }
  return hsum4(acc);
}

/** [l0 + l1, l2 + l3, u0 + u1, u2 + u3] (i32): e.g. per-group products summed per 32-value activation block. */
// @ts-ignore: decorator
@inline function pairSums(l: v128, u: v128): v128 {
  return i32x4.add(v128.shuffle<i32>(l, u, 0, 2, 4, 6), v128.shuffle<i32>(l, u, 1, 3, 5, 7));
}

/** The activation scales d of four consecutive blocks from their (d, d·Σq) f32 pairs at dp (quantizeBlocks' xd). */
// @ts-ignore: decorator
@inline function actScales4(dp: usize): v128 {
  return v128.shuffle<f32>(v128.load(dp), v128.load(dp, 16), 0, 2, 4, 6);
}

/** Σ x·q over 16 i8 activations at xp for one Q2_K or Q3_K group (unsigned quants from rows.ts bitsK23: the i7 operand), as eight i16 partials. */
// @ts-ignore: decorator
@inline function q23Part(three: bool, qv: v128, hm: v128, shift: i32, hbit: i32, xp: usize): v128 {
  return i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp), bitsK23(three, qv, hm, shift, hbit));
}

/**
 * The 16 signed scales of a Q3_K super-block (6 bits each, minus 32) from its 12 scale bytes at
 * sc, as i8 lanes in group order: the low 4 bits are the low nibbles of bytes 0..7 (groups 0..7)
 * then their high nibbles (groups 8..15); the high 2 bits of group g are bits 2·(g/4) of byte
 * 8 + g%4, which lane g gets from the 32-bit word of bytes 8..11 shifted right by 2·(g/4).
 */
// @ts-ignore: decorator
@inline function scalesQ3(sc: usize): v128 {
  const v = v128.load64_zero(sc), m4 = i8x16.splat(15);
  const low = v128.shuffle<u8>(v128.and(v, m4), v128.and(i16x8.shr_u(v, 4), m4), 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const B = load<u32>(sc, 8);
  const hi = i8x16.shl(v128.and(i32x4(B, B >> 2, B >> 4, B >> 6), i8x16.splat(3)), 4);
  return i8x16.sub(v128.or(low, hi), i8x16.splat(32));
}

/** One group's partials for q6KRow: with `sums` (relaxed build only) Σx·q (q6DotU), else q6Group. */
// @ts-ignore: decorator
@inline function q6Part4(sums: bool, ql: usize, qh: usize, hs: i32, xp: usize, m4: v128, m3: v128, e32: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD && sums) return q6DotU(ql, qh, hs, xp, m4, m3);
  return q6Group(ql, qh, hs, xp, m4, m3, e32);
}

/** Four groups' sums for q6KRow: with `sums`, reduce4i16w minus 32·Σx at gp; else q6Reduce. */
// @ts-ignore: decorator
@inline function q6Sums4(sums: bool, d0: v128, d1: v128, d2: v128, d3: v128, ones: v128, gp: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD && sums) return i32x4.sub(reduce4i16w(d0, d1, d2, d3, ones), v128.load(gp));
  return q6Reduce(d0, d1, d2, d3, ones);
}

/** One Q6_K group's partial sums: i16 (q6PartR) in the relaxed build, i32 (q6Part) otherwise. */
// @ts-ignore: decorator
@inline function q6Group(ql: usize, qh: usize, hs: i32, xp: usize, m4: v128, m3: v128, e32: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return q6PartR(ql, qh, hs, xp, m4, m3, e32);
  return q6Part(ql, qh, hs, xp, m4, m3, e32);
}

/** [Σd0, Σd1, Σd2, Σd3] of four q6Group results, as i32x4. */
// @ts-ignore: decorator
@inline function q6Reduce(d0: v128, d1: v128, d2: v128, d3: v128, ones: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return reduce4i16(d0, d1, d2, d3, ones);
  return reduce4(d0, d1, d2, d3);
}

/**
 * q6Part over 16 i8 activations at xp with relaxed 8-bit dot products (byte masks m4, m3, e32 = 32s),
 * as eight i16 partial sums of x·(q − 32): each dot ≤ 2·63·127 in magnitude, their difference ≤ 8128.
 */
// @ts-ignore: decorator
@inline function q6PartR(ql: usize, qh: usize, hs: i32, xp: usize, m4: v128, m3: v128, e32: v128): v128 {
  return q6DotR(q6Quant(ql, qh, hs, m4, m3), xp, e32);
}

/** 16 unsigned 6-bit Q6_K quants (bytes 0..63): low 4 bits from ql (high nibble when hs ≥ 4), 2 high bits from qh >> hs. */
// @ts-ignore: decorator
@inline function q6Quant(ql: usize, qh: usize, hs: i32, m4: v128, m3: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return q6QuantR(v128.load(ql), v128.load(qh), hs, m4, v128.load(QC, 192));
  const a = v128.load(ql);
  const lo = hs >= 4 ? v128.and(i16x8.shr_u(a, 4), m4) : v128.and(a, m4);
  return v128.or(lo, i16x8.shl(v128.and(i16x8.shr_u(v128.load(qh), hs), m3), 4));
}

/**
 * q6Quant of loaded ql and qh vectors a and h (relaxed build; m30: bytes 0x30): bits hs, hs+1 of
 * each qh byte moved to bits 4, 5 by one 16-bit shift (the byte mask keeps each byte's own bits),
 * then or-ed into the low or high nibbles of a.
 */
// @ts-ignore: decorator
@inline function q6QuantR(a: v128, h: v128, hs: i32, m4: v128, m30: v128): v128 {
  const lo = hs >= 4 ? v128.and(i16x8.shr_u(a, 4), m4) : v128.and(a, m4);
  return v128.or(lo, v128.and(hs < 4 ? i16x8.shl(h, 4 - hs) : hs == 4 ? h : i16x8.shr_u(h, hs - 4), m30));
}

/**
 * dotQ6Kd's four group sums of one quarter pair of a half super-block (relaxed build): the quants
 * of ql vectors a0..a3 with qh bits hs, hs + 1 (a0, a1 from h0, h1) and hs + 2, hs + 3 (a2, a3),
 * against the 64 i8 activations at xp, widened (reduce4i16w). A store after each product keeps
 * TurboFan from loading every group up front.
 */
// @ts-ignore: decorator
@inline function q6GroupsR(xp: usize, a0: v128, a1: v128, a2: v128, a3: v128, h0: v128, h1: v128, hs: i32, m4: v128, m30: v128, ones: v128, fence: usize): v128 {
  const d0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp), q6QuantR(a0, h0, hs, m4, m30));
  v128.store32_lane(fence, d0, 0);
  const d1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp, 16), q6QuantR(a1, h1, hs, m4, m30));
  v128.store32_lane(fence, d1, 0);
  const d2 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp, 32), q6QuantR(a2, h0, hs + 2, m4, m30));
  v128.store32_lane(fence, d2, 0);
  const d3 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp, 48), q6QuantR(a3, h1, hs + 2, m4, m30));
  return reduce4i16w(d0, d1, d2, d3, ones);
}

/** Σ x·q (no −32) over 16 i8 activations at xp as eight i16 partial sums, each |·| ≤ 2·63·127 (dotQ6Kd). */
// @ts-ignore: decorator
@inline function q6DotU(ql: usize, qh: usize, hs: i32, xp: usize, m4: v128, m3: v128): v128 {
  return i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp), q6Quant(ql, qh, hs, m4, m3));
}

/**
 * [Σd0, Σd1, Σd2, Σd3] of four q6DotU results as i32x4: pairs of lanes add in i16 (≤ 4·63·127 =
 * 32004), then widen (i32x4.dot_i16x8_s with ones) before the last two additions.
 */
// @ts-ignore: decorator
@inline export function reduce4i16w(d0: v128, d1: v128, d2: v128, d3: v128, ones: v128): v128 {
  const t01 = i32x4.dot_i16x8_s(i16x8.add(v128.shuffle<i32>(d0, d1, 0, 2, 4, 6), v128.shuffle<i32>(d0, d1, 1, 3, 5, 7)), ones);
  const t23 = i32x4.dot_i16x8_s(i16x8.add(v128.shuffle<i32>(d2, d3, 0, 2, 4, 6), v128.shuffle<i32>(d2, d3, 1, 3, 5, 7)), ones);
  return pairSums(t01, t23);
}

/** Σ x·(q − 32) over 16 i8 activations at xp as eight i16 partial sums (|·| ≤ 8128; see q6PartR). */
// @ts-ignore: decorator
@inline function q6DotR(q: v128, xp: usize, e32: v128): v128 {
  const x = v128.load(xp);
  return i16x8.sub(i16x8.relaxed_dot_i8x16_i7x16_s(x, q), i16x8.relaxed_dot_i8x16_i7x16_s(x, e32));
}

/**
 * 16 Q6_K elements against 16 i16 activations at xp, as i32x4 partial sums: low 4 bits from the
 * 16 ql bytes at ql (high nibble when hs ≥ 4, i.e. quarters 2 and 3), 2 high bits from the qh
 * bytes at qh shifted right by hs, minus 32. |sum| ≤ 16·32·127.
 */
// @ts-ignore: decorator
@inline function q6Part(ql: usize, qh: usize, hs: i32, xp: usize, m4: v128, m3: v128, e32: v128): v128 {
  const a0 = v128.load8x8_u(ql), a1 = v128.load8x8_u(ql + 8);
  const h0 = v128.load8x8_u(qh), h1 = v128.load8x8_u(qh + 8);
  const q0 = i16x8.sub(v128.or(hs >= 4 ? i16x8.shr_u(a0, 4) : v128.and(a0, m4), i16x8.shl(v128.and(i16x8.shr_u(h0, hs), m3), 4)), e32);
  const q1 = i16x8.sub(v128.or(hs >= 4 ? i16x8.shr_u(a1, 4) : v128.and(a1, m4), i16x8.shl(v128.and(i16x8.shr_u(h1, hs), m3), 4)), e32);
  return i32x4.add(i32x4.dot_i16x8_s(q0, v128.load(xp)), i32x4.dot_i16x8_s(q1, v128.load(xp, 16)));
}

/** Σ of the four i32 lanes. */
// @ts-ignore: decorator
@inline function isum(v: v128): i32 {
  return (i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1)) + (i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3));
}

/** Dot of four i16x8 weight vectors with the 32 i16 activations at xp, as i32x4 partial sums. */
// @ts-ignore: decorator
@inline function dot32(a: v128, b: v128, c: v128, d: v128, xp: usize): v128 {
  const s0 = i32x4.add(i32x4.dot_i16x8_s(a, v128.load(xp)), i32x4.dot_i16x8_s(b, v128.load(xp, 16)));
  const s1 = i32x4.add(i32x4.dot_i16x8_s(c, v128.load(xp, 32)), i32x4.dot_i16x8_s(d, v128.load(xp, 48)));
  return i32x4.add(s0, s1);
}

/** 8 lanes of 0x10 where bits 0..7 of `bits` are set (the fifth bit of Q5 quants, i16 lanes). */
// @ts-ignore: decorator
@inline function bit5x8(bits: u32, sel: v128, b5: v128): v128 {
  return v128.and(i16x8.eq(v128.and(i16x8.splat(<i16>bits), sel), sel), b5);
}

/**
 * Σ w[i]·x[i] for one weight row of n values (n a multiple of the block size) against quantized
 * activations (xq, xd from quantizeBlocks, or quantizeBlocksI8 where compactInt8(type)); `xs` = exact Σx per 32-block (types with a min term).
 * `fence`: 4 writable bytes private to the caller (the output slot). Partial sums are stored
 * there between blocks: TurboFan keeps loads in order with stores, so this stops it from hoisting
 * every load of a 4-block step to the top of the loop (16+ live vectors → spills), which made
 * the kernel ~1.5× slower.
 */
export function dotRowQ(type: i32, w: usize, xq: usize, xd: usize, xs: usize, n: i32, fence: usize): f32 {
  if (type == Q8_0) return dotQ8_0(w, xq, xd, n, fence);
  if (type == Q4_0) return ASC_FEATURE_RELAXED_SIMD ? dotQ4_0r(w, xq, xd, n, fence) : dotQ4_0(w, xq, xd, n, fence);
  if (type == Q4_1) return dotQ4_1(w, xq, xd, xs, n);
  if (type == Q5_0 || type == Q5_1) return dotQ5(type, w, xq, xd, xs, n, fence);
  if (type == Q4_K || type == Q5_K) return dotQ4K(type == Q5_K, w, xq, xd, xs, n, fence);
  if (type == Q6_K) return dotQ6K(w, xq, xd, n, fence);
  unreachable();
  return 0;
}

// @ts-ignore: decorator
@inline function scaleK(q: usize, j: i32): i32 {
  return j < 4 ? <i32>load<u8>(q + j) & 63 : (<i32>load<u8>(q + j + 4) & 0xf) | ((<i32>load<u8>(q + j - 4) >> 6) << 4);
}
// @ts-ignore: decorator
@inline function minK(q: usize, j: i32): i32 {
  return j < 4 ? <i32>load<u8>(q + j + 4) & 63 : (<i32>load<u8>(q + j + 4) >> 4) | ((<i32>load<u8>(q + j) >> 6) << 4);
}

/** dotRowQ for Q8_0: four blocks per step, scales converted and applied as vectors. */
export function dotQ8_0(w: usize, xq: usize, xd: usize, n: i32, fence: usize): f32 {
  const nb = n >> 5;
  const mask = v128.load(QC, 96), k = v128.load(QC, 112);
  let acc = f32x4.splat(0);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    const p = w + <usize>b * 34, xp = xq + (<usize>b << 6), dp = xd + (<usize>b << 3);
    const s0 = dot32(v128.load8x8_s(p, 2), v128.load8x8_s(p, 10), v128.load8x8_s(p, 18), v128.load8x8_s(p, 26), xp);
    v128.store32_lane(fence, s0, 0);
    const s1 = dot32(v128.load8x8_s(p, 36), v128.load8x8_s(p, 44), v128.load8x8_s(p, 52), v128.load8x8_s(p, 60), xp + 64);
    v128.store32_lane(fence, s1, 0);
    const s2 = dot32(v128.load8x8_s(p, 70), v128.load8x8_s(p, 78), v128.load8x8_s(p, 86), v128.load8x8_s(p, 94), xp + 128);
    v128.store32_lane(fence, s2, 0);
    const s3 = dot32(v128.load8x8_s(p, 104), v128.load8x8_s(p, 112), v128.load8x8_s(p, 120), v128.load8x8_s(p, 128), xp + 192);
    v128.store32_lane(fence, s3, 0);
    const dx = actScales4(dp);
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(reduce4(s0, s1, s2, s3)), f32x4.mul(half4At(p, 34, mask, k), dx)));
  }
  let t: f32 = 0;
  for (; b < nb; b++) {
    const p = w + <usize>b * 34, xp = xq + (<usize>b << 6);
    const s = dot32(v128.load8x8_s(p, 2), v128.load8x8_s(p, 10), v128.load8x8_s(p, 18), v128.load8x8_s(p, 26), xp);
    t += <f32>isum(s) * (half(load<u16>(p)) * load<f32>(xd + (<usize>b << 3)));
  }
  return hsum4(acc) + t;
}

/**
 * dotRowQ for Q4_0: byte j holds element j (low nibble) and element j+16 (high nibble); the −8
 * offset goes through the block sums: d_w·d_x·Σ(q−8)·x_q = d_w·(d_x·Σq·x_q − 8·d_x·Σx_q).
 * Four blocks per step, scales converted and applied as vectors.
 */
export function dotQ4_0(w: usize, xq: usize, xd: usize, n: i32, fence: usize): f32 {
  const nb = n >> 5;
  const m4 = v128.load(QC), mask = v128.load(QC, 96), k = v128.load(QC, 112);
  let acc = f32x4.splat(0), mins = f32x4.splat(0);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    const p = w + <usize>b * 18, xp = xq + (<usize>b << 6), dp = xd + (<usize>b << 3);
    let l = v128.load8x8_u(p, 2), h = v128.load8x8_u(p, 10);
    const s0 = dot32(v128.and(l, m4), v128.and(h, m4), i16x8.shr_u(l, 4), i16x8.shr_u(h, 4), xp);
    v128.store32_lane(fence, s0, 0);
    l = v128.load8x8_u(p, 20); h = v128.load8x8_u(p, 28);
    const s1 = dot32(v128.and(l, m4), v128.and(h, m4), i16x8.shr_u(l, 4), i16x8.shr_u(h, 4), xp + 64);
    v128.store32_lane(fence, s1, 0);
    l = v128.load8x8_u(p, 38); h = v128.load8x8_u(p, 46);
    const s2 = dot32(v128.and(l, m4), v128.and(h, m4), i16x8.shr_u(l, 4), i16x8.shr_u(h, 4), xp + 128);
    v128.store32_lane(fence, s2, 0);
    l = v128.load8x8_u(p, 56); h = v128.load8x8_u(p, 64);
    const s3 = dot32(v128.and(l, m4), v128.and(h, m4), i16x8.shr_u(l, 4), i16x8.shr_u(h, 4), xp + 192);
    v128.store32_lane(fence, s3, 0);
    const d0 = v128.load(dp), d1 = v128.load(dp, 16);
    const dw = half4At(p, 18, mask, k);
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(reduce4(s0, s1, s2, s3)), f32x4.mul(dw, v128.shuffle<f32>(d0, d1, 0, 2, 4, 6))));
    mins = f32x4.add(mins, f32x4.mul(dw, v128.shuffle<f32>(d0, d1, 1, 3, 5, 7)));
  }
  let t: f32 = 0;
  for (; b < nb; b++) {
    const p = w + <usize>b * 18, xp = xq + (<usize>b << 6), dp = xd + (<usize>b << 3);
    const l = v128.load8x8_u(p, 2), h = v128.load8x8_u(p, 10);
    const s = dot32(v128.and(l, m4), v128.and(h, m4), i16x8.shr_u(l, 4), i16x8.shr_u(h, 4), xp);
    const dw = half(load<u16>(p));
    t += dw * (<f32>isum(s) * load<f32>(dp) - 8 * load<f32>(dp, 4));
  }
  return hsum4(acc) - 8 * hsum4(mins) + t;
}

/**
 * dotRowQ for Q4_1 (i16 activations in both builds: the relaxed 8-bit form measured no faster):
 * Q4_0's nibble layout plus a min term m·Σx (exact block sums xs); two blocks per step with
 * per-lane f32 accumulation.
 */
function dotQ4_1(w: usize, xq: usize, xd: usize, xs: usize, n: i32): f32 {
  const nb = n >> 5;
  let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0);
  let mins: f32 = 0;
  const bs: usize = 20, qo: usize = 4;
  const m4 = v128.load(QC);
  let b = 0;
  for (; b + 2 <= nb; b += 2) {
    const p = w + <usize>b * bs, xp = xq + (<usize>b << 6), dp = xd + (<usize>b << 3);
    const a0 = v128.load8x8_u(p + qo), a1 = v128.load8x8_u(p + qo + 8);
    const c0 = v128.load8x8_u(p + bs + qo), c1 = v128.load8x8_u(p + bs + qo + 8);
    const s0 = dot32(v128.and(a0, m4), v128.and(a1, m4), i16x8.shr_u(a0, 4), i16x8.shr_u(a1, 4), xp);
    const s1 = dot32(v128.and(c0, m4), v128.and(c1, m4), i16x8.shr_u(c0, 4), i16x8.shr_u(c1, 4), xp + 64);
    const d0 = half(load<u16>(p)), d1 = half(load<u16>(p + bs));
    acc0 = f32x4.add(acc0, f32x4.mul(f32x4.convert_i32x4_s(s0), f32x4.splat(d0 * load<f32>(dp))));
    acc1 = f32x4.add(acc1, f32x4.mul(f32x4.convert_i32x4_s(s1), f32x4.splat(d1 * load<f32>(dp, 8))));
    mins -= half(load<u16>(p, 2)) * load<f32>(xs + (<usize>b << 2)) + half(load<u16>(p + bs, 2)) * load<f32>(xs + (<usize>b << 2), 4);
  }
  if (b < nb) {
    const p = w + <usize>b * bs, xp = xq + (<usize>b << 6), dp = xd + (<usize>b << 3);
    const a0 = v128.load8x8_u(p + qo), a1 = v128.load8x8_u(p + qo + 8);
    const s0 = dot32(v128.and(a0, m4), v128.and(a1, m4), i16x8.shr_u(a0, 4), i16x8.shr_u(a1, 4), xp);
    const d0 = half(load<u16>(p));
    acc0 = f32x4.add(acc0, f32x4.mul(f32x4.convert_i32x4_s(s0), f32x4.splat(d0 * load<f32>(dp))));
    mins -= half(load<u16>(p, 2)) * load<f32>(xs + (<usize>b << 2));
  }
  const a = f32x4.add(acc0, acc1);
  return ((f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 1)) + (f32x4.extract_lane(a, 2) + f32x4.extract_lane(a, 3))) - mins;
}

/**
 * dotRowQ for Q5_0, Q5_1: Q4_0's nibble layout plus a fifth bit per element from the 32-bit qh,
 * and either a min term m·Σx (Q5_1, exact block sums xs) or Q5_0's −16
 * offset through the activation block sums. Four blocks per step: the exact integer block sums
 * are reduced into one vector and scales applied as vectors. The relaxed build reads i8
 * activations and uses relaxed 8-bit dots (quants 0..31 are the i7 operand); both builds take
 * the same float steps, so they agree bit for bit.
 */
function dotQ5(type: i32, w: usize, xq: usize, xd: usize, xs: usize, n: i32, fence: usize): f32 {
  const nb = n >> 5;
  const min = type != Q5_0;
  const bs: usize = type == Q5_0 ? 22 : 24;
  const mask = v128.load(QC, 96), k = v128.load(QC, 112);
  let acc = f32x4.splat(0), macc = f32x4.splat(0);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    const p = w + <usize>b * bs, dp = xd + (<usize>b << 3);
    const s0 = blockQ451(type, p, xq, b), s1 = blockQ451(type, p + bs, xq, b + 1);
    v128.store32_lane(fence, s1, 0); // see dotRowQ
    const s2 = blockQ451(type, p + 2 * bs, xq, b + 2), s3 = blockQ451(type, p + 3 * bs, xq, b + 3);
    v128.store32_lane(fence, s3, 0);
    const d0 = v128.load(dp), d1 = v128.load(dp, 16);
    const dw = half4At(p, bs, mask, k);
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(reduce4(s0, s1, s2, s3)), f32x4.mul(dw, v128.shuffle<f32>(d0, d1, 0, 2, 4, 6))));
    if (min) macc = f32x4.add(macc, f32x4.mul(half4At(p + 2, bs, mask, k), v128.load(xs + (<usize>b << 2))));
    else macc = f32x4.add(macc, f32x4.mul(dw, v128.shuffle<f32>(d0, d1, 1, 3, 5, 7)));
  }
  let t: f32 = 0;
  for (; b < nb; b++) {
    const p = w + <usize>b * bs, dp = xd + (<usize>b << 3);
    const dw = half(load<u16>(p));
    t += <f32>isum(blockQ451(type, p, xq, b)) * (dw * load<f32>(dp));
    t += min ? half(load<u16>(p, 2)) * load<f32>(xs + (<usize>b << 2)) : -16 * (dw * load<f32>(dp, 4));
  }
  const m = hsum4(macc);
  return hsum4(acc) + (min ? m : -16 * m) + t;
}

/** Integer dot of one Q5_0/Q5_1 block at p with activation block `blk`, as i32x4 partial sums. */
// @ts-ignore: decorator
@inline function blockQ451(type: i32, p: usize, xq: usize, blk: i32): v128 {
  const qo: usize = type == Q5_0 ? 6 : 8, ho: usize = type == Q5_0 ? 2 : 4;
  if (ASC_FEATURE_RELAXED_SIMD) {
    const m4 = v128.load(QC, 128);
    const v = v128.load(p + qo);
    const qh = load<u32>(p + ho);
    const lo = v128.or(v128.and(v, m4), bit5(qh & 0xffff)), hi = v128.or(v128.and(i16x8.shr_u(v, 4), m4), bit5(qh >> 16));
    return dotr(lo, hi, xq + (<usize>blk << 5));
  }
  const m4 = v128.load(QC);
  const a0 = v128.load8x8_u(p + qo), a1 = v128.load8x8_u(p + qo + 8);
  const b5 = v128.load(QC, 64), sel = v128.load(QC, 80);
  const qh = load<u32>(p + ho);
  const l0 = v128.or(v128.and(a0, m4), bit5x8(qh, sel, b5)), l1 = v128.or(v128.and(a1, m4), bit5x8(qh >> 8, sel, b5));
  const u0 = v128.or(i16x8.shr_u(a0, 4), bit5x8(qh >> 16, sel, b5)), u1 = v128.or(i16x8.shr_u(a1, 4), bit5x8(qh >> 24, sel, b5));
  return dot32(l0, l1, u0, u1, xq + (<usize>blk << 6));
}

// @ts-ignore: decorator
@inline function hsum4(a: v128): f32 {
  return (f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 1)) + (f32x4.extract_lane(a, 2) + f32x4.extract_lane(a, 3));
}

/**
 * One Q4_0 block's quants (16 bytes at q) against 32 i8 activations at xp as i32x4 partial sums,
 * with relaxed 8-bit dot products (relaxed-SIMD build only). The sums are exact integers, equal
 * to dot32's over the widened values.
 */
// @ts-ignore: decorator
@inline function blockQ4r(q: usize, xp: usize, m4: v128): v128 {
  const v = v128.load(q);
  const lo = v128.and(v, m4), hi = v128.and(i16x8.shr_u(v, 4), m4);
  return dotr(lo, hi, xp);
}

/**
 * Σ over 32 i8 activations at xp times the unsigned 4-bit quants lo (elements 0..15) and hi
 * (16..31), as i32x4 partial sums. i16x8.relaxed_dot_i8x16_i7x16_s (x86 pmaddubsw) sums adjacent
 * products into i16 (|sum| ≤ 2·15·127, no saturation; the two halves ≤ 7620), then pairs widen to
 * i32. The _add_s form is avoided: Node 20's V8 (11.3) miscompiles it on x64 (it returned twice
 * the dot product and dropped the accumulator in our probe).
 */
// @ts-ignore: decorator
@inline function dotr(lo: v128, hi: v128, xp: usize): v128 {
  return i32x4.extadd_pairwise_i16x8_s(dotr16(lo, hi, xp));
}

/** dotr before widening: eight i16 partial sums (for 4-bit quants each |·| ≤ 7620, see reduce4i16). */
// @ts-ignore: decorator
@inline function dotr16(lo: v128, hi: v128, xp: usize): v128 {
  return i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp), lo), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(xp, 16), hi));
}

/**
 * dotQ4_0 over i8 activations (quantizeBlocksI8) with relaxed dot products; the same float
 * steps in the same order, so the result equals dotQ4_0's bit for bit.
 */
export function dotQ4_0r(w: usize, xq: usize, xd: usize, n: i32, fence: usize): f32 {
  const nb = n >> 5;
  const m4 = v128.load(QC, 128), mask = v128.load(QC, 96), k = v128.load(QC, 112);
  let acc = f32x4.splat(0), mins = f32x4.splat(0);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    const p = w + <usize>b * 18, xp = xq + (<usize>b << 5), dp = xd + (<usize>b << 3);
    const s0 = blockQ4r(p + 2, xp, m4);
    v128.store32_lane(fence, s0, 0);
    const s1 = blockQ4r(p + 20, xp + 32, m4);
    v128.store32_lane(fence, s1, 0);
    const s2 = blockQ4r(p + 38, xp + 64, m4);
    v128.store32_lane(fence, s2, 0);
    const s3 = blockQ4r(p + 56, xp + 96, m4);
    v128.store32_lane(fence, s3, 0);
    const d0 = v128.load(dp), d1 = v128.load(dp, 16);
    const dw = half4At(p, 18, mask, k);
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(reduce4(s0, s1, s2, s3)), f32x4.mul(dw, v128.shuffle<f32>(d0, d1, 0, 2, 4, 6))));
    mins = f32x4.add(mins, f32x4.mul(dw, v128.shuffle<f32>(d0, d1, 1, 3, 5, 7)));
  }
  let t: f32 = 0;
  for (; b < nb; b++) {
    const p = w + <usize>b * 18, dp = xd + (<usize>b << 3);
    const s = blockQ4r(p + 2, xq + (<usize>b << 5), m4);
    const dw = half(load<u16>(p));
    t += dw * (<f32>isum(s) * load<f32>(dp) - 8 * load<f32>(dp, 4));
  }
  return hsum4(acc) - 8 * hsum4(mins) + t;
}

/**
 * Prefill, relaxed build: one Q6_K row against two tokens' i8 activations (token 1 at xq + qb,
 * xd + dd). Each 16-quant group is assembled once for both tokens; each token's steps are exactly
 * dotQ6K's, so the results are the same bits. Stores at out and out + os.
 */
export function rowQ6Kx2r(w: usize, xq: usize, xd: usize, qb: usize, dd: usize, n: i32, out: usize, os: usize): void {
  const m4 = v128.load(QC, 128), m3 = v128.load(QC, 160), e32 = v128.load(QC, 176), ones = v128.load(QC, 16);
  let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0);
  let q: v128;
  let a0: v128, a1: v128, a2: v128, a3: v128, a4: v128, a5: v128, a6: v128, a7: v128;
  let b0: v128, b1: v128, b2: v128, b3: v128, b4: v128, b5: v128, b6: v128, b7: v128;
  for (let sb = 0; sb < (n >> 8); sb++) {
    const p = w + <usize>sb * 210;
    let t0 = f32x4.splat(0), t1 = f32x4.splat(0);
    for (let h = 0; h < 2; h++) {
      const ql = p + (<usize>h << 6), qh = p + 128 + (<usize>h << 5), sc = p + 192 + (<usize>h << 3);
      const xb = (sb << 3) + (h << 2);
      const x0 = xq + (<usize>xb << 5), x1 = x0 + qb;
      q = q6Quant(ql, qh, 0, m4, m3);
      a0 = q6DotR(q, x0 + 0, e32); b0 = q6DotR(q, x1 + 0, e32);
      v128.store32_lane(out, a0, 0); v128.store32_lane(out, b0, 0);
      q = q6Quant(ql + 16, qh + 16, 0, m4, m3);
      a1 = q6DotR(q, x0 + 16, e32); b1 = q6DotR(q, x1 + 16, e32);
      v128.store32_lane(out, a1, 0); v128.store32_lane(out, b1, 0);
      q = q6Quant(ql + 32, qh, 2, m4, m3);
      a2 = q6DotR(q, x0 + 32, e32); b2 = q6DotR(q, x1 + 32, e32);
      v128.store32_lane(out, a2, 0); v128.store32_lane(out, b2, 0);
      q = q6Quant(ql + 48, qh + 16, 2, m4, m3);
      a3 = q6DotR(q, x0 + 48, e32); b3 = q6DotR(q, x1 + 48, e32);
      const gLo0 = reduce4i16(a0, a1, a2, a3, ones), gLo1 = reduce4i16(b0, b1, b2, b3, ones);
      v128.store32_lane(out, gLo0, 0); v128.store32_lane(out, gLo1, 0);
      q = q6Quant(ql, qh, 4, m4, m3);
      a4 = q6DotR(q, x0 + 64, e32); b4 = q6DotR(q, x1 + 64, e32);
      v128.store32_lane(out, a4, 0); v128.store32_lane(out, b4, 0);
      q = q6Quant(ql + 16, qh + 16, 4, m4, m3);
      a5 = q6DotR(q, x0 + 80, e32); b5 = q6DotR(q, x1 + 80, e32);
      v128.store32_lane(out, a5, 0); v128.store32_lane(out, b5, 0);
      q = q6Quant(ql + 32, qh, 6, m4, m3);
      a6 = q6DotR(q, x0 + 96, e32); b6 = q6DotR(q, x1 + 96, e32);
      v128.store32_lane(out, a6, 0); v128.store32_lane(out, b6, 0);
      q = q6Quant(ql + 48, qh + 16, 6, m4, m3);
      a7 = q6DotR(q, x0 + 112, e32); b7 = q6DotR(q, x1 + 112, e32);
      const gHi0 = reduce4i16(a4, a5, a6, a7, ones), gHi1 = reduce4i16(b4, b5, b6, b7, ones);
      const s16 = i16x8.extend_low_i8x16_s(v128.load64_zero(sc));
      const sLo = i32x4.extend_low_i16x8_s(s16), sHi = i32x4.extend_high_i16x8_s(s16);
      let dp = xd + (<usize>xb << 3);
      let l = i32x4.mul(gLo0, sLo), u = i32x4.mul(gHi0, sHi);
      let qq = pairSums(l, u);
      t0 = f32x4.add(t0, f32x4.mul(f32x4.convert_i32x4_s(qq), actScales4(dp)));
      dp += dd;
      l = i32x4.mul(gLo1, sLo); u = i32x4.mul(gHi1, sHi);
      qq = pairSums(l, u);
      t1 = f32x4.add(t1, f32x4.mul(f32x4.convert_i32x4_s(qq), actScales4(dp)));
    }
    const d = f32x4.splat(halfK(load<u16>(p, 208)));
    acc0 = f32x4.add(acc0, f32x4.mul(t0, d));
    acc1 = f32x4.add(acc1, f32x4.mul(t1, d));
  }
  store<f32>(out, hsum4(acc0));
  store<f32>(out + os, hsum4(acc1));
}

/**
 * Prefill, relaxed build: one Q4_K row against two tokens' i8 activations (token 1 at xq + qb,
 * xd + dd, xs + db). The quant nibbles are unpacked and the scales/mins decoded once for both
 * tokens; each token's steps are exactly dotQ4K's, so the results are the same bits. Stores the two
 * dot products at out and out + os.
 */
export function rowQ4Kx2r(w: usize, xq: usize, xd: usize, xs: usize, qb: usize, dd: usize, db: usize, n: i32, out: usize, os: usize): void {
  rowKx2r<u8>(w, xq, xd, xs, qb, dd, db, n, out, os);
}

/** rowQ4Kx2r for Q5_K (the fifth quant bits from qh at p + 16, bit 2j / 2j + 1 for sub-blocks 2j / 2j + 1). */
export function rowQ5Kx2r(w: usize, xq: usize, xd: usize, xs: usize, qb: usize, dd: usize, db: usize, n: i32, out: usize, os: usize): void {
  rowKx2r<u16>(w, xq, xd, xs, qb, dd, db, n, out, os);
}

/**
 * The two-token Q4_K (T = u8) / Q5_K (T = u16) kernel. Stores between sub-block pairs keep TurboFan
 * from loading everything up front. Q5_K's 5-bit quants leave no room for the i16 reduction, so its
 * sub-block sums are widened first (kSums), as dotQ4K does.
 */
// @ts-ignore: decorator
@inline function rowKx2r<T>(w: usize, xq: usize, xd: usize, xs: usize, qb: usize, dd: usize, db: usize, n: i32, out: usize, os: usize): void {
  const five = sizeof<T>() == 2;
  const bs: usize = five ? 176 : 144, qo: usize = five ? 48 : 16;
  const m4 = v128.load(QC, 128), one = v128.load(QC, 144), ones = v128.load(QC, 16);
  const c63 = v128.load(K6), c15 = v128.load(K6, 16), z = i32x4.splat(0);
  let acc0 = f32x4.splat(0), macc0 = f32x4.splat(0), acc1 = f32x4.splat(0), macc1 = f32x4.splat(0);
  let v0: v128, v1: v128, lo0: v128, lo1: v128, hi0: v128, hi1: v128;
  let a0: v128, a1: v128, a2: v128, a3: v128, a4: v128, a5: v128, a6: v128, a7: v128;
  let b0: v128, b1: v128, b2: v128, b3: v128, b4: v128, b5: v128, b6: v128, b7: v128;
  for (let sb = 0; sb < (n >> 8); sb++) {
    const p = w + <usize>sb * bs, q = p + qo;
    const xb = sb << 3;
    const x0 = xq + (<usize>xb << 5), x1 = x0 + qb;
    const h0 = five ? v128.load(p, 16) : z, h1 = five ? v128.load(p, 32) : z;
    v0 = v128.load(q, 0); v1 = v128.load(q, 16);
    lo0 = v128.and(v0, m4); lo1 = v128.and(v1, m4); hi0 = v128.and(i16x8.shr_u(v0, 4), m4); hi1 = v128.and(i16x8.shr_u(v1, 4), m4);
    if (five) {
      lo0 = v128.or(lo0, fifth(h0, 0, one)); lo1 = v128.or(lo1, fifth(h1, 0, one));
      hi0 = v128.or(hi0, fifth(h0, 1, one)); hi1 = v128.or(hi1, fifth(h1, 1, one));
    }
    a0 = dotr16(lo0, lo1, x0 + 0); b0 = dotr16(lo0, lo1, x1 + 0);
    a1 = dotr16(hi0, hi1, x0 + 32); b1 = dotr16(hi0, hi1, x1 + 32);
    v128.store32_lane(out, a1, 0); v128.store32_lane(out, b1, 0);
    v0 = v128.load(q, 32); v1 = v128.load(q, 48);
    lo0 = v128.and(v0, m4); lo1 = v128.and(v1, m4); hi0 = v128.and(i16x8.shr_u(v0, 4), m4); hi1 = v128.and(i16x8.shr_u(v1, 4), m4);
    if (five) {
      lo0 = v128.or(lo0, fifth(h0, 2, one)); lo1 = v128.or(lo1, fifth(h1, 2, one));
      hi0 = v128.or(hi0, fifth(h0, 3, one)); hi1 = v128.or(hi1, fifth(h1, 3, one));
    }
    a2 = dotr16(lo0, lo1, x0 + 64); b2 = dotr16(lo0, lo1, x1 + 64);
    a3 = dotr16(hi0, hi1, x0 + 96); b3 = dotr16(hi0, hi1, x1 + 96);
    v128.store32_lane(out, a3, 0); v128.store32_lane(out, b3, 0);
    const sLo0 = kSums(five, a0, a1, a2, a3, ones), sLo1 = kSums(five, b0, b1, b2, b3, ones);
    v128.store32_lane(out, sLo0, 0); v128.store32_lane(out, sLo1, 0);
    v0 = v128.load(q, 64); v1 = v128.load(q, 80);
    lo0 = v128.and(v0, m4); lo1 = v128.and(v1, m4); hi0 = v128.and(i16x8.shr_u(v0, 4), m4); hi1 = v128.and(i16x8.shr_u(v1, 4), m4);
    if (five) {
      lo0 = v128.or(lo0, fifth(h0, 4, one)); lo1 = v128.or(lo1, fifth(h1, 4, one));
      hi0 = v128.or(hi0, fifth(h0, 5, one)); hi1 = v128.or(hi1, fifth(h1, 5, one));
    }
    a4 = dotr16(lo0, lo1, x0 + 128); b4 = dotr16(lo0, lo1, x1 + 128);
    a5 = dotr16(hi0, hi1, x0 + 160); b5 = dotr16(hi0, hi1, x1 + 160);
    v128.store32_lane(out, a5, 0); v128.store32_lane(out, b5, 0);
    v0 = v128.load(q, 96); v1 = v128.load(q, 112);
    lo0 = v128.and(v0, m4); lo1 = v128.and(v1, m4); hi0 = v128.and(i16x8.shr_u(v0, 4), m4); hi1 = v128.and(i16x8.shr_u(v1, 4), m4);
    if (five) {
      lo0 = v128.or(lo0, fifth(h0, 6, one)); lo1 = v128.or(lo1, fifth(h1, 6, one));
      hi0 = v128.or(hi0, fifth(h0, 7, one)); hi1 = v128.or(hi1, fifth(h1, 7, one));
    }
    a6 = dotr16(lo0, lo1, x0 + 192); b6 = dotr16(lo0, lo1, x1 + 192);
    a7 = dotr16(hi0, hi1, x0 + 224); b7 = dotr16(hi0, hi1, x1 + 224);
    v128.store32_lane(out, a7, 0); v128.store32_lane(out, b7, 0);
    const sHi0 = kSums(five, a4, a5, a6, a7, ones), sHi1 = kSums(five, b4, b5, b6, b7, ones);
    const v = v128.load(p, 4);
    const A = v128.shuffle<u8>(v, z, 0, 16, 16, 16, 1, 16, 16, 16, 2, 16, 16, 16, 3, 16, 16, 16);
    const B = v128.shuffle<u8>(v, z, 4, 16, 16, 16, 5, 16, 16, 16, 6, 16, 16, 16, 7, 16, 16, 16);
    const C = v128.shuffle<u8>(v, z, 8, 16, 16, 16, 9, 16, 16, 16, 10, 16, 16, 16, 11, 16, 16, 16);
    const scLo = v128.and(A, c63), scHi = v128.or(v128.and(C, c15), i32x4.shl(i32x4.shr_u(A, 6), 4));
    const fmLo = f32x4.convert_i32x4_s(v128.and(B, c63)), fmHi = f32x4.convert_i32x4_s(v128.or(i32x4.shr_u(C, 4), i32x4.shl(i32x4.shr_u(B, 6), 4)));
    const dm = half2K(p), d = v128.shuffle<f32>(dm, dm, 0, 0, 0, 0), dmin = v128.shuffle<f32>(dm, dm, 1, 1, 1, 1);
    // token 0
    let dp = xd + (<usize>xb << 3), sp = xs + (<usize>xb << 2);
    let t = f32x4.add(f32x4.mul(f32x4.convert_i32x4_s(i32x4.mul(sLo0, scLo)), actScales4(dp)),
      f32x4.mul(f32x4.convert_i32x4_s(i32x4.mul(sHi0, scHi)), actScales4(dp + 32)));
    acc0 = f32x4.add(acc0, f32x4.mul(t, d));
    macc0 = f32x4.add(macc0, f32x4.mul(f32x4.add(f32x4.mul(fmLo, v128.load(sp)), f32x4.mul(fmHi, v128.load(sp, 16))), dmin));
    // token 1
    dp += dd; sp += db;
    t = f32x4.add(f32x4.mul(f32x4.convert_i32x4_s(i32x4.mul(sLo1, scLo)), actScales4(dp)),
      f32x4.mul(f32x4.convert_i32x4_s(i32x4.mul(sHi1, scHi)), actScales4(dp + 32)));
    acc1 = f32x4.add(acc1, f32x4.mul(t, d));
    macc1 = f32x4.add(macc1, f32x4.mul(f32x4.add(f32x4.mul(fmLo, v128.load(sp)), f32x4.mul(fmHi, v128.load(sp, 16))), dmin));
  }
  store<f32>(out, hsum4(acc0) - hsum4(macc0));
  store<f32>(out + os, hsum4(acc1) - hsum4(macc1));
}

/**
 * Q5_K's fifth bits for one sub-block: bit `bit` of each qh byte moved to 0x10 (byte lanes, `one`
 * bytes of 1; or i16 lanes of widened qh bytes, `one` i16 lanes of 1).
 */
// @ts-ignore: decorator
@inline function fifth(h: v128, bit: i32, one: v128): v128 {
  return i16x8.shl(v128.and(i16x8.shr_u(h, bit), one), 4);
}

/** Four sub-block sums as i32x4: reduce4i16 for 4-bit quants, widened first for 5-bit ones. */
// @ts-ignore: decorator
@inline function kSums(five: bool, d0: v128, d1: v128, d2: v128, d3: v128, ones: v128): v128 {
  if (five) return reduce4(i32x4.extadd_pairwise_i16x8_s(d0), i32x4.extadd_pairwise_i16x8_s(d1), i32x4.extadd_pairwise_i16x8_s(d2), i32x4.extadd_pairwise_i16x8_s(d3));
  return reduce4i16(d0, d1, d2, d3, ones);
}
