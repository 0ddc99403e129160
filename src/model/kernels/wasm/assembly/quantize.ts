// The K-quant row quantizers (Q4_K, Q6_K) for `tokenloop quantize` and `synth`, compiled to their
// own small module (build/tokenloop-quantize.wasm): the inference kernels never load it. The same
// algorithm as the TypeScript reference (src/model/kernels/quant/quantize-k.ts, which documents
// it) and ggml's quantize_row_q4_K_ref / quantize_row_q6_K_ref: scalar f32 arithmetic in C's
// order, each operation rounded to f32 (wasm has no implicit fused multiply-add), f32.nearest for
// ggml's round-to-nearest-even, so the bytes equal both. No SIMD: vector sums would change the
// order of the f32 additions and with it the chosen scales.
//
// Memory (imported, shared: worker threads run the same module over it, each on its own run of
// super-blocks with its own scratch): the host passes the input (n f32), the output and a
// SCRATCH_BYTES scratch area; the module allocates nothing.

const QK: i32 = 256;
/** Sub-blocks whose largest magnitude is below this are all zero (ggml's GROUP_MAX_EPS). */
const EPS: f32 = 1e-15;
/** Bytes of scratch a call needs. */
const SCRATCH_BYTES: i32 = 2048;

// scratch layout (bytes)
const S_L: usize = 0; // 256 quants (u8 for Q4_K, i8 + offset for Q6_K)
const S_AUX: usize = 256; // 32 candidate quants
const S_W: usize = 320; // 32 f32 weights
const S_SCALES: usize = 448; // 16 f32
const S_MINS: usize = 512; // 8 f32

export function heapBase(): usize {
  return (__heap_base + 63) & ~63;
}

export function scratchBytes(): i32 {
  return SCRATCH_BYTES;
}

@inline function nearestInt(v: f32): i32 {
  return <i32>nearest<f32>(v);
}

/** JavaScript's truthiness of a number (neither 0 nor NaN), which the reference tests. */
@inline function truthy(v: f32): bool {
  return v == v && v != 0;
}

@inline function clampI(v: i32, lo: i32, hi: i32): i32 {
  return v < lo ? lo : v > hi ? hi : v;
}

/** f32 → f16 bits, round to nearest even (as F16C's vcvtps2ph and format/dtypes.ts f32ToF16). */
function f32ToF16(v: f32): u32 {
  const x = reinterpret<u32>(v);
  const sign = (x >>> 16) & 0x8000;
  const exp = <i32>((x >>> 23) & 0xff);
  let mant = x & 0x7fffff;
  if (exp == 0xff) return sign | 0x7c00 | (mant != 0 ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = <u32>(14 - e);
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half: u32 = 1 << (shift - 1);
    if (rem > half || (rem == half && (h & 1) != 0)) h++;
    return sign | h;
  }
  let h = (<u32>e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1) != 0)) h++; // may carry into the exponent: still correct
  return sign | h;
}

/** f16 bits → f32 (exact). */
function f16ToF32(h: u32): f32 {
  const sign: u32 = (h & 0x8000) << 16;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp == 0) {
    const m = <f32>mant * reinterpret<f32>(0x33800000); // mant · 2^−24
    return sign != 0 ? -m : m;
  }
  if (exp == 31) return reinterpret<f32>(sign | 0x7f800000 | (mant << 13));
  return reinterpret<f32>(sign | ((exp + 112) << 23) | (mant << 13));
}

/** Store v as f16 at p; returns the stored value as a decoder reads it. */
@inline function putF16(p: usize, v: f32): f32 {
  const h = f32ToF16(v);
  store<u16>(p, <u16>h);
  return f16ToF32(h);
}

/**
 * make_qkx2_quants over n values at x with weights w: (scale, min) minimising Σw·(scale·q − min − x)²,
 * q ∈ [0, nmax], over nstep + 1 candidate quantisations; L receives q. Returns scale; the min (as a
 * positive offset, x ≈ scale·q − min) goes to scratch S_MINS slot `slot`.
 */
function scaleMinQk(x: usize, w: usize, n: i32, nmax: i32, L: usize, aux: usize, rmin: f32, rdelta: f32, nstep: i32, mins: usize): f32 {
  let min = load<f32>(x), max = min;
  let sumW = load<f32>(w), sumX = sumW * min;
  for (let i = 1; i < n; i++) {
    const v = load<f32>(x + (<usize>i << 2));
    if (v < min) min = v;
    if (v > max) max = v;
    const wi = load<f32>(w + (<usize>i << 2));
    sumW = sumW + wi;
    sumX = sumX + wi * v;
  }
  if (min > 0) min = 0;
  if (max == min) {
    memory.fill(L, 0, n);
    store<f32>(mins, -min);
    return 0;
  }
  let iscale = <f32>nmax / (max - min);
  let scale: f32 = <f32>1 / iscale;
  let bestErr: f32 = 0;
  for (let i = 0; i < n; i++) {
    const v = load<f32>(x + (<usize>i << 2));
    const l = clampI(nearestInt(iscale * (v - min)), 0, nmax);
    store<u8>(L + i, <u8>l);
    const diff = (scale * <f32>l + min) - v;
    bestErr = bestErr + load<f32>(w + (<usize>i << 2)) * (diff * diff);
  }
  for (let is = 0; is <= nstep; is++) {
    // (max − min with the best candidate's min so far, as ggml does)
    iscale = ((rmin + rdelta * <f32>is) + <f32>nmax) / (max - min);
    let sumL: f32 = 0, sumL2: f32 = 0, sumXL: f32 = 0;
    for (let i = 0; i < n; i++) {
      const v = load<f32>(x + (<usize>i << 2));
      const l = clampI(nearestInt(iscale * (v - min)), 0, nmax);
      store<u8>(aux + i, <u8>l);
      const wl = load<f32>(w + (<usize>i << 2)) * <f32>l;
      sumL = sumL + wl;
      sumL2 = sumL2 + wl * <f32>l;
      sumXL = sumXL + wl * v;
    }
    const D = sumW * sumL2 - sumL * sumL;
    if (D > 0) {
      let thisScale = (sumW * sumXL - sumX * sumL) / D;
      let thisMin = (sumL2 * sumX - sumL * sumXL) / D;
      if (thisMin > 0) { thisMin = 0; thisScale = sumXL / sumL2; }
      let err: f32 = 0;
      for (let i = 0; i < n; i++) {
        const diff = (thisScale * <f32>load<u8>(aux + i) + thisMin) - load<f32>(x + (<usize>i << 2));
        err = err + load<f32>(w + (<usize>i << 2)) * (diff * diff);
      }
      if (err < bestErr) {
        memory.copy(L, aux, n);
        bestErr = err; scale = thisScale; min = thisMin;
      }
    }
  }
  store<f32>(mins, -min);
  return scale;
}

/** x[0..n) (f32 at x) → Q4_K super-blocks at out (144 bytes per 256 values). */
export function quantizeQ4K(x: usize, out: usize, n: i32, scratch: usize): void {
  const L = scratch + S_L, aux = scratch + S_AUX, w = scratch + S_W, scales = scratch + S_SCALES, mins = scratch + S_MINS;
  for (let b = 0; b < n / QK; b++) {
    const xb = x + (<usize>(b * QK) << 2), o = out + <usize>(b * 144);
    memory.fill(o, 0, 144);
    let maxScale: f32 = 0, maxMin: f32 = 0;
    for (let j = 0; j < 8; j++) {
      const xs = xb + (<usize>(32 * j) << 2);
      let sumX2: f32 = 0;
      for (let l = 0; l < 32; l++) { const v = load<f32>(xs + (<usize>l << 2)); sumX2 = sumX2 + v * v; }
      const av = Mathf.sqrt(sumX2 / 32);
      for (let l = 0; l < 32; l++) store<f32>(w + (<usize>l << 2), av + Mathf.abs(load<f32>(xs + (<usize>l << 2))));
      const s = scaleMinQk(xs, w, 32, 15, L + 32 * j, aux, -1, 0.1, 20, mins + (<usize>j << 2));
      const m = load<f32>(mins + (<usize>j << 2));
      store<f32>(scales + (<usize>j << 2), s);
      if (s > maxScale) maxScale = s;
      if (m > maxMin) maxMin = m;
    }
    const invScale: f32 = maxScale > 0 ? <f32>63 / maxScale : 0, invMin: f32 = maxMin > 0 ? <f32>63 / maxMin : 0;
    const sc = o + 4;
    for (let j = 0; j < 8; j++) {
      const ls = min<i32>(63, nearestInt(invScale * load<f32>(scales + (<usize>j << 2))) & 0xff);
      const lm = min<i32>(63, nearestInt(invMin * load<f32>(mins + (<usize>j << 2))) & 0xff);
      // 6-bit scale/min pairs: j < 4 in bytes j and j+4; j ≥ 4 low nibbles in byte j+4, high bits in bytes j−4 / j
      if (j < 4) { store<u8>(sc + j, <u8>ls); store<u8>(sc + j + 4, <u8>lm); }
      else {
        store<u8>(sc + j + 4, <u8>((ls & 0xf) | ((lm & 0xf) << 4)));
        store<u8>(sc + j - 4, load<u8>(sc + j - 4) | <u8>((ls >> 4) << 6));
        store<u8>(sc + j, load<u8>(sc + j) | <u8>((lm >> 4) << 6));
      }
    }
    const d = putF16(o, maxScale / 63), dmin = putF16(o + 2, maxMin / 63);
    for (let j = 0; j < 8; j++) {
      let s6: i32, m6: i32;
      if (j < 4) { s6 = load<u8>(sc + j) & 63; m6 = load<u8>(sc + j + 4) & 63; }
      else {
        s6 = (load<u8>(sc + j + 4) & 0xf) | ((load<u8>(sc + j - 4) >> 6) << 4);
        m6 = (load<u8>(sc + j + 4) >> 4) | ((load<u8>(sc + j) >> 6) << 4);
      }
      const dj = d * <f32>s6;
      if (!truthy(dj)) continue;
      const dm = dmin * <f32>m6;
      const xs = xb + (<usize>(32 * j) << 2);
      for (let i = 0; i < 32; i++) store<u8>(L + 32 * j + i, <u8>clampI(nearestInt((load<f32>(xs + (<usize>i << 2)) + dm) / dj), 0, 15));
    }
    // qs: bytes 32k..32k+31 hold elements 64k+l (low nibble) and 64k+32+l (high nibble)
    for (let k = 0; k < 4; k++) {
      for (let l = 0; l < 32; l++) store<u8>(o + 16 + 32 * k + l, load<u8>(L + 64 * k + l) | (load<u8>(L + 64 * k + 32 + l) << 4));
    }
  }
}

/**
 * make_qx_quants (rmse_type 1) over n values at x: the signed scale minimising Σx²·(x − s·q)², q ∈
 * [−nmax, nmax − 1]; L receives q + nmax.
 */
function scaleQx(x: usize, n: i32, nmax: i32, L: usize): f32 {
  let max: f32 = 0, amax: f32 = 0;
  for (let i = 0; i < n; i++) {
    const v = load<f32>(x + (<usize>i << 2)), ax = Mathf.abs(v);
    if (ax > amax) { amax = ax; max = v; }
  }
  if (amax < EPS) { memory.fill(L, 0, n); return 0; }
  let iscale = <f32>(-nmax) / max;
  let sumlx: f32 = 0, suml2: f32 = 0;
  for (let i = 0; i < n; i++) {
    const v = load<f32>(x + (<usize>i << 2));
    const l = clampI(nearestInt(iscale * v), -nmax, nmax - 1);
    store<u8>(L + i, <u8>(nmax + l));
    const w = v * v;
    sumlx = sumlx + (w * v) * <f32>l;
    suml2 = suml2 + (w * <f32>l) * <f32>l;
  }
  let scale: f32 = truthy(suml2) ? sumlx / suml2 : 0;
  let best = scale * sumlx;
  for (let is = -9; is <= 9; is++) {
    if (is == 0) continue;
    iscale = -(<f32>nmax + <f32>0.1 * <f32>is) / max;
    sumlx = 0; suml2 = 0;
    for (let i = 0; i < n; i++) {
      const v = load<f32>(x + (<usize>i << 2));
      const l = clampI(nearestInt(iscale * v), -nmax, nmax - 1);
      const w = v * v;
      sumlx = sumlx + (w * v) * <f32>l;
      suml2 = suml2 + (w * <f32>l) * <f32>l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (let i = 0; i < n; i++) store<u8>(L + i, <u8>(nmax + clampI(nearestInt(iscale * load<f32>(x + (<usize>i << 2))), -nmax, nmax - 1)));
      scale = sumlx / suml2; best = scale * sumlx;
    }
  }
  return scale;
}

/** x[0..n) (f32 at x) → Q6_K super-blocks at out (210 bytes per 256 values). */
export function quantizeQ6K(x: usize, out: usize, n: i32, scratch: usize): void {
  const L = scratch + S_L, scales = scratch + S_SCALES;
  for (let b = 0; b < n / QK; b++) {
    const xb = x + (<usize>(b * QK) << 2), o = out + <usize>(b * 210);
    memory.fill(o, 0, 210);
    let maxScale: f32 = 0, maxAbs: f32 = 0;
    for (let ib = 0; ib < 16; ib++) {
      const s = scaleQx(xb + (<usize>(16 * ib) << 2), 16, 32, L + 16 * ib);
      store<f32>(scales + (<usize>ib << 2), s);
      if (Mathf.abs(s) > maxAbs) { maxAbs = Mathf.abs(s); maxScale = s; }
    }
    if (maxAbs < EPS) continue; // an all-zero super-block: all bytes 0 (d = 0)
    const iscale = <f32>(-128) / maxScale;
    const d = putF16(o + 208, <f32>1 / iscale);
    for (let ib = 0; ib < 16; ib++) store<u8>(o + 192 + ib, <u8>min<i32>(127, nearestInt(iscale * load<f32>(scales + (<usize>ib << 2)))));
    for (let j = 0; j < 16; j++) {
      const sc = <i32>load<i8>(o + 192 + j);
      const dj = d * <f32>sc;
      if (!truthy(dj)) continue;
      const xs = xb + (<usize>(16 * j) << 2);
      for (let i = 0; i < 16; i++) store<u8>(L + 16 * j + i, <u8>(clampI(nearestInt(load<f32>(xs + (<usize>i << 2)) / dj), -32, 31) + 32));
    }
    // ql: low nibbles of elements l and l+64 (bytes 0..31 of each half), l+32 and l+96 (32..63);
    // qh: the two high bits of l, l+32, l+64, l+96 in one byte
    for (let h = 0; h < 2; h++) {
      const j = 128 * h, ql = o + 64 * h, qh = o + 128 + 32 * h;
      for (let l = 0; l < 32; l++) {
        const q1 = <u32>load<u8>(L + j + l), q2 = <u32>load<u8>(L + j + l + 32), q3 = <u32>load<u8>(L + j + l + 64), q4 = <u32>load<u8>(L + j + l + 96);
        store<u8>(ql + l, <u8>((q1 & 0xf) | ((q3 & 0xf) << 4)));
        store<u8>(ql + l + 32, <u8>((q2 & 0xf) | ((q4 & 0xf) << 4)));
        store<u8>(qh + l, <u8>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6)));
      }
    }
  }
}
