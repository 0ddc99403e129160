/**
 * Reference row quantizers for the K-quants Q4_K and Q6_K (super-blocks of 256 values), following
 * ggml's `quantize_row_q4_K_ref` / `quantize_row_q6_K_ref` (ggml-quants.c, no importance matrix):
 * the same search for each sub-block's scale (and min), every intermediate rounded to f32 as C
 * does, so the bytes match llama-quantize's for the same tensor where the C compiler does not
 * fuse multiply-adds (GCC with -march=native may, which moves a few ties). Layouts as in
 * dequantize.ts.
 *
 *  Q6_K: 16 sub-blocks of 16. Per sub-block a signed scale that minimises Σx²·(x − s·q)² over
 *        q ∈ [−32, 31] (19 candidate scales around max/−32, least squares for each); the scales
 *        are stored as int8 times the super-block's f16 d = −max scale/128, then every value is
 *        re-quantized against its stored scale.
 *  Q4_K: 8 sub-blocks of 32, x ≈ s·q − m with q ∈ [0, 15] and m ≥ 0. Per sub-block (s, m)
 *        minimise Σw·(s·q − m − x)² with w = rms(sub-block) + |x| over 21 candidate
 *        quantisations (least squares for s and m each); s and m are stored as 6-bit multiples of
 *        the super-block's f16 d = max s / 63 and dmin = max m / 63, then the values are
 *        re-quantized against the stored pair.
 */
import { InvalidOptionError } from '../../../errors.js';
import { F16_TABLE, f32ToF16 } from '../../../format/dtypes.js';
import { scaleMinK4 } from './dequantize.js';

const f = Math.fround;
const QK = 256;
/** Sub-blocks whose largest magnitude is below this are all zero (ggml's GROUP_MAX_EPS). */
const EPS = f(1e-15);

function check(n: number): void {
  if (n % QK !== 0) throw new InvalidOptionError(`K-quant quantization needs a multiple of ${QK} values, got ${n}`);
}

/** Round to nearest, ties to even, as ggml's nearest_int (the 1.5·2^23 trick) does. */
function nearestInt(v: number): number {
  const r = Math.round(v);
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** Store v as f16 at out[at]; returns the stored value as the decoder reads it. */
function putF16(out: Uint8Array, at: number, v: number): number {
  const h = f32ToF16(v);
  out[at] = h & 0xff; out[at + 1] = h >> 8;
  return F16_TABLE[h]!;
}

/**
 * Signed scale for n values with quants in [−nmax, nmax − 1] minimising Σ x²·(x − s·q)² (ggml
 * make_qx_quants, rmse_type 1); L receives q + nmax.
 */
function scaleQx(x: Float32Array, x0: number, n: number, nmax: number, L: Int8Array, l0: number): number {
  let max = 0, amax = 0;
  for (let i = 0; i < n; i++) { const ax = Math.abs(x[x0 + i]!); if (ax > amax) { amax = ax; max = x[x0 + i]!; } }
  if (amax < EPS) { L.fill(0, l0, l0 + n); return 0; }
  const quant = (iscale: number, i: number) => Math.max(-nmax, Math.min(nmax - 1, nearestInt(f(iscale * x[x0 + i]!))));
  // Σ w·x·q and Σ w·q² with w = x², accumulated in f32 as C does
  const sums = (iscale: number): [number, number] => {
    let sumlx = 0, suml2 = 0;
    for (let i = 0; i < n; i++) {
      const v = x[x0 + i]!, l = quant(iscale, i), w = f(v * v);
      sumlx = f(sumlx + f(f(w * v) * l));
      suml2 = f(suml2 + f(f(w * l) * l));
    }
    return [sumlx, suml2];
  };
  let iscale = f(-nmax / max);
  let [sumlx, suml2] = sums(iscale);
  for (let i = 0; i < n; i++) L[l0 + i] = nmax + quant(iscale, i);
  let scale = suml2 ? f(sumlx / suml2) : 0;
  let best = f(scale * sumlx);
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    iscale = f(-f(nmax + f(f(0.1) * is)) / max);
    [sumlx, suml2] = sums(iscale);
    if (suml2 > 0 && f(sumlx * sumlx) > f(best * suml2)) {
      for (let i = 0; i < n; i++) L[l0 + i] = nmax + quant(iscale, i);
      scale = f(sumlx / suml2); best = f(scale * sumlx);
    }
  }
  return scale;
}

/**
 * (scale, min) for n values with quants in [0, nmax] minimising Σw·(scale·q − min − x)² over
 * nstep + 1 candidate quantisations (ggml make_qkx2_quants, squared error); L receives q.
 * Returns [scale, min] with min ≥ 0 (x ≈ scale·q − min).
 */
function scaleMinQk(x: Float32Array, x0: number, w: Float32Array, n: number, nmax: number, L: Uint8Array, l0: number,
  rmin: number, rdelta: number, nstep: number): [number, number] {
  let min = x[x0]!, max = x[x0]!;
  let sumW = w[0]!, sumX = f(sumW * x[x0]!);
  for (let i = 1; i < n; i++) {
    const v = x[x0 + i]!;
    if (v < min) min = v;
    if (v > max) max = v;
    sumW = f(sumW + w[i]!);
    sumX = f(sumX + f(w[i]! * v));
  }
  if (min > 0) min = 0;
  if (max === min) { L.fill(0, l0, l0 + n); return [0, -min]; }
  let iscale = f(nmax / f(max - min));
  let scale = f(1 / iscale);
  let bestErr = 0;
  for (let i = 0; i < n; i++) {
    const l = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(x[x0 + i]! - min)))));
    L[l0 + i] = l;
    const diff = f(f(f(scale * l) + min) - x[x0 + i]!);
    bestErr = f(bestErr + f(w[i]! * f(diff * diff)));
  }
  const aux = new Uint8Array(n);
  for (let is = 0; is <= nstep; is++) {
    iscale = f(f(f(rmin + f(rdelta * is)) + nmax) / f(max - min));
    let sumL = 0, sumL2 = 0, sumXL = 0;
    for (let i = 0; i < n; i++) {
      const v = x[x0 + i]!;
      const l = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(v - min)))));
      aux[i] = l;
      sumL = f(sumL + f(w[i]! * l));
      sumL2 = f(sumL2 + f(f(w[i]! * l) * l));
      sumXL = f(sumXL + f(f(w[i]! * l) * v));
    }
    const D = f(f(sumW * sumL2) - f(sumL * sumL));
    if (D > 0) {
      let thisScale = f(f(f(sumW * sumXL) - f(sumX * sumL)) / D);
      let thisMin = f(f(f(sumL2 * sumX) - f(sumL * sumXL)) / D);
      if (thisMin > 0) { thisMin = 0; thisScale = f(sumXL / sumL2); }
      let err = 0;
      for (let i = 0; i < n; i++) {
        const diff = f(f(f(thisScale * aux[i]!) + thisMin) - x[x0 + i]!);
        err = f(err + f(w[i]! * f(diff * diff)));
      }
      if (err < bestErr) {
        L.set(aux, l0);
        bestErr = err; scale = thisScale; min = thisMin;
      }
    }
  }
  return [scale, -min];
}

/** x[0..n) → Q6_K super-blocks (210 bytes per 256 values). */
export function quantizeQ6_K(xIn: ArrayLike<number>, n: number = xIn.length): Uint8Array {
  check(n);
  const x = Float32Array.from({ length: n }, (_, i) => xIn[i]!);
  const out = new Uint8Array((n / QK) * 210);
  const L = new Int8Array(QK);
  const scales = new Float32Array(QK / 16);
  for (let b = 0; b < n / QK; b++) {
    const x0 = b * QK, o = b * 210;
    let maxScale = 0, maxAbs = 0;
    for (let ib = 0; ib < QK / 16; ib++) {
      const s = scaleQx(x, x0 + 16 * ib, 16, 32, L, 16 * ib);
      scales[ib] = s;
      if (Math.abs(s) > maxAbs) { maxAbs = Math.abs(s); maxScale = s; }
    }
    if (maxAbs < EPS) continue; // an all-zero super-block: all bytes 0 (d = 0)
    const iscale = f(-128 / maxScale);
    const d = putF16(out, o + 208, f(1 / iscale));
    for (let ib = 0; ib < QK / 16; ib++) out[o + 192 + ib] = Math.min(127, nearestInt(f(iscale * scales[ib]!))) & 0xff;
    for (let j = 0; j < QK / 16; j++) {
      const sc = (out[o + 192 + j]! << 24) >> 24;
      const dj = f(d * sc);
      if (!dj) continue;
      for (let i = 0; i < 16; i++) L[16 * j + i] = Math.max(-32, Math.min(31, nearestInt(f(x[x0 + 16 * j + i]! / dj)))) + 32;
    }
    // ql: low nibbles of elements l and l+64 (bytes 0..31 of each half), l+32 and l+96 (32..63);
    // qh: the two high bits of l, l+32, l+64, l+96 in one byte
    for (let h = 0; h < 2; h++) {
      const j = 128 * h, ql = o + 64 * h, qh = o + 128 + 32 * h;
      for (let l = 0; l < 32; l++) {
        const q1 = L[j + l]!, q2 = L[j + l + 32]!, q3 = L[j + l + 64]!, q4 = L[j + l + 96]!;
        out[ql + l] = (q1 & 0xf) | ((q3 & 0xf) << 4);
        out[ql + l + 32] = (q2 & 0xf) | ((q4 & 0xf) << 4);
        out[qh + l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6);
      }
    }
  }
  return out;
}

/** x[0..n) → Q4_K super-blocks (144 bytes per 256 values). */
export function quantizeQ4_K(xIn: ArrayLike<number>, n: number = xIn.length): Uint8Array {
  check(n);
  const x = Float32Array.from({ length: n }, (_, i) => xIn[i]!);
  const out = new Uint8Array((n / QK) * 144);
  const L = new Uint8Array(QK), w = new Float32Array(32);
  const scales = new Float32Array(8), mins = new Float32Array(8);
  for (let b = 0; b < n / QK; b++) {
    const x0 = b * QK, o = b * 144;
    let maxScale = 0, maxMin = 0;
    for (let j = 0; j < 8; j++) {
      let sumX2 = 0;
      for (let l = 0; l < 32; l++) sumX2 = f(sumX2 + f(x[x0 + 32 * j + l]! * x[x0 + 32 * j + l]!));
      const av = f(Math.sqrt(f(sumX2 / 32)));
      for (let l = 0; l < 32; l++) w[l] = f(av + Math.abs(x[x0 + 32 * j + l]!));
      const [s, m] = scaleMinQk(x, x0 + 32 * j, w, 32, 15, L, 32 * j, -1, 0.1, 20);
      scales[j] = s; mins[j] = m;
      if (s > maxScale) maxScale = s;
      if (m > maxMin) maxMin = m;
    }
    const invScale = maxScale > 0 ? f(63 / maxScale) : 0, invMin = maxMin > 0 ? f(63 / maxMin) : 0;
    const sc = o + 4;
    for (let j = 0; j < 8; j++) {
      const ls = Math.min(63, nearestInt(f(invScale * scales[j]!)) & 0xff), lm = Math.min(63, nearestInt(f(invMin * mins[j]!)) & 0xff);
      // 6-bit scale/min pairs: j < 4 in bytes j and j+4; j ≥ 4 low nibbles in byte j+4, high bits in bytes j−4 / j
      if (j < 4) { out[sc + j] = ls; out[sc + j + 4] = lm; }
      else {
        out[sc + j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
        out[sc + j - 4] |= (ls >> 4) << 6;
        out[sc + j] |= (lm >> 4) << 6;
      }
    }
    const d = putF16(out, o, f(maxScale / 63)), dmin = putF16(out, o + 2, f(maxMin / 63));
    for (let j = 0; j < 8; j++) {
      const [s6, m6] = scaleMinK4(out, sc, j);
      const dj = f(d * s6);
      if (!dj) continue;
      const dm = f(dmin * m6);
      for (let i = 0; i < 32; i++) L[32 * j + i] = Math.max(0, Math.min(15, nearestInt(f(f(x[x0 + 32 * j + i]! + dm) / dj))));
    }
    // qs: bytes 32k..32k+31 hold elements 64k+l (low nibble) and 64k+32+l (high nibble)
    for (let k = 0; k < 4; k++) for (let l = 0; l < 32; l++) out[o + 16 + 32 * k + l] = L[64 * k + l]! | (L[64 * k + 32 + l]! << 4);
  }
  return out;
}
