// Non-matmul kernels: RMSNorm, RoPE, SwiGLU, GELU, softmax, attention over an f32 KV cache.
import { dotF32 } from './rows';
import { exp4, hsum } from './simd';

/** out = x / sqrt(mean(x²) + eps) ⊙ w (w = 0: no scale). Zhang & Sennrich 2019. In-place safe. */
export function rmsnorm(out: usize, x: usize, w: usize, n: i32, eps: f32): void {
  let a = f32x4.splat(0);
  let i = 0;
  for (; i + 4 <= n; i += 4) { const v = v128.load(x + (<usize>i << 2)); a = f32x4.add(a, f32x4.mul(v, v)); }
  let ss: f64 = <f64>hsum(a);
  for (; i < n; i++) { const v = <f64>load<f32>(x + (<usize>i << 2)); ss += v * v; }
  const scale = <f32>(1.0 / Math.sqrt(ss / <f64>n + <f64>eps));
  const s4 = f32x4.splat(scale);
  i = 0;
  for (; i + 4 <= n; i += 4) {
    const o = <usize>i << 2;
    let v = f32x4.mul(v128.load(x + o), s4);
    if (w) v = f32x4.mul(v, v128.load(w + o));
    v128.store(out + o, v);
  }
  for (; i < n; i++) {
    const o = <usize>i << 2;
    let v = load<f32>(x + o) * scale;
    if (w) v *= load<f32>(w + o);
    store<f32>(out + o, v);
  }
}

/**
 * In-place softmax of n f32 at x (max-subtracted). The exponentials stay scalar (musl's expf, below
 * 1 ulp): attention feeds them and the GPT-2 reference check amplifies 1-ulp differences (its
 * emulated F16 GELU table flips roundings), while the vector max and scaling are exact.
 */
export function softmax(x: usize, n: i32): void {
  let m4 = f32x4.splat(-Infinity);
  let i = 0;
  for (; i + 4 <= n; i += 4) m4 = f32x4.max(m4, v128.load(x + (<usize>i << 2)));
  let mx: f32 = max(max(f32x4.extract_lane(m4, 0), f32x4.extract_lane(m4, 1)), max(f32x4.extract_lane(m4, 2), f32x4.extract_lane(m4, 3)));
  for (; i < n; i++) mx = max(mx, load<f32>(x + (<usize>i << 2)));
  let sum: f32 = 0;
  for (i = 0; i < n; i++) {
    const e = Mathf.exp(load<f32>(x + (<usize>i << 2)) - mx);
    store<f32>(x + (<usize>i << 2), e);
    sum += e;
  }
  const inv = f32x4.splat(1 / sum);
  i = 0;
  for (; i + 4 <= n; i += 4) v128.store(x + (<usize>i << 2), f32x4.mul(v128.load(x + (<usize>i << 2)), inv));
  for (; i < n; i++) store<f32>(x + (<usize>i << 2), load<f32>(x + (<usize>i << 2)) * (1 / sum));
}

/** out[i] = silu(gate[i]) · up[i] (SwiGLU, Shazeer 2020); out may alias gate or up. Vector exp (simd.ts exp4). */
export function swiglu(out: usize, gate: usize, up: usize, n: i32): void {
  const one = f32x4.splat(1);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const o = <usize>i << 2;
    const g = v128.load(gate + o);
    v128.store(out + o, f32x4.mul(f32x4.div(g, f32x4.add(one, exp4(f32x4.neg(g)))), v128.load(up + o)));
  }
  for (; i < n; i++) {
    const o = <usize>i << 2;
    const g = load<f32>(gate + o);
    store<f32>(out + o, g / (1 + f32x4.extract_lane(exp4(f32x4.splat(-g)), 0)) * load<f32>(up + o));
  }
}

/** out[i] = tanh-approximated GELU(x[i]) (Hendrycks & Gimpel 2016). In-place safe. */
export function gelu(out: usize, x: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    const o = <usize>i << 2;
    const v = load<f32>(x + o);
    store<f32>(out + o, 0.5 * v * (1 + Mathf.tanh(0.7978845608 * v * (1 + 0.044715 * v * v))));
  }
}

/**
 * Rotary position embedding (Su et al. 2021) on nHeads heads of headDim values at x, for one
 * position. The first ropeDim dims of each head rotate with θ_i = pos · base^(−2i/ropeDim);
 * pairs are adjacent (x[2i], x[2i+1]) or, with neox, split halves (x[i], x[i + ropeDim/2]).
 * Angles are computed in f64.
 */
export function rope(x: usize, nHeads: i32, headDim: i32, ropeDim: i32, pos: f64, base: f64, neox: bool): void {
  const half = ropeDim >> 1;
  for (let i = 0; i < half; i++) {
    const theta = pos * Math.pow(base, -2.0 * <f64>i / <f64>ropeDim);
    const c = <f32>Math.cos(theta), s = <f32>Math.sin(theta);
    const a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    for (let h = 0; h < nHeads; h++) {
      const p = x + (<usize>(h * headDim) << 2);
      const x0 = load<f32>(p + (<usize>a << 2)), x1 = load<f32>(p + (<usize>b << 2));
      store<f32>(p + (<usize>a << 2), x0 * c - x1 * s);
      store<f32>(p + (<usize>b << 2), x0 * s + x1 * c);
    }
  }
}

/**
 * Causal attention for nTok query tokens at positions start.. over an f32 KV cache laid out
 * (position, kvDim) with kvDim = nHeadKv·headDim; query heads share kv heads in groups (GQA).
 * q, out: (nTok, nHead·headDim). Computes heads [h0, h1) only (threads split by head);
 * `scores` is scratch for (start + nTok) f32. Scaled dot-product attention (Vaswani et al. 2017).
 * headDim a multiple of 16: q·k with four f32x4 accumulators and value sums 16 dims at a time in
 * registers; a single query (decode) walks the cache position by position instead (attentionOne),
 * and then `scores` must hold (h1 − h0)·(start + 1) f32.
 */
export function attention(out: usize, q: usize, k: usize, v: usize, nTok: i32, start: i32, nHead: i32, nHeadKv: i32,
  headDim: i32, scale: f32, h0: i32, h1: i32, scores: usize): void {
  const kvDim = nHeadKv * headDim;
  const group = nHead / nHeadKv;
  const rowB = <usize>kvDim << 2;
  const fast = (headDim & 15) == 0;
  if (fast && nTok == 1) { attentionOne(out, q, k, v, start + 1, nHead, group, headDim, rowB, scale, h0, h1, scores); return; }
  for (let t = 0; t < nTok; t++) {
    const nPos = start + t + 1;
    for (let h = h0; h < h1; h++) {
      const qh = q + (<usize>(t * nHead + h) * headDim << 2);
      const off = <usize>((h / group) * headDim) << 2;
      const oh = out + (<usize>(t * nHead + h) * headDim << 2);
      if (fast) {
        for (let p = 0; p < nPos; p++) store<f32>(scores + (<usize>p << 2), dot16s(k + <usize>p * rowB + off, qh, headDim) * scale);
        softmax(scores, nPos);
        weightedSum(oh, v + off, rowB, scores, nPos, headDim);
        continue;
      }
      for (let p = 0; p < nPos; p++) store<f32>(scores + (<usize>p << 2), dotF32(k + <usize>p * rowB + off, qh, headDim) * scale);
      softmax(scores, nPos);
      let d = 0;
      for (; d + 4 <= headDim; d += 4) {
        let acc = f32x4.splat(0);
        const dd = off + (<usize>d << 2);
        for (let p = 0; p < nPos; p++) acc = f32x4.add(acc, f32x4.mul(v128.load(v + <usize>p * rowB + dd), f32x4.splat(load<f32>(scores + (<usize>p << 2)))));
        v128.store(oh + (<usize>d << 2), acc);
      }
      for (; d < headDim; d++) {
        let acc: f32 = 0;
        for (let p = 0; p < nPos; p++) acc += load<f32>(v + <usize>p * rowB + off + (<usize>d << 2)) * load<f32>(scores + (<usize>p << 2));
        store<f32>(oh + (<usize>d << 2), acc);
      }
    }
  }
}

/** Σ a[i]·b[i] for n a multiple of 16, four f32x4 accumulators. */
// @ts-ignore: decorator
@inline function dot16s(a: usize, b: usize, n: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const o = <usize>i << 2;
    s0 = f32x4.add(s0, f32x4.mul(v128.load(a + o), v128.load(b + o)));
    s1 = f32x4.add(s1, f32x4.mul(v128.load(a + o, 16), v128.load(b + o, 16)));
    s2 = f32x4.add(s2, f32x4.mul(v128.load(a + o, 32), v128.load(b + o, 32)));
    s3 = f32x4.add(s3, f32x4.mul(v128.load(a + o, 48), v128.load(b + o, 48)));
  }
  return hsum(f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)));
}

/**
 * o[0..n) = Σ_p w[p]·v[p·stride + 0..n) for n a multiple of 16: 16 dims (four accumulators) per
 * pass over the positions, so each value row segment is read once and the weights splat once
 * per pass.
 */
function weightedSum(o: usize, v: usize, stride: usize, w: usize, nPos: i32, n: i32): void {
  for (let d = 0; d < n; d += 16) {
    const vd = v + (<usize>d << 2);
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    for (let p = 0; p < nPos; p++) {
      const r = vd + <usize>p * stride;
      const s = v128.load32_splat(w + (<usize>p << 2));
      a0 = f32x4.add(a0, f32x4.mul(v128.load(r), s));
      a1 = f32x4.add(a1, f32x4.mul(v128.load(r, 16), s));
      a2 = f32x4.add(a2, f32x4.mul(v128.load(r, 32), s));
      a3 = f32x4.add(a3, f32x4.mul(v128.load(r, 48), s));
    }
    const od = o + (<usize>d << 2);
    v128.store(od, a0); v128.store(od, a1, 16); v128.store(od, a2, 32); v128.store(od, a3, 48);
  }
}

/** out[i] = a[i] + b[i] for i < n (residual connections); out may alias a or b. */
export function add(out: usize, a: usize, b: usize, n: i32): void {
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const o = <usize>i << 2;
    v128.store(out + o, f32x4.add(v128.load(a + o), v128.load(b + o)));
  }
  for (; i < n; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, load<f32>(a + o) + load<f32>(b + o));
  }
}

/**
 * One query token (decode) against nPos cached positions, heads [h0, h1): the K and V rows are
 * each read once, front to back, for all these heads together (sequential streaming instead of
 * one strided pass per head, which left the loop waiting on memory). scores: (h1 − h0)·nPos f32.
 */
function attentionOne(out: usize, q: usize, k: usize, v: usize, nPos: i32, nHead: i32, group: i32, headDim: i32,
  rowB: usize, scale: f32, h0: i32, h1: i32, scores: usize): void {
  const hb = <usize>headDim << 2;
  const sb = <usize>nPos << 2;
  for (let p = 0; p < nPos; p++) {
    const kr = k + <usize>p * rowB;
    for (let h = h0; h < h1; h++) {
      store<f32>(scores + <usize>(h - h0) * sb + (<usize>p << 2), dot16s(kr + <usize>(h / group) * hb, q + <usize>h * hb, headDim) * scale);
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
      const src = vr + <usize>(h / group) * hb, dst = out + <usize>h * hb;
      for (let d: usize = 0; d < hb; d += 64) {
        v128.store(dst + d, f32x4.add(v128.load(dst + d), f32x4.mul(v128.load(src + d), s)));
        v128.store(dst + d, f32x4.add(v128.load(dst + d, 16), f32x4.mul(v128.load(src + d, 16), s)), 16);
        v128.store(dst + d, f32x4.add(v128.load(dst + d, 32), f32x4.mul(v128.load(src + d, 32), s)), 32);
        v128.store(dst + d, f32x4.add(v128.load(dst + d, 48), f32x4.mul(v128.load(src + d, 48), s)), 48);
      }
    }
  }
}
