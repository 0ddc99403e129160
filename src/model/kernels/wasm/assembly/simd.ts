// Shared SIMD helpers (AssemblyScript, compiled to WebAssembly SIMD128 by scripts/build-wasm.mjs).
// No managed allocations anywhere: every kernel works on raw pointers into the one shared memory.

/** 2^112: scales an f16 whose exponent/mantissa were shifted into f32 position (see half4). */
export const TWO112: f32 = reinterpret<f32>(0x77800000);

/** One IEEE half → f32. Exact for normals, subnormals and zeros; ±Inf/NaN map to large finite values. */
// @ts-ignore: decorator
@inline export function half(h: u32): f32 {
  const mag = reinterpret<f32>((h & 0x7fff) << 13) * TWO112;
  return reinterpret<f32>(reinterpret<u32>(mag) | ((h & 0x8000) << 16));
}

/**
 * `half` without forming an f32 subnormal: an f16 subnormal is converted as m·2^−24 instead of
 * (its bits shifted into an f32 subnormal)·2^112. For the K-quants' super-block scales, which are
 * often f16 subnormals (Q6_K's d = max scale/128): a multiply with a subnormal operand made whole
 * Q6_K matrices 2.5–3× slower on this x64 machine. The branch costs little (a matrix's scales
 * are mostly of one kind); the per-block kernels keep `half` (their Q4_0/Q8_0/Q5 scales are
 * normal in practice, and the check would cost them a few percent).
 */
// @ts-ignore: decorator
@inline export function halfK(h: u32): f32 {
  if ((h & 0x7c00) != 0) return half(h);
  return reinterpret<f32>(reinterpret<u32>(<f32>(h & 0x3ff) * 5.9604644775390625e-8) | ((h & 0x8000) << 16));
}

/** half2K's constants (i32 lanes): 0x7fff, 0x8000, 112 << 23, 2^−24 (f32), 0x400. In memory: see half2K. */
const KH = memory.data<u32>([
  0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x8000, 0x8000, 0x8000, 0x8000,
  112 << 23, 112 << 23, 112 << 23, 112 << 23, 0x33800000, 0x33800000, 0x33800000, 0x33800000,
  0x400, 0x400, 0x400, 0x400,
], 16);

/**
 * The two f16 at p and p + 2 (a K-quant super-block's d and dmin) as lanes 0 and 1 of an f32x4,
 * converted like `halfK` (no f32 subnormal formed) without branches or scalar moves. The
 * constants are loaded from memory: as splats inside a loop V8 rebuilds each one with three
 * instructions per iteration.
 */
// @ts-ignore: decorator
@inline export function half2K(p: usize): v128 {
  return halfK4(i32x4.extend_low_i16x8_u(v128.load32_zero(p)));
}

/** Four halves (zero-extended in i32 lanes) → f32x4, converted like `halfK` (no f32 subnormal formed). */
// @ts-ignore: decorator
@inline export function halfK4(h: v128): v128 {
  const m = v128.and(h, v128.load(KH));
  const v = v128.bitselect(f32x4.mul(f32x4.convert_i32x4_s(m), v128.load(KH, 48)),
    i32x4.add(i32x4.shl(m, 13), v128.load(KH, 32)), i32x4.lt_s(m, v128.load(KH, 64)));
  return v128.or(v, i32x4.shl(v128.and(h, v128.load(KH, 16)), 16));
}

/** Four halves (zero-extended in i32 lanes) → f32x4, same exactness as `half`. */
// @ts-ignore: decorator
@inline export function half4(h: v128): v128 {
  const mag = f32x4.mul(i32x4.shl(v128.and(h, i32x4.splat(0x7fff)), 13), f32x4.splat(TWO112));
  return v128.or(mag, i32x4.shl(v128.and(h, i32x4.splat(0x8000)), 16));
}

/** Horizontal sum of an f32x4, fixed order ((0+1)+(2+3)). */
// @ts-ignore: decorator
@inline export function hsum(v: v128): f32 {
  return (f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1)) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}

/** Σ q[i]·x[i] for 16 signed bytes q and 16 f32 at x, as an f32x4 of partial sums. */
// @ts-ignore: decorator
@inline export function dot16(q: v128, x: usize): v128 {
  const l = i16x8.extend_low_i8x16_s(q);
  const h = i16x8.extend_high_i8x16_s(q);
  let s = f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(l)), v128.load(x));
  s = f32x4.add(s, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(l)), v128.load(x, 16)));
  s = f32x4.add(s, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(h)), v128.load(x, 32)));
  s = f32x4.add(s, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(h)), v128.load(x, 48)));
  return s;
}

/** Store 16 signed bytes q as f32 ·d at y (dequantization to a scratch row). */
// @ts-ignore: decorator
@inline export function store16(q: v128, d: v128, m: v128, y: usize): void {
  const l = i16x8.extend_low_i8x16_s(q);
  const h = i16x8.extend_high_i8x16_s(q);
  v128.store(y, f32x4.sub(f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(l)), d), m));
  v128.store(y, f32x4.sub(f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(l)), d), m), 16);
  v128.store(y, f32x4.sub(f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(h)), d), m), 32);
  v128.store(y, f32x4.sub(f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(h)), d), m), 48);
}

/** Sum of 32 f32 at x as an f32x4 of partial sums (for the "+ min" term of Q4_1/Q5_1/K-quants). */
// @ts-ignore: decorator
@inline export function sum32(x: usize): v128 {
  const a = f32x4.add(f32x4.add(v128.load(x), v128.load(x, 16)), f32x4.add(v128.load(x, 32), v128.load(x, 48)));
  const b = f32x4.add(f32x4.add(v128.load(x, 64), v128.load(x, 80)), f32x4.add(v128.load(x, 96), v128.load(x, 112)));
  return f32x4.add(a, b);
}

/**
 * 16 bytes holding 0x10 where bit i of `bits` (16 bits) is set: the fifth quant bit of Q5_0/Q5_1.
 */
// @ts-ignore: decorator
@inline export function bit5(bits: u32): v128 {
  const b = i8x16.swizzle(i16x8.splat(<i16>bits), v128(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
  const sel = v128(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  return v128.and(i8x16.eq(v128.and(b, sel), sel), i8x16.splat(0x10));
}

/**
 * a·b + c per f32 lane: one fused multiply-add (x86 FMA) in the relaxed-SIMD build, a multiply
 * then an add in the SIMD128 build (ASC_FEATURE_RELAXED_SIMD is a compile-time constant).
 */
// @ts-ignore: decorator
@inline export function madd(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, c);
  return f32x4.add(f32x4.mul(a, b), c);
}

/**
 * exp4's constants, one f32x4 (or i32x4) per 16 bytes, in memory: as splats inside a loop V8
 * rebuilds each with about three instructions per iteration when registers run short.
 */
const EXPC = memory.data<u32>([
  0x42b16666, 0x42b16666, 0x42b16666, 0x42b16666, // 88.7
  0x3fb8aa3b, 0x3fb8aa3b, 0x3fb8aa3b, 0x3fb8aa3b, // log2 e
  0x4b400000, 0x4b400000, 0x4b400000, 0x4b400000, // 1.5·2^23
  0x3f318000, 0x3f318000, 0x3f318000, 0x3f318000, // ln2 hi
  0xb95e8083, 0xb95e8083, 0xb95e8083, 0xb95e8083, // ln2 lo
  0x39506967, 0x39506967, 0x39506967, 0x39506967, // p0
  0x3ab743ce, 0x3ab743ce, 0x3ab743ce, 0x3ab743ce, // p1
  0x3c088908, 0x3c088908, 0x3c088908, 0x3c088908, // p2
  0x3d2aa9c1, 0x3d2aa9c1, 0x3d2aa9c1, 0x3d2aa9c1, // p3
  0x3e2aaaaa, 0x3e2aaaaa, 0x3e2aaaaa, 0x3e2aaaaa, // p4
  0x3f000000, 0x3f000000, 0x3f000000, 0x3f000000, // p5
  0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, // 1
  0xb4c0007f, 0xb4c0007f, 0xb4c0007f, 0xb4c0007f, // 127 − bits(1.5·2^23) (i32)
  0xc2ae999a, 0xc2ae999a, 0xc2ae999a, 0xc2ae999a, // −87.3
], 16);

/**
 * e^x per f32 lane (Cephes expf method): x = n·ln2 + r with n = round(x·log2 e) and |r| ≤ ln2/2
 * (ln2 split in two parts so n·ln2 is exact enough), e^r by a degree-6 polynomial, then 2^n put
 * into the exponent bits. About 1–2 ulp over the normal range; lanes below −87.3 (where e^x is
 * subnormal) return 0 and lanes above 88.7 are clamped to e^88.7. The polynomial's Horner steps
 * are madd: one FMA each in the relaxed build (its dependency chain bounds swiglu's loop: 127×2048
 * values 454 → 312 µs), a multiply and an add in SIMD128, so the two builds agree within rounding,
 * not bit for bit; within one build decode and prefill take the same steps.
 */
// @ts-ignore: decorator
@inline export function exp4(v: v128): v128 {
  const x = f32x4.pmin(v, v128.load(EXPC)); // pmin: one minps (min's NaN handling costs six more); a NaN v stays NaN
  // n = round-to-nearest-even(x·log2 e) by adding and removing 1.5·2^23 (|x·log2 e| ≤ 2^22 here;
  // lanes beyond are masked below); t's low mantissa bits then hold n + 2^22 as an integer
  const t = f32x4.add(f32x4.mul(x, v128.load(EXPC, 16)), v128.load(EXPC, 32));
  const n = f32x4.sub(t, v128.load(EXPC, 32));
  const r = f32x4.sub(f32x4.sub(x, f32x4.mul(n, v128.load(EXPC, 48))), f32x4.mul(n, v128.load(EXPC, 64)));
  let p = madd(v128.load(EXPC, 80), r, v128.load(EXPC, 96));
  p = madd(p, r, v128.load(EXPC, 112));
  p = madd(p, r, v128.load(EXPC, 128));
  p = madd(p, r, v128.load(EXPC, 144));
  p = madd(p, r, v128.load(EXPC, 160));
  p = f32x4.add(f32x4.add(f32x4.mul(p, f32x4.mul(r, r)), r), v128.load(EXPC, 176));
  // 2^n: (bits(t) − bits(1.5·2^23) + 127) << 23
  const e = f32x4.mul(p, i32x4.shl(i32x4.add(t, v128.load(EXPC, 192)), 23));
  return v128.andnot(e, f32x4.lt(v, v128.load(EXPC, 208)));
}

/**
 * [Σs0, Σs1, Σs2, Σs3]: the lane sums of four i32x4 in one vector (transpose-and-add), so the
 * conversion and scaling of four blocks is one vector op each.
 */
// @ts-ignore: decorator
@inline export function reduce4(s0: v128, s1: v128, s2: v128, s3: v128): v128 {
  const t0 = i32x4.add(v128.shuffle<i32>(s0, s1, 0, 2, 4, 6), v128.shuffle<i32>(s0, s1, 1, 3, 5, 7));
  const t1 = i32x4.add(v128.shuffle<i32>(s2, s3, 0, 2, 4, 6), v128.shuffle<i32>(s2, s3, 1, 3, 5, 7));
  return i32x4.add(v128.shuffle<i32>(t0, t1, 0, 2, 4, 6), v128.shuffle<i32>(t0, t1, 1, 3, 5, 7));
}

/**
 * The f16 scales of four blocks `stride` bytes apart from p, as f32x4 (sign-extend, shift the
 * exponent/mantissa into f32 position, mask, rescale by 2^112; exact as `half`).
 */
// @ts-ignore: decorator
@inline export function half4At(p: usize, stride: usize, mask: v128, k: v128): v128 {
  let h = v128.load16_lane(p, i32x4.splat(0), 0);
  h = v128.load16_lane(p + stride, h, 1);
  h = v128.load16_lane(p + 2 * stride, h, 2);
  h = v128.load16_lane(p + 3 * stride, h, 3);
  return widenHalf4(i32x4.extend_low_i16x8_s(h), mask, k);
}

/** half4At for four consecutive f16 at p (a transposed group's four scales, interleave.ts). */
// @ts-ignore: decorator
@inline export function half4Seq(p: usize, mask: v128, k: v128): v128 {
  return widenHalf4(v128.load16x4_s(p), mask, k);
}

/** Four f16 sign-extended in i32 lanes → f32x4 (half4At's steps; mask and k as there). */
// @ts-ignore: decorator
@inline function widenHalf4(h: v128, mask: v128, k: v128): v128 {
  return f32x4.mul(v128.and(i32x4.shl(h, 13), mask), k);
}

/**
 * [Σd0, Σd1, Σd2, Σd3] as i32x4 from four i16x8 of 4-bit × 8-bit partial sums (rows4.ts q4BlockR, q8.ts dotr16): two transpose-and-add
 * levels in i16 (each lane then sums four lanes, ≤ 4·7620 = 30480: no overflow), then one widening
 * multiply-add by ones. Exact, and three instructions fewer than widening each vector first.
 */
// @ts-ignore: decorator
@inline export function reduce4i16(d0: v128, d1: v128, d2: v128, d3: v128, ones: v128): v128 {
  const t01 = i16x8.add(v128.shuffle<i32>(d0, d1, 0, 2, 4, 6), v128.shuffle<i32>(d0, d1, 1, 3, 5, 7));
  const t23 = i16x8.add(v128.shuffle<i32>(d2, d3, 0, 2, 4, 6), v128.shuffle<i32>(d2, d3, 1, 3, 5, 7));
  return i32x4.dot_i16x8_s(i16x8.add(v128.shuffle<i32>(t01, t23, 0, 2, 4, 6), v128.shuffle<i32>(t01, t23, 1, 3, 5, 7)), ones);
}
