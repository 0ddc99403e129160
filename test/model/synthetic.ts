/**
 * Test helpers: small GGUF models with seeded random weights, built in memory with the project's
 * GGUF writer and read back with its parser, plus a float64 reference forward pass written
 * directly from ../shared/reference/architectures/README.md (it shares no code with the engine).
 */
import { encodeGGUF } from '../../src/format/gguf-writer.js';
import { parseGGUF } from '../../src/format/gguf.js';
import { GGMLType, f32ToF16, f16ToF32, f32ToBf16, bf16ToF32 } from '../../src/format/dtypes.js';
import type { MetaValue, ModelFile } from '../../src/format/model-file.js';

/** Seeded normal samples (mulberry32 + Box–Muller). */
export function normalRng(seed: number): () => number {
  let a = seed >>> 0;
  const u = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(u() + 1e-12)) * Math.cos(2 * Math.PI * u());
}

export type Kind = 'mat' | 'norm' | 'bias' | 'pos';
export interface TensorDef { name: string; dims: number[]; kind: Kind; type?: GGMLType }

/** A model file plus the exact (type-rounded) weights as float64, by tensor name. */
export interface Synthetic { file: ModelFile; w: Map<string, Float64Array> }

/** Build a GGUF in memory: weights drawn like the shared references (matrices N(0, 0.08), norms 1 + 0.1·N, biases 0.05·N). */
export function buildModel(meta: [string, MetaValue][], defs: TensorDef[], seed: number): Synthetic {
  const rnd = normalRng(seed);
  const w = new Map<string, Float64Array>();
  const tensors = defs.map((d) => {
    const n = d.dims.reduce((a, b) => a * b, 1);
    const type = d.type ?? GGMLType.F32;
    const vals = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const z = rnd();
      vals[i] = d.kind === 'mat' ? 0.08 * z : d.kind === 'norm' ? 1 + 0.1 * z : d.kind === 'pos' ? 1 + 0.5 * Math.abs(z) : 0.05 * z;
    }
    let data: Uint8Array;
    if (type === GGMLType.F32) {
      const f = new Float32Array(vals);
      for (let i = 0; i < n; i++) vals[i] = f[i]!;
      data = new Uint8Array(f.buffer);
    } else {
      const h = new Uint16Array(n);
      for (let i = 0; i < n; i++) {
        h[i] = type === GGMLType.F16 ? f32ToF16(vals[i]!) : f32ToBf16(vals[i]!);
        vals[i] = type === GGMLType.F16 ? f16ToF32(h[i]!) : bf16ToF32(h[i]!);
      }
      data = new Uint8Array(h.buffer);
    }
    w.set(d.name, vals);
    return { name: d.name, dims: d.dims, type, data };
  });
  const bytes = encodeGGUF({ meta, tensors });
  const g = parseGGUF(bytes, 'synthetic');
  const file: ModelFile = { kind: 'gguf', path: 'synthetic.gguf', version: g.version, meta: g.meta, tensors: g.tensors, bytes: bytes.byteLength, buffer: bytes, loadMs: 0 };
  return { file, w };
}

/** What the reference forward computes (README formulas). */
export interface RefConfig {
  nEmbd: number; nHead: number; nKv: number; headDim: number; nFF: number; nLayer: number; nVocab: number;
  norm: 'rms' | 'layer'; eps: number;
  rope: 'norm' | 'neox' | 'none'; nRot: number; base: number;
  /** Angle for pair i at position p; default p · base^(−2i/nRot). */
  angle?: (p: number, i: number) => number;
  /** Multiplier on cos and sin (YaRN mscale). */
  mscale?: number;
  attnNorm: boolean; qkNorm: 'none' | 'head' | 'full'; postNorms: boolean;
  /** Q/K norm kind (default RMSNorm); 'head' norm weights longer than headDim hold one vector per head. */
  qkNormKind?: 'rms' | 'layer';
  ffnNorm: boolean; parallel: boolean; ffn: 'gated' | 'plain'; act: 'silu' | 'gelu';
  output: string; posEmbd: boolean;
}

const rmsN = (x: number[], w: Float64Array | undefined, eps: number) => {
  const ms = x.reduce((a, v) => a + v * v, 0) / x.length;
  return x.map((v, i) => (v / Math.sqrt(ms + eps)) * (w ? w[i]! : 1));
};
const layerN = (x: number[], w: Float64Array | undefined, b: Float64Array | undefined, eps: number) => {
  const mean = x.reduce((a, v) => a + v, 0) / x.length;
  const vr = x.reduce((a, v) => a + (v - mean) ** 2, 0) / x.length;
  return x.map((v, i) => ((v - mean) / Math.sqrt(vr + eps)) * (w ? w[i]! : 1) + (b ? b[i]! : 0));
};
const lin = (W: Float64Array, x: number[], nOut: number, b?: Float64Array) => {
  const y: number[] = [];
  for (let o = 0; o < nOut; o++) {
    let s = b ? b[o]! : 0;
    for (let i = 0; i < x.length; i++) s += W[o * x.length + i]! * x[i]!;
    y.push(s);
  }
  return y;
};

/** Logits (float64) at every position of `tokens`, recomputing the causal attention from scratch. */
export function referenceForward(c: RefConfig, w: Map<string, Float64Array>, tokens: number[]): number[][] {
  const g = (n: string) => w.get(n);
  const norm = (x: number[], p: string) => (c.norm === 'rms' ? rmsN(x, g(p + '.weight'), c.eps) : layerN(x, g(p + '.weight'), g(p + '.bias'), c.eps));
  const T = tokens.length, E = c.nEmbd, hd = c.headDim;
  let xs = tokens.map((t, p) => {
    const e = Array.from(g('token_embd.weight')!.subarray(t * E, (t + 1) * E));
    if (c.posEmbd) { const pe = g('position_embd.weight')!; for (let i = 0; i < E; i++) e[i]! += pe[p * E + i]!; }
    return e;
  });
  const rot = (v: number[], p: number) => {
    if (c.rope === 'none') return v;
    const out = v.slice();
    for (let h = 0; h < v.length / hd; h++) {
      for (let i = 0; i < c.nRot / 2; i++) {
        const th = c.angle ? c.angle(p, i) : p * Math.pow(c.base, (-2 * i) / c.nRot);
        const ms = c.mscale ?? 1;
        const a: number = c.rope === 'neox' ? h * hd + i : h * hd + 2 * i;
        const b = c.rope === 'neox' ? a + c.nRot / 2 : a + 1;
        out[a] = (v[a]! * Math.cos(th) - v[b]! * Math.sin(th)) * ms;
        out[b] = (v[a]! * Math.sin(th) + v[b]! * Math.cos(th)) * ms;
      }
    }
    return out;
  };
  const act = (v: number) => (c.act === 'silu' ? v / (1 + Math.exp(-v)) : 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3))));
  for (let l = 0; l < c.nLayer; l++) {
    const P = `blk.${l}.`;
    const hs = xs.map((x) => (c.attnNorm ? norm(x, P + 'attn_norm') : x));
    const qs: number[][] = [], ks: number[][] = [], vs: number[][] = [];
    hs.forEach((h, p) => {
      let q = lin(g(P + 'attn_q.weight')!, h, c.nHead * hd, g(P + 'attn_q.bias'));
      let k = lin(g(P + 'attn_k.weight')!, h, c.nKv * hd, g(P + 'attn_k.bias'));
      const v = lin(g(P + 'attn_v.weight')!, h, c.nKv * hd, g(P + 'attn_v.bias'));
      if (c.qkNorm === 'full') { q = rmsN(q, g(P + 'attn_q_norm.weight'), c.eps); k = rmsN(k, g(P + 'attn_k_norm.weight'), c.eps); }
      if (c.qkNorm === 'head') {
        const qkN = (u: number[], wn: Float64Array) => (c.qkNormKind === 'layer' ? layerN(u, wn, undefined, c.eps) : rmsN(u, wn, c.eps));
        const wHead = (wn: Float64Array, i: number) => (wn.length > hd ? wn.subarray(i, i + hd) : wn);
        const per = (u: number[], wn: Float64Array) => u.flatMap((_, i) => (i % hd === 0 ? qkN(u.slice(i, i + hd), wHead(wn, i)) : []));
        q = per(q, g(P + 'attn_q_norm.weight')!); k = per(k, g(P + 'attn_k_norm.weight')!);
      }
      qs.push(rot(q, p)); ks.push(rot(k, p)); vs.push(v);
    });
    xs = xs.map((x, p) => {
      const att: number[] = [];
      for (let h = 0; h < c.nHead; h++) {
        const kh = Math.floor(h / (c.nHead / c.nKv));
        const sc: number[] = [];
        for (let j = 0; j <= p; j++) {
          let s = 0;
          for (let i = 0; i < hd; i++) s += qs[p]![h * hd + i]! * ks[j]![kh * hd + i]!;
          sc.push(s / Math.sqrt(hd));
        }
        const mx = Math.max(...sc);
        const e = sc.map((s) => Math.exp(s - mx));
        const z = e.reduce((a, b) => a + b, 0);
        for (let i = 0; i < hd; i++) att.push(e.reduce((a, pj, j) => a + (pj / z) * vs[j]![kh * hd + i]!, 0));
      }
      let a = lin(g(P + 'attn_output.weight')!, att, E, g(P + 'attn_output.bias'));
      if (c.postNorms) a = rmsN(a, g(P + 'post_attention_norm.weight'), c.eps);
      const x1 = x.map((v, i) => v + a[i]!);
      const fin = c.ffnNorm ? norm(x1, P + 'ffn_norm') : c.parallel ? hs[p]! : x1;
      let f: number[];
      if (c.ffn === 'gated') {
        const gt = lin(g(P + 'ffn_gate.weight')!, fin, c.nFF), up = lin(g(P + 'ffn_up.weight')!, fin, c.nFF);
        f = lin(g(P + 'ffn_down.weight')!, gt.map((v, i) => act(v) * up[i]!), E);
      } else {
        const up = lin(g(P + 'ffn_up.weight')!, fin, c.nFF, g(P + 'ffn_up.bias'));
        f = lin(g(P + 'ffn_down.weight')!, up.map(act), E, g(P + 'ffn_down.bias'));
      }
      if (c.postNorms) f = rmsN(f, g(P + 'post_ffw_norm.weight'), c.eps);
      return x1.map((v, i) => v + f[i]!);
    });
  }
  return xs.map((x) => lin(g(c.output)!, norm(x, 'output_norm'), c.nVocab));
}
