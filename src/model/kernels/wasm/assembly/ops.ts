// Non-matmul kernels: RMSNorm, RoPE, SwiGLU, GELU, softmax, residual add (attention: attention.ts).
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

/** rmsnorm over `rows` consecutive rows of n f32 (out and x advance n values per row; w shared). */
export function rmsnormRows(out: usize, x: usize, w: usize, n: i32, rows: i32, eps: f32): void {
  const rb = <usize>n << 2;
  for (let r = 0; r < rows; r++) rmsnorm(out + <usize>r * rb, x + <usize>r * rb, w, n, eps);
}

/** In-place softmax of n f32 at x (max-subtracted; vector exp, see simd.ts exp4). */
export function softmax(x: usize, n: i32): void {
  const sum = expSum(x, n);
  const inv = f32x4.splat(1 / sum);
  let i = 0;
  for (; i + 4 <= n; i += 4) v128.store(x + (<usize>i << 2), f32x4.mul(v128.load(x + (<usize>i << 2)), inv));
  for (; i < n; i++) store<f32>(x + (<usize>i << 2), load<f32>(x + (<usize>i << 2)) * (1 / sum));
}

/**
 * x[i] ← exp(x[i] − max x) for n f32, in place; returns Σ (softmax before its normalization:
 * attention scales its weighted sum by 1/Σ once instead).
 */
export function expSum(x: usize, n: i32): f32 {
  return expSumAt(x, n, 0);
}

/**
 * expSum, storing max x at ml and the returned Σ at ml + 4 (attention's segments); `scaled`: each
 * e^(x − max) is stored times 2^112 (the factor an f16 cache's values lack, see attention.ts),
 * exactly, while Σ is of the unscaled values.
 */
export function expSumMax(x: usize, n: i32, ml: usize, scaled: bool): void {
  if (scaled) expSumAt(x, n, ml, true);
  else expSumAt(x, n, ml, false);
}

/** The body of expSum and expSumMax (ml = 0: store nothing). */
// @ts-ignore: decorator
@inline function expSumAt(x: usize, n: i32, ml: usize, scaled: bool = false): f32 {
  const k = f32x4.splat(5.192296858534828e+33); // 2^112
  let m4 = f32x4.splat(-Infinity);
  let i = 0;
  for (; i + 4 <= n; i += 4) m4 = f32x4.pmax(m4, v128.load(x + (<usize>i << 2))); // pmax: one maxps; a NaN still reaches the sum
  let mx: f32 = max(max(f32x4.extract_lane(m4, 0), f32x4.extract_lane(m4, 1)), max(f32x4.extract_lane(m4, 2), f32x4.extract_lane(m4, 3)));
  for (; i < n; i++) mx = max(mx, load<f32>(x + (<usize>i << 2)));
  const mv = f32x4.splat(mx);
  let s4 = f32x4.splat(0);
  i = 0;
  for (; i + 4 <= n; i += 4) {
    const p = x + (<usize>i << 2);
    const e = exp4(f32x4.sub(v128.load(p), mv));
    v128.store(p, scaled ? f32x4.mul(e, k) : e);
    s4 = f32x4.add(s4, e);
  }
  let sum: f32 = (f32x4.extract_lane(s4, 0) + f32x4.extract_lane(s4, 1)) + (f32x4.extract_lane(s4, 2) + f32x4.extract_lane(s4, 3));
  for (; i < n; i++) {
    const p = x + (<usize>i << 2);
    const e = f32x4.extract_lane(exp4(f32x4.splat(load<f32>(p) - mx)), 0);
    store<f32>(p, scaled ? e * f32x4.extract_lane(k, 0) : e);
    sum += e;
  }
  if (ml != 0) { store<f32>(ml, mx); store<f32>(ml, sum, 4); }
  return sum;
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
 * Rotary embedding of nTok rows of nHeads·headDim f32 at x, in place, from precomputed tables:
 * row t rotates its first nRot dims per head by cos/sin[t·nRot/2 + i] (adjacent pairs, or with
 * `neox` the halves i, i + nRot/2). Arithmetic in f64 rounded once to f32, as the TypeScript
 * kernel (src/model/kernels/rope.ts ropeApply) does in JavaScript numbers: the same bits.
 */
export function ropeRows(x: usize, nTok: i32, nHeads: i32, headDim: i32, nRot: i32, cos: usize, sin: usize, neox: bool): void {
  const half = nRot >> 1, h2 = half & ~1;
  for (let t = 0; t < nTok; t++) {
    const cs = <usize>(t * half) << 2;
    for (let h = 0; h < nHeads; h++) {
      const b = x + (<usize>((t * nHeads + h) * headDim) << 2);
      // two pairs at a time in f64x2 lanes (the products of two f32 are exact in f64, so the
      // lanes round exactly as the scalar steps below), then a last odd pair
      let i = 0;
      for (; i < h2; i += 2) {
        const c = f64x2.promote_low_f32x4(v128.load64_zero(cos + cs + (<usize>i << 2)));
        const s = f64x2.promote_low_f32x4(v128.load64_zero(sin + cs + (<usize>i << 2)));
        let x0: v128, x1: v128;
        if (neox) {
          x0 = f64x2.promote_low_f32x4(v128.load64_zero(b + (<usize>i << 2)));
          x1 = f64x2.promote_low_f32x4(v128.load64_zero(b + (<usize>(i + half) << 2)));
        } else {
          const v = v128.load(b + (<usize>i << 3)); // x0 x1 of pair i, then of pair i + 1
          x0 = f64x2.promote_low_f32x4(v128.shuffle<f32>(v, v, 0, 2, 0, 2));
          x1 = f64x2.promote_low_f32x4(v128.shuffle<f32>(v, v, 1, 3, 1, 3));
        }
        const r0 = f32x4.demote_f64x2_zero(f64x2.sub(f64x2.mul(x0, c), f64x2.mul(x1, s)));
        const r1 = f32x4.demote_f64x2_zero(f64x2.add(f64x2.mul(x0, s), f64x2.mul(x1, c)));
        if (neox) {
          v128.store64_lane(b + (<usize>i << 2), r0, 0);
          v128.store64_lane(b + (<usize>(i + half) << 2), r1, 0);
        } else {
          v128.store(b + (<usize>i << 3), v128.shuffle<f32>(r0, r1, 0, 4, 1, 5));
        }
      }
      for (; i < half; i++) {
        const pa = b + (<usize>(neox ? i : 2 * i) << 2), pb = neox ? pa + (<usize>half << 2) : pa + 4;
        const c = <f64>load<f32>(cos + cs + (<usize>i << 2)), s = <f64>load<f32>(sin + cs + (<usize>i << 2));
        const x0 = <f64>load<f32>(pa), x1 = <f64>load<f32>(pb);
        store<f32>(pa, <f32>(x0 * c - x1 * s));
        store<f32>(pb, <f32>(x0 * s + x1 * c));
      }
    }
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
