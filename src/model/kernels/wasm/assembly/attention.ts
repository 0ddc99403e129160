// Causal scaled dot-product attention (Vaswani et al. 2017) over the KV cache, with grouped-query
// heads (GQA), for a cache of f32 or f16 values. The two element types share one generic body
// (T = f32 | u16, resolved at compile time): f16 values are converted exactly on load (the
// shift-and-mask method of simd.ts half4), so an f16 cache costs a few vector ops per four values
// and halves the bytes attention streams from memory, which is what bounds decode attention.
import { softmax } from './ops';
import { dotF32 } from './rows';
import { half } from './simd';

/** i32 mask sign | exponent | mantissa after the shift, and 2^112 (f16 → f32, see simd.ts). */
const HC = memory.data<u32>([0x8fffe000, 0x8fffe000, 0x8fffe000, 0x8fffe000, 0x77800000, 0x77800000, 0x77800000, 0x77800000], 16);

/** Four cache values at p as f32x4 (f16: exact conversion). */
// @ts-ignore: decorator
@inline function load4<T>(p: usize): v128 {
  if (sizeof<T>() == 4) return v128.load(p);
  return f32x4.mul(v128.and(i32x4.shl(v128.load16x4_s(p), 13), v128.load(HC)), v128.load(HC, 16));
}

/** One cache value at p as f32. */
// @ts-ignore: decorator
@inline function load1<T>(p: usize): f32 {
  if (sizeof<T>() == 4) return load<f32>(p);
  return half(<u32>load<u16>(p));
}

/**
 * Attention over an f32 cache. q, out: (nTok, nHead·headDim) f32; k, v: (position, nHeadKv·headDim)
 * rows holding at least start + nTok positions. Computes heads [h0, h1) only (threads split by
 * head). headDim a multiple of 16: q·k with four f32x4 accumulators and value sums 16 dims at a
 * time in registers; a single query (decode) walks the cache position by position instead
 * (attentionOne), and then `scores` must hold (h1 − h0)·(start + 1) f32, else start + nTok.
 * `kvHalf` ≠ 0: k and v hold f16 bits.
 */
export function attention(out: usize, q: usize, k: usize, v: usize, nTok: i32, start: i32, nHead: i32, nHeadKv: i32,
  headDim: i32, scale: f32, h0: i32, h1: i32, scores: usize, kvHalf: i32): void {
  if (kvHalf != 0) attentionT<u16>(out, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale, h0, h1, scores);
  else attentionT<f32>(out, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale, h0, h1, scores);
}

// @ts-ignore: decorator
@inline function attentionT<T>(out: usize, q: usize, k: usize, v: usize, nTok: i32, start: i32, nHead: i32, nHeadKv: i32,
  headDim: i32, scale: f32, h0: i32, h1: i32, scores: usize): void {
  const es = <usize>sizeof<T>();
  const kvDim = nHeadKv * headDim;
  const group = nHead / nHeadKv;
  const rowB = <usize>kvDim * es;
  const fast = (headDim & 15) == 0;
  if (fast && nTok == 1) { attentionOne<T>(out, q, k, v, start + 1, nHead, group, headDim, rowB, scale, h0, h1, scores); return; }
  for (let t = 0; t < nTok; t++) {
    const nPos = start + t + 1;
    for (let h = h0; h < h1; h++) {
      const qh = q + (<usize>(t * nHead + h) * headDim << 2);
      const off = <usize>((h / group) * headDim) * es;
      const oh = out + (<usize>(t * nHead + h) * headDim << 2);
      if (fast) {
        for (let p = 0; p < nPos; p++) store<f32>(scores + (<usize>p << 2), dot16s<T>(k + <usize>p * rowB + off, qh, headDim) * scale);
        softmax(scores, nPos);
        weightedSum<T>(oh, v + off, rowB, scores, nPos, headDim);
        continue;
      }
      for (let p = 0; p < nPos; p++) {
        const kr = k + <usize>p * rowB + off;
        let s: f32;
        if (sizeof<T>() == 4) s = dotF32(kr, qh, headDim);
        else {
          let d64: f64 = 0;
          for (let d = 0; d < headDim; d++) d64 += <f64>load1<T>(kr + <usize>d * es) * <f64>load<f32>(qh + (<usize>d << 2));
          s = <f32>d64;
        }
        store<f32>(scores + (<usize>p << 2), s * scale);
      }
      softmax(scores, nPos);
      let d = 0;
      for (; d + 4 <= headDim; d += 4) {
        let acc = f32x4.splat(0);
        const dd = off + <usize>d * es;
        for (let p = 0; p < nPos; p++) acc = f32x4.add(acc, f32x4.mul(load4<T>(v + <usize>p * rowB + dd), f32x4.splat(load<f32>(scores + (<usize>p << 2)))));
        v128.store(oh + (<usize>d << 2), acc);
      }
      for (; d < headDim; d++) {
        let acc: f32 = 0;
        for (let p = 0; p < nPos; p++) acc += load1<T>(v + <usize>p * rowB + off + <usize>d * es) * load<f32>(scores + (<usize>p << 2));
        store<f32>(oh + (<usize>d << 2), acc);
      }
    }
  }
}

/** Σ a[i]·b[i] (a: cache values of type T, b: f32) for n a multiple of 16, four f32x4 accumulators. */
// @ts-ignore: decorator
@inline function dot16s<T>(a: usize, b: usize, n: i32): f32 {
  const es = <usize>sizeof<T>();
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const o = <usize>i << 2, p = a + <usize>i * es;
    s0 = f32x4.add(s0, f32x4.mul(load4<T>(p), v128.load(b + o)));
    s1 = f32x4.add(s1, f32x4.mul(load4<T>(p + 4 * es), v128.load(b + o, 16)));
    s2 = f32x4.add(s2, f32x4.mul(load4<T>(p + 8 * es), v128.load(b + o, 32)));
    s3 = f32x4.add(s3, f32x4.mul(load4<T>(p + 12 * es), v128.load(b + o, 48)));
  }
  const t = f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3));
  return (f32x4.extract_lane(t, 0) + f32x4.extract_lane(t, 1)) + (f32x4.extract_lane(t, 2) + f32x4.extract_lane(t, 3));
}

/**
 * o[0..n) = Σ_p w[p]·v[p·stride + 0..n) for n a multiple of 16: 16 dims (four accumulators) per
 * pass over the positions, so each value row segment is read once and the weights splat once
 * per pass.
 */
// @ts-ignore: decorator
@inline function weightedSum<T>(o: usize, v: usize, stride: usize, w: usize, nPos: i32, n: i32): void {
  const es = <usize>sizeof<T>();
  for (let d = 0; d < n; d += 16) {
    const vd = v + <usize>d * es;
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    for (let p = 0; p < nPos; p++) {
      const r = vd + <usize>p * stride;
      const s = v128.load32_splat(w + (<usize>p << 2));
      a0 = f32x4.add(a0, f32x4.mul(load4<T>(r), s));
      a1 = f32x4.add(a1, f32x4.mul(load4<T>(r + 4 * es), s));
      a2 = f32x4.add(a2, f32x4.mul(load4<T>(r + 8 * es), s));
      a3 = f32x4.add(a3, f32x4.mul(load4<T>(r + 12 * es), s));
    }
    const od = o + (<usize>d << 2);
    v128.store(od, a0); v128.store(od, a1, 16); v128.store(od, a2, 32); v128.store(od, a3, 48);
  }
}

/**
 * One query token (decode) against nPos cached positions, heads [h0, h1): the K and V rows are
 * each read once, front to back, for all these heads together (sequential streaming instead of
 * one strided pass per head, which left the loop waiting on memory). scores: (h1 − h0)·nPos f32.
 */
// @ts-ignore: decorator
@inline function attentionOne<T>(out: usize, q: usize, k: usize, v: usize, nPos: i32, nHead: i32, group: i32, headDim: i32,
  rowB: usize, scale: f32, h0: i32, h1: i32, scores: usize): void {
  const es = <usize>sizeof<T>();
  const hb = <usize>headDim << 2, hk = <usize>headDim * es;
  const sb = <usize>nPos << 2;
  for (let p = 0; p < nPos; p++) {
    const kr = k + <usize>p * rowB;
    for (let h = h0; h < h1; h++) {
      store<f32>(scores + <usize>(h - h0) * sb + (<usize>p << 2), dot16s<T>(kr + <usize>(h / group) * hk, q + <usize>h * hb, headDim) * scale);
    }
  }
  for (let h = h0; h < h1; h++) {
    softmax(scores + <usize>(h - h0) * sb, nPos);
    memory.fill(out + <usize>h * hb, 0, hb);
  }
  for (let p = 0; p < nPos; p++) {
    const vr = v + <usize>p * rowB;
    for (let h = h0; h < h1; h++) {
      const s = v128.load32_splat(scores + <usize>(h - h0) * sb + (<usize>p << 2));
      const src = vr + <usize>(h / group) * hk, dst = out + <usize>h * hb;
      for (let d: usize = 0; d < hb; d += 64) {
        const sp = src + (d >> 2) * es;
        v128.store(dst + d, f32x4.add(v128.load(dst + d), f32x4.mul(load4<T>(sp), s)));
        v128.store(dst + d, f32x4.add(v128.load(dst + d, 16), f32x4.mul(load4<T>(sp + 4 * es), s)), 16);
        v128.store(dst + d, f32x4.add(v128.load(dst + d, 32), f32x4.mul(load4<T>(sp + 8 * es), s)), 32);
        v128.store(dst + d, f32x4.add(v128.load(dst + d, 48), f32x4.mul(load4<T>(sp + 12 * es), s)), 48);
      }
    }
  }
}

/**
 * dst[i] = f16 bits of src[i] (f32), rounded to nearest even, for n values: the KV cache write.
 * Overflow gives ±inf, NaN a quiet NaN (0x7e00), values below half the smallest subnormal ±0;
 * bit-identical to src/format/dtypes.ts f32ToF16.
 */
export function storeHalf(dst: usize, src: usize, n: i32): void {
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const h = toHalf4(v128.load(src + (<usize>i << 2)));
    v128.store64_lane(dst + (<usize>i << 1), i16x8.narrow_i32x4_u(h, h), 0);
  }
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
