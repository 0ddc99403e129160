// Row kernels per GGML weight type: fused dequantize+dot (decode) and dequantize-to-f32 (prefill).
// Block layouts and dequantization formulas are those of ggml (ggml-common.h block_* structs,
// ggml-quants.c dequantize_row_*); see src/model/kernels/quant/dequantize.ts for the plain reference.
import { TWO112, bit5, dot16, half, half4, halfK, hsum, madd, store16, sum32 } from './simd';

export const F32: i32 = 0;
export const F16: i32 = 1;
export const Q4_0: i32 = 2;
export const Q4_1: i32 = 3;
export const Q5_0: i32 = 6;
export const Q5_1: i32 = 7;
export const Q8_0: i32 = 8;
export const Q2_K: i32 = 10;
export const Q3_K: i32 = 11;
export const Q4_K: i32 = 12;
export const Q5_K: i32 = 13;
export const Q6_K: i32 = 14;
export const BF16: i32 = 30;

/** Bytes of one row of n elements (n a multiple of the block size for block types); 0 if unsupported. */
export function rowBytes(type: i32, n: i32): usize {
  const u = <usize>n;
  switch (type) {
    case F32: return u * 4;
    case F16: case BF16: return u * 2;
    case Q4_0: return (u >> 5) * 18;
    case Q4_1: return (u >> 5) * 20;
    case Q5_0: return (u >> 5) * 22;
    case Q5_1: return (u >> 5) * 24;
    case Q8_0: return (u >> 5) * 34;
    case Q2_K: return (u >> 8) * 84;
    case Q3_K: return (u >> 8) * 110;
    case Q4_K: return (u >> 8) * 144;
    case Q5_K: return (u >> 8) * 176;
    case Q6_K: return (u >> 8) * 210;
  }
  return 0;
}

/**
 * Σ w[i]·x[i] over n f32 values. Each group of 16 products is summed in f32, groups accumulate in
 * f64 (two f64x2): long rows then round like a double-precision sum, as the reference kernels do.
 */
export function dotF32(w: usize, x: usize, n: i32): f32 {
  let lo = f64x2.splat(0), hi = f64x2.splat(0);
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    const o = <usize>i << 2;
    const a0 = f32x4.mul(v128.load(w + o), v128.load(x + o));
    const a1 = f32x4.mul(v128.load(w + o, 16), v128.load(x + o, 16));
    const a2 = f32x4.mul(v128.load(w + o, 32), v128.load(x + o, 32));
    const a3 = f32x4.mul(v128.load(w + o, 48), v128.load(x + o, 48));
    const g = f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3));
    lo = f64x2.add(lo, f64x2.promote_low_f32x4(g));
    hi = f64x2.add(hi, f64x2.promote_low_f32x4(v128.shuffle<u32>(g, g, 2, 3, 0, 1)));
  }
  const t = f64x2.add(lo, hi);
  let s: f64 = f64x2.extract_lane(t, 0) + f64x2.extract_lane(t, 1);
  for (; i < n; i++) s += <f64>load<f32>(w + (<usize>i << 2)) * <f64>load<f32>(x + (<usize>i << 2));
  return <f32>s;
}

/**
 * Loop constants read from memory: binaryen would otherwise re-materialize a v128.const at every
 * use inside the loop, which V8 turns into several instructions each time.
 */
const HALF_CONST = memory.data<u32>([0x8fffe000, 0x8fffe000, 0x8fffe000, 0x8fffe000, 0x77800000, 0x77800000, 0x77800000, 0x77800000], 16);

/**
 * Σ w[i]·x[i] for n f16 (bf = false) or bf16 weights. f16 → f32 without a table: the halves are
 * loaded sign-extended to i32, shifted so exponent+mantissa land in f32 position, masked to
 * sign | exponent | mantissa, and rescaled by 2^112 (exact for normals and subnormals).
 * Four f32 accumulators (16 weights per step).
 */
function dotHalf(w: usize, x: usize, n: i32, bf: bool): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  if (bf) {
    for (; i + 16 <= n; i += 16) {
      const p = w + (<usize>i << 1), xo = x + (<usize>i << 2);
      a0 = madd(i32x4.shl(v128.load16x4_u(p), 16), v128.load(xo), a0);
      a1 = madd(i32x4.shl(v128.load16x4_u(p, 8), 16), v128.load(xo, 16), a1);
      a2 = madd(i32x4.shl(v128.load16x4_u(p, 16), 16), v128.load(xo, 32), a2);
      a3 = madd(i32x4.shl(v128.load16x4_u(p, 24), 16), v128.load(xo, 48), a3);
    }
  } else {
    const mask = v128.load(HALF_CONST), k = v128.load(HALF_CONST, 16);
    for (; i + 16 <= n; i += 16) {
      const p = w + (<usize>i << 1), xo = x + (<usize>i << 2);
      a0 = madd(f32x4.mul(v128.and(i32x4.shl(v128.load16x4_s(p), 13), mask), k), v128.load(xo), a0);
      a1 = madd(f32x4.mul(v128.and(i32x4.shl(v128.load16x4_s(p, 8), 13), mask), k), v128.load(xo, 16), a1);
      a2 = madd(f32x4.mul(v128.and(i32x4.shl(v128.load16x4_s(p, 16), 13), mask), k), v128.load(xo, 32), a2);
      a3 = madd(f32x4.mul(v128.and(i32x4.shl(v128.load16x4_s(p, 24), 13), mask), k), v128.load(xo, 48), a3);
    }
  }
  let s = hsum(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < n; i++) {
    const h = <u32>load<u16>(w + (<usize>i << 1));
    s += (bf ? reinterpret<f32>(h << 16) : half(h)) * load<f32>(x + (<usize>i << 2));
  }
  return s;
}

/**
 * Σ w[i]·x[i] for n f16 weights against x pre-multiplied by 2^112 (scaleHalfX): the masked bit
 * pattern is then used without the rescaling multiply, products land in the normal range.
 */
export function dotHalfScaled(w: usize, x: usize, n: i32): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  const mask = v128.load(HALF_CONST);
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    const p = w + (<usize>i << 1), xo = x + (<usize>i << 2);
    a0 = madd(v128.and(i32x4.shl(v128.load16x4_s(p), 13), mask), v128.load(xo), a0);
    a1 = madd(v128.and(i32x4.shl(v128.load16x4_s(p, 8), 13), mask), v128.load(xo, 16), a1);
    a2 = madd(v128.and(i32x4.shl(v128.load16x4_s(p, 16), 13), mask), v128.load(xo, 32), a2);
    a3 = madd(v128.and(i32x4.shl(v128.load16x4_s(p, 24), 13), mask), v128.load(xo, 48), a3);
  }
  let s = hsum(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < n; i++) s += half(<u32>load<u16>(w + (<usize>i << 1))) * (load<f32>(x + (<usize>i << 2)) * (1 / TWO112));
  return s;
}

/**
 * y = x·2^112 for n values, for dotHalfScaled. Returns false (y unusable) when some |x| ≥ 2^15,
 * where the scaled value could overflow.
 */
export function scaleHalfX(y: usize, x: usize, n: i32): bool {
  const k = f32x4.splat(TWO112), lim = f32x4.splat(32768);
  let bad = i32x4.splat(0);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = v128.load(x + (<usize>i << 2));
    bad = v128.or(bad, f32x4.ge(f32x4.abs(v), lim));
    bad = v128.or(bad, f32x4.ne(v, v));
    v128.store(y + (<usize>i << 2), f32x4.mul(v, k));
  }
  for (; i < n; i++) {
    const v = load<f32>(x + (<usize>i << 2));
    if (!(abs(v) < 32768)) return false;
    store<f32>(y + (<usize>i << 2), v * TWO112);
  }
  return !v128.any_true(bad);
}

// @ts-ignore: decorator
@inline export function scaleK(q: usize, j: i32): u32 {
  return j < 4 ? <u32>load<u8>(q + j) & 63 : (<u32>load<u8>(q + j + 4) & 0xf) | ((<u32>load<u8>(q + j - 4) >> 6) << 4);
}
// @ts-ignore: decorator
@inline export function minK(q: usize, j: i32): u32 {
  return j < 4 ? <u32>load<u8>(q + j + 4) & 63 : (<u32>load<u8>(q + j + 4) >> 4) | ((<u32>load<u8>(q + j) >> 6) << 4);
}

/**
 * The unsigned quants (Q2_K 0..3, Q3_K 0..7) of 16 elements: the low bits are bits `shift`,
 * `shift`+1 of the 16 quant bytes `qv`, Q3_K's third bit is bit `hbit` of the 16 hmask bytes `hm`
 * (unused for Q2_K). The i16 shifts bring a neighbour byte's bits only above the bits the byte
 * masks keep. Shared by the f32 kernels here and the int8 decode kernel (q8.ts q23Part).
 */
// @ts-ignore: decorator
@inline export function bitsK23(three: bool, qv: v128, hm: v128, shift: i32, hbit: i32): v128 {
  const q = v128.and(i16x8.shr_u(qv, shift), i8x16.splat(3));
  if (!three) return q;
  return v128.or(q, i16x8.shl(v128.and(i16x8.shr_u(hm, hbit), i8x16.splat(1)), 2));
}

/**
 * The 16 quants of group g (0..15) of a Q2_K (0..3) or Q3_K (−4..3) super-block at p, as i8.
 * Element 16g + l sits in byte 32·(g/8) + 16·(g%2) + l of the 2-bit area at bits 2·((g/2)%4);
 * Q3_K's third bit of that element is bit g/2 of hmask byte 16·(g%2) + l, clear meaning −4
 * (ggml dequantize_row_q2_K / q3_K).
 */
// @ts-ignore: decorator
@inline function quantsK23(three: bool, p: usize, g: i32): v128 {
  const qv = v128.load(p + (three ? 32 : 16) + (<usize>(g >> 3) << 5) + (<usize>(g & 1) << 4));
  const u = bitsK23(three, qv, three ? v128.load(p + (<usize>(g & 1) << 4)) : qv, 2 * ((g >> 1) & 3), g >> 1);
  return three ? i8x16.sub(u, i8x16.splat(4)) : u;
}

/** Q3_K: the signed scale of group g (6 bits from the 12 bytes at p + 96, minus 32). */
// @ts-ignore: decorator
@inline function scaleQ3K(p: usize, g: i32): f32 {
  const sc = p + 96;
  const low = g < 8 ? <i32>load<u8>(sc + g) & 15 : <i32>load<u8>(sc + g - 8) >> 4;
  return <f32>((low | (((<i32>load<u8>(sc + 8 + (g & 3)) >> (2 * (g >> 2))) & 3) << 4)) - 32);
}

/**
 * Fused dequantize + dot of one weight row with x (n f32). `xs` holds Σx over each 32-element block
 * (needed by the formats with a min/offset term: Q4_1, Q5_1, Q4_K, Q5_K).
 */
export function dotRow(type: i32, w: usize, x: usize, xs: usize, n: i32): f32 {
  if (type == F32) return dotF32(w, x, n);
  if (type == F16) return dotHalf(w, x, n, false);
  if (type == BF16) return dotHalf(w, x, n, true);
  const m0 = v128.splat<u8>(0x0f);
  let acc = f32x4.splat(0);
  let mins: f32 = 0;
  const nb = n >> 5;
  if (type == Q8_0) {
    for (let b = 0; b < nb; b++) {
      const p = w + <usize>b * 34, xp = x + (<usize>b << 7);
      const s = f32x4.add(dot16(v128.load(p, 2), xp), dot16(v128.load(p, 18), xp + 64));
      acc = f32x4.add(acc, f32x4.mul(s, f32x4.splat(half(load<u16>(p)))));
    }
  } else if (type == Q4_0) {
    const e8 = i8x16.splat(8);
    for (let b = 0; b < nb; b++) {
      const p = w + <usize>b * 18, xp = x + (<usize>b << 7);
      const v = v128.load(p, 2);
      const s = f32x4.add(dot16(i8x16.sub(v128.and(v, m0), e8), xp), dot16(i8x16.sub(i8x16.shr_u(v, 4), e8), xp + 64));
      acc = f32x4.add(acc, f32x4.mul(s, f32x4.splat(half(load<u16>(p)))));
    }
  } else if (type == Q4_1) {
    for (let b = 0; b < nb; b++) {
      const p = w + <usize>b * 20, xp = x + (<usize>b << 7);
      const v = v128.load(p, 4);
      const s = f32x4.add(dot16(v128.and(v, m0), xp), dot16(i8x16.shr_u(v, 4), xp + 64));
      acc = f32x4.add(acc, f32x4.mul(s, f32x4.splat(half(load<u16>(p)))));
      mins += half(load<u16>(p, 2)) * load<f32>(xs + (<usize>b << 2));
    }
  } else if (type == Q5_0 || type == Q5_1) {
    const one = type == Q5_1;
    const bs: usize = one ? 24 : 22, qo: usize = one ? 8 : 6, ho: usize = one ? 4 : 2;
    const e16 = i8x16.splat(one ? 0 : 16);
    for (let b = 0; b < nb; b++) {
      const p = w + <usize>b * bs, xp = x + (<usize>b << 7);
      const qh = load<u32>(p + ho);
      const v = v128.load(p + qo);
      const lo = i8x16.sub(v128.or(v128.and(v, m0), bit5(qh & 0xffff)), e16);
      const hi = i8x16.sub(v128.or(i8x16.shr_u(v, 4), bit5(qh >> 16)), e16);
      const s = f32x4.add(dot16(lo, xp), dot16(hi, xp + 64));
      acc = f32x4.add(acc, f32x4.mul(s, f32x4.splat(half(load<u16>(p)))));
      if (one) mins += half(load<u16>(p, 2)) * load<f32>(xs + (<usize>b << 2));
    }
  } else if (type == Q4_K || type == Q5_K) {
    const five = type == Q5_K;
    const bs: usize = five ? 176 : 144, qo: usize = five ? 48 : 16;
    const zero = i8x16.splat(0), b5 = i8x16.splat(0x10);
    for (let sb = 0; sb < (n >> 8); sb++) {
      const p = w + <usize>sb * bs, xp0 = x + (<usize>sb << 10), xs0 = xs + (<usize>sb << 5);
      const d = halfK(load<u16>(p)), dmin = halfK(load<u16>(p, 2));
      const sc = p + 4;
      let h0 = zero, h1 = zero;
      if (five) { h0 = v128.load(p, 16); h1 = v128.load(p, 32); }
      for (let j = 0; j < 4; j++) {
        const q = p + qo + (<usize>j << 5), xp = xp0 + (<usize>j << 8);
        const v0 = v128.load(q), v1 = v128.load(q, 16);
        let l0 = v128.and(v0, m0), l1 = v128.and(v1, m0), u0 = i8x16.shr_u(v0, 4), u1 = i8x16.shr_u(v1, 4);
        if (five) {
          const sh = 2 * j;
          const ba: i32 = 0x0101 << sh, bb: i32 = 0x0202 << sh;
          const bitA = i16x8.splat(<i16>ba), bitB = i16x8.splat(<i16>bb);
          l0 = v128.or(l0, v128.and(i8x16.ne(v128.and(h0, bitA), zero), b5));
          l1 = v128.or(l1, v128.and(i8x16.ne(v128.and(h1, bitA), zero), b5));
          u0 = v128.or(u0, v128.and(i8x16.ne(v128.and(h0, bitB), zero), b5));
          u1 = v128.or(u1, v128.and(i8x16.ne(v128.and(h1, bitB), zero), b5));
        }
        const sa = f32x4.add(dot16(l0, xp), dot16(l1, xp + 64));
        const sbv = f32x4.add(dot16(u0, xp + 128), dot16(u1, xp + 192));
        acc = f32x4.add(acc, f32x4.mul(sa, f32x4.splat(d * <f32>scaleK(sc, 2 * j))));
        acc = f32x4.add(acc, f32x4.mul(sbv, f32x4.splat(d * <f32>scaleK(sc, 2 * j + 1))));
        mins += dmin * (<f32>minK(sc, 2 * j) * load<f32>(xs0 + (<usize>j << 3)) + <f32>minK(sc, 2 * j + 1) * load<f32>(xs0 + (<usize>j << 3), 4));
      }
    }
  } else if (type == Q2_K || type == Q3_K) {
    // per 16-value group: d·sc·Σq·x (Q2_K also − dmin·m·Σx); the Σx of Q2_K's mins accumulate
    // per lane in `macc` and are subtracted once at the end
    const three = type == Q3_K;
    let macc = f32x4.splat(0);
    for (let sb = 0; sb < (n >> 8); sb++) {
      const p = w + <usize>sb * (three ? 110 : 84), xp0 = x + (<usize>sb << 10);
      const d = halfK(load<u16>(p + (three ? 108 : 80))), dmin: f32 = three ? 0 : halfK(load<u16>(p, 82));
      for (let g = 0; g < 16; g++) {
        const xp = xp0 + (<usize>g << 6);
        if (three) {
          acc = f32x4.add(acc, f32x4.mul(dot16(quantsK23(true, p, g), xp), f32x4.splat(d * scaleQ3K(p, g))));
        } else {
          const sc = <i32>load<u8>(p + g);
          acc = f32x4.add(acc, f32x4.mul(dot16(quantsK23(false, p, g), xp), f32x4.splat(d * <f32>(sc & 15))));
          const sx = f32x4.add(f32x4.add(v128.load(xp), v128.load(xp, 16)), f32x4.add(v128.load(xp, 32), v128.load(xp, 48)));
          macc = f32x4.add(macc, f32x4.mul(sx, f32x4.splat(dmin * <f32>(sc >> 4))));
        }
      }
    }
    acc = f32x4.sub(acc, macc);
  } else if (type == Q6_K) {
    const m3 = i8x16.splat(0x30), e32 = i8x16.splat(32);
    for (let sb = 0; sb < (n >> 8); sb++) {
      const p = w + <usize>sb * 210, xp0 = x + (<usize>sb << 10);
      const d = halfK(load<u16>(p, 208));
      for (let h = 0; h < 2; h++) {
        const ql = p + (<usize>h << 6), qh = p + 128 + (<usize>h << 5), sc = p + 192 + (<usize>h << 3);
        const xh = xp0 + (<usize>h << 9);
        for (let k = 0; k < 2; k++) {
          const ko = <usize>k << 4;
          const A = v128.load(ql + ko), B = v128.load(ql + 32 + ko), H = v128.load(qh + ko);
          const q1 = i8x16.sub(v128.or(v128.and(A, m0), v128.and(i8x16.shl(H, 4), m3)), e32);
          const q2 = i8x16.sub(v128.or(v128.and(B, m0), v128.and(i8x16.shl(H, 2), m3)), e32);
          const q3 = i8x16.sub(v128.or(i8x16.shr_u(A, 4), v128.and(H, m3)), e32);
          const q4 = i8x16.sub(v128.or(i8x16.shr_u(B, 4), v128.and(i8x16.shr_u(H, 2), m3)), e32);
          const xk = xh + (ko << 2);
          acc = f32x4.add(acc, f32x4.mul(dot16(q1, xk), f32x4.splat(d * <f32>load<i8>(sc + k))));
          acc = f32x4.add(acc, f32x4.mul(dot16(q2, xk + 128), f32x4.splat(d * <f32>load<i8>(sc + k + 2))));
          acc = f32x4.add(acc, f32x4.mul(dot16(q3, xk + 256), f32x4.splat(d * <f32>load<i8>(sc + k + 4))));
          acc = f32x4.add(acc, f32x4.mul(dot16(q4, xk + 384), f32x4.splat(d * <f32>load<i8>(sc + k + 6))));
        }
      }
    }
  } else {
    unreachable();
  }
  return hsum(acc) + mins * (type == Q4_K || type == Q5_K ? -1 : 1);
}

/** Dequantize one row of n elements of `type` at w into n f32 at y. */
export function dequantRow(type: i32, w: usize, y: usize, n: i32): void {
  if (type == F32) { memory.copy(y, w, <usize>n << 2); return; }
  if (type == F16 || type == BF16) {
    const bf = type == BF16;
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const h = v128.load16x4_u(w + (<usize>i << 1));
      v128.store(y + (<usize>i << 2), bf ? i32x4.shl(h, 16) : half4(h));
    }
    for (; i < n; i++) {
      const h = <u32>load<u16>(w + (<usize>i << 1));
      store<f32>(y + (<usize>i << 2), bf ? reinterpret<f32>(h << 16) : half(h));
    }
    return;
  }
  const m0 = v128.splat<u8>(0x0f);
  const z = f32x4.splat(0);
  const nb = n >> 5;
  if (type == Q8_0) {
    for (let b = 0; b < nb; b++) {
      const p = w + <usize>b * 34, yp = y + (<usize>b << 7);
      const d = f32x4.splat(half(load<u16>(p)));
      store16(v128.load(p, 2), d, z, yp);
      store16(v128.load(p, 18), d, z, yp + 64);
    }
  } else if (type == Q4_0 || type == Q4_1) {
    const one = type == Q4_1;
    const e8 = i8x16.splat(one ? 0 : 8);
    for (let b = 0; b < nb; b++) {
      const p = w + <usize>b * (one ? 20 : 18), yp = y + (<usize>b << 7);
      const d = f32x4.splat(half(load<u16>(p)));
      const m = one ? f32x4.splat(-half(load<u16>(p, 2))) : z;
      const v = v128.load(p + (one ? 4 : 2));
      store16(i8x16.sub(v128.and(v, m0), e8), d, m, yp);
      store16(i8x16.sub(i8x16.shr_u(v, 4), e8), d, m, yp + 64);
    }
  } else if (type == Q5_0 || type == Q5_1) {
    const one = type == Q5_1;
    const bs: usize = one ? 24 : 22, qo: usize = one ? 8 : 6, ho: usize = one ? 4 : 2;
    const e16 = i8x16.splat(one ? 0 : 16);
    for (let b = 0; b < nb; b++) {
      const p = w + <usize>b * bs, yp = y + (<usize>b << 7);
      const d = f32x4.splat(half(load<u16>(p)));
      const m = one ? f32x4.splat(-half(load<u16>(p, 2))) : z;
      const qh = load<u32>(p + ho);
      const v = v128.load(p + qo);
      store16(i8x16.sub(v128.or(v128.and(v, m0), bit5(qh & 0xffff)), e16), d, m, yp);
      store16(i8x16.sub(v128.or(i8x16.shr_u(v, 4), bit5(qh >> 16)), e16), d, m, yp + 64);
    }
  } else if (type == Q4_K || type == Q5_K) {
    const five = type == Q5_K;
    const bs: usize = five ? 176 : 144, qo: usize = five ? 48 : 16;
    const zero = i8x16.splat(0), b5 = i8x16.splat(0x10);
    for (let sb = 0; sb < (n >> 8); sb++) {
      const p = w + <usize>sb * bs, y0 = y + (<usize>sb << 10);
      const dd = halfK(load<u16>(p)), dmin = halfK(load<u16>(p, 2));
      const sc = p + 4;
      let h0 = zero, h1 = zero;
      if (five) { h0 = v128.load(p, 16); h1 = v128.load(p, 32); }
      for (let j = 0; j < 4; j++) {
        const q = p + qo + (<usize>j << 5), yp = y0 + (<usize>j << 8);
        const v0 = v128.load(q), v1 = v128.load(q, 16);
        let l0 = v128.and(v0, m0), l1 = v128.and(v1, m0), u0 = i8x16.shr_u(v0, 4), u1 = i8x16.shr_u(v1, 4);
        if (five) {
          const sh = 2 * j;
          const ba: i32 = 0x0101 << sh, bb: i32 = 0x0202 << sh;
          const bitA = i16x8.splat(<i16>ba), bitB = i16x8.splat(<i16>bb);
          l0 = v128.or(l0, v128.and(i8x16.ne(v128.and(h0, bitA), zero), b5));
          l1 = v128.or(l1, v128.and(i8x16.ne(v128.and(h1, bitA), zero), b5));
          u0 = v128.or(u0, v128.and(i8x16.ne(v128.and(h0, bitB), zero), b5));
          u1 = v128.or(u1, v128.and(i8x16.ne(v128.and(h1, bitB), zero), b5));
        }
        const da = f32x4.splat(dd * <f32>scaleK(sc, 2 * j)), ma = f32x4.splat(dmin * <f32>minK(sc, 2 * j));
        const db = f32x4.splat(dd * <f32>scaleK(sc, 2 * j + 1)), mb = f32x4.splat(dmin * <f32>minK(sc, 2 * j + 1));
        store16(l0, da, ma, yp); store16(l1, da, ma, yp + 64);
        store16(u0, db, mb, yp + 128); store16(u1, db, mb, yp + 192);
      }
    }
  } else if (type == Q2_K || type == Q3_K) {
    const three = type == Q3_K;
    for (let sb = 0; sb < (n >> 8); sb++) {
      const p = w + <usize>sb * (three ? 110 : 84), y0 = y + (<usize>sb << 10);
      const d = halfK(load<u16>(p + (three ? 108 : 80))), dmin: f32 = three ? 0 : halfK(load<u16>(p, 82));
      for (let g = 0; g < 16; g++) {
        const yp = y0 + (<usize>g << 6);
        if (three) store16(quantsK23(true, p, g), f32x4.splat(d * scaleQ3K(p, g)), z, yp);
        else {
          const sc = <i32>load<u8>(p + g);
          store16(quantsK23(false, p, g), f32x4.splat(d * <f32>(sc & 15)), f32x4.splat(dmin * <f32>(sc >> 4)), yp);
        }
      }
    }
  } else if (type == Q6_K) {
    const m3 = i8x16.splat(0x30), e32 = i8x16.splat(32);
    for (let sb = 0; sb < (n >> 8); sb++) {
      const p = w + <usize>sb * 210, y0 = y + (<usize>sb << 10);
      const d = halfK(load<u16>(p, 208));
      for (let h = 0; h < 2; h++) {
        const ql = p + (<usize>h << 6), qh = p + 128 + (<usize>h << 5), sc = p + 192 + (<usize>h << 3);
        const yh = y0 + (<usize>h << 9);
        for (let k = 0; k < 2; k++) {
          const ko = <usize>k << 4;
          const A = v128.load(ql + ko), B = v128.load(ql + 32 + ko), H = v128.load(qh + ko);
          const yk = yh + (ko << 2);
          store16(i8x16.sub(v128.or(v128.and(A, m0), v128.and(i8x16.shl(H, 4), m3)), e32), f32x4.splat(d * <f32>load<i8>(sc + k)), z, yk);
          store16(i8x16.sub(v128.or(v128.and(B, m0), v128.and(i8x16.shl(H, 2), m3)), e32), f32x4.splat(d * <f32>load<i8>(sc + k + 2)), z, yk + 128);
          store16(i8x16.sub(v128.or(i8x16.shr_u(A, 4), v128.and(H, m3)), e32), f32x4.splat(d * <f32>load<i8>(sc + k + 4)), z, yk + 256);
          store16(i8x16.sub(v128.or(i8x16.shr_u(B, 4), v128.and(i8x16.shr_u(H, 2), m3)), e32), f32x4.splat(d * <f32>load<i8>(sc + k + 6)), z, yk + 384);
        }
      }
    }
  } else {
    unreachable();
  }
}

export { sum32 };
