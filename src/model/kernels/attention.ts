/**
 * Causal scaled dot-product attention (Vaswani et al. 2017) over a KV cache, with grouped-query
 * heads (Ainslie et al. 2023: query head h reads KV head ⌊h / (nHead/nHeadKv)⌋), an optional
 * sliding window (key j visible from query i iff i − window < j ≤ i) and optional score
 * soft-capping (Gemma 2: s ← cap·tanh(s/cap)). Softmax runs in f32 storage, double arithmetic.
 */

import { F16_TABLE } from '../../format/dtypes.js';
import { kvHalfSlot, kvIndex, kvSpan } from '../../kv/cache.js';

let acc = new Float64Array(0);
let kHalf: Float32Array = new Float32Array(0), vHalf: Float32Array = new Float32Array(0);

/** The first n values of an f16 cache as f32, in the f32 cache's layout (kvHalfSlot; into a reused buffer). */
function fromHalf(src: Uint16Array, n: number, headDim: number, buf: Float32Array): Float32Array {
  const out = buf.length >= n ? buf : new Float32Array(Math.max(n, 2 * buf.length));
  for (let i = 0; i < n; i++) out[i] = F16_TABLE[src[kvHalfSlot(i, headDim)]!]!;
  return out;
}

/** Shapes and options of one attention call. */
export interface AttentionShape {
  nHead: number;
  nHeadKv: number;
  headDim: number;
  /** Score multiplier applied to q·k. */
  scale: number;
  /** 0 = no window. */
  window: number;
  /** 0 = no soft-cap. */
  softcap: number;
}

/**
 * out (nTokens × nHead·headDim) = attention of q (nTokens × nHead·headDim) at positions
 * pos0.. over cached keys/values kc, vc (laid out as kv/cache.ts kvIndex says, positions
 * 0..pos0+nTokens−1 filled), f32 or f16 bits (an f16 cache is converted exactly). `scores` is
 * scratch of at least pos0+nTokens floats.
 */
export function attention(out: Float32Array, q: Float32Array, kcIn: Float32Array | Uint16Array, vcIn: Float32Array | Uint16Array,
  pos0: number, nTokens: number, s: AttentionShape, scores: Float32Array): void {
  const { nHead, nHeadKv, headDim, scale, window, softcap } = s;
  const qDim = nHead * headDim;
  const used = kvSpan(pos0 + nTokens, nHeadKv, headDim);
  if (kcIn.length < used || vcIn.length < used) throw new RangeError('attention: cache buffers do not hold the positions attended to');
  const kc = kcIn instanceof Float32Array ? kcIn : (kHalf = fromHalf(kcIn, used, headDim, kHalf));
  const vc = vcIn instanceof Float32Array ? vcIn : (vHalf = fromHalf(vcIn, used, headDim, vHalf));
  const group = nHead / nHeadKv;
  if (acc.length < headDim) acc = new Float64Array(headDim);
  // where value i of a position sits relative to its value 0 (the cache's tiles/columns, kv/cache.ts)
  const kStep = Array.from({ length: headDim }, (_, i) => kvIndex(true, 0, 0, i, nHeadKv, headDim));
  const vStep = Array.from({ length: headDim }, (_, i) => kvIndex(false, 0, 0, i, nHeadKv, headDim));
  const a = acc;
  for (let t = 0; t < nTokens; t++) {
    const pos = pos0 + t;
    const lo = window > 0 ? Math.max(0, pos - window + 1) : 0;
    const n = pos - lo + 1;
    for (let h = 0; h < nHead; h++) {
      const qOff = t * qDim + h * headDim;
      const kvh = Math.floor(h / group);
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        const kOff = kvIndex(true, kvh, lo + j, 0, nHeadKv, headDim);
        let d = 0;
        for (let i = 0; i < headDim; i++) d += q[qOff + i]! * kc[kOff + kStep[i]!]!;
        d *= scale;
        if (softcap > 0) d = softcap * Math.tanh(d / softcap);
        scores[j] = d;
        if (scores[j]! > max) max = scores[j]!;
      }
      let sum = 0;
      for (let j = 0; j < n; j++) { const e = Math.exp(scores[j]! - max); scores[j] = e; sum += e; }
      const inv = 1 / sum;
      const oOff = t * qDim + h * headDim;
      a.fill(0, 0, headDim);
      for (let j = 0; j < n; j++) {
        const p = scores[j]!;
        const vOff = kvIndex(false, kvh, lo + j, 0, nHeadKv, headDim);
        for (let i = 0; i < headDim; i++) a[i] += p * vc[vOff + vStep[i]!]!;
      }
      for (let i = 0; i < headDim; i++) out[oOff + i] = a[i]! * inv;
    }
  }
}
