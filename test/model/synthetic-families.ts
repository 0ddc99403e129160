/**
 * Seeded synthetic GGUFs for every family, with the float64 reference config of synthetic.ts:
 * one file per family shape (qwen3, stablelm incl. the 12B per-head Q/K norms, starcoder2, olmo2,
 * internlm2, llama with YaRN and F16 weights, phi3 with LongRoPE factors and a fused QKV / gate-up).
 */
import { GGMLType } from '../../src/format/dtypes.js';
import type { MetaValue, ModelFile } from '../../src/format/model-file.js';
import { buildModel, type RefConfig, type TensorDef } from './synthetic.js';

/** Sizes and wiring of one synthetic family model. */
export interface Shape {
  arch: string; E: number; nHead: number; nKv: number; hd: number; F: number; V: number; nLayer: number; nRot: number;
  norm: 'rms' | 'layer'; attnNorm?: boolean; qkvBias?: boolean; oBias?: boolean;
  /** 'head-per': one Q/K norm vector per head ({hd, nHead}), as StableLM-2-12B. */
  qkNorm?: 'none' | 'head' | 'head-per' | 'full';
  postNorms?: boolean; ffnNorm?: boolean; ffn?: 'gated' | 'plain' | 'fused'; fusedQkv?: boolean; output?: boolean;
  type?: GGMLType; nCtx?: number; extraMeta?: [string, MetaValue][]; extraTensors?: TensorDef[];
}

/** The tensors of a shape (fused tensors stack Q, K, V rows and gate, up rows). */
export function tensorDefs(s: Shape): TensorDef[] {
  const q = s.nHead * s.hd, kv = s.nKv * s.hd;
  const mat = (name: string, dims: number[]): TensorDef => ({ name, dims, kind: 'mat', type: s.type });
  const normDefs = (p: string, n: number): TensorDef[] => [{ name: p + '.weight', dims: [n], kind: 'norm' },
    ...(s.norm === 'layer' ? [{ name: p + '.bias', dims: [n], kind: 'bias' as const }] : [])];
  const d: TensorDef[] = [mat('token_embd.weight', [s.E, s.V]), ...normDefs('output_norm', s.E)];
  if (s.output !== false) d.push(mat('output.weight', [s.E, s.V]));
  for (let l = 0; l < s.nLayer; l++) {
    const P = `blk.${l}.`;
    if (s.attnNorm !== false) d.push(...normDefs(P + 'attn_norm', s.E));
    if (s.fusedQkv) d.push(mat(P + 'attn_qkv.weight', [s.E, q + 2 * kv]));
    else d.push(mat(P + 'attn_q.weight', [s.E, q]), mat(P + 'attn_k.weight', [s.E, kv]), mat(P + 'attn_v.weight', [s.E, kv]));
    if (s.qkvBias) d.push({ name: P + 'attn_q.bias', dims: [q], kind: 'bias' }, { name: P + 'attn_k.bias', dims: [kv], kind: 'bias' }, { name: P + 'attn_v.bias', dims: [kv], kind: 'bias' });
    if (s.qkNorm === 'head') d.push({ name: P + 'attn_q_norm.weight', dims: [s.hd], kind: 'norm' }, { name: P + 'attn_k_norm.weight', dims: [s.hd], kind: 'norm' });
    if (s.qkNorm === 'head-per') d.push({ name: P + 'attn_q_norm.weight', dims: [s.hd, s.nHead], kind: 'norm' }, { name: P + 'attn_k_norm.weight', dims: [s.hd, s.nKv], kind: 'norm' });
    if (s.qkNorm === 'full') d.push({ name: P + 'attn_q_norm.weight', dims: [q], kind: 'norm' }, { name: P + 'attn_k_norm.weight', dims: [kv], kind: 'norm' });
    d.push(mat(P + 'attn_output.weight', [q, s.E]));
    if (s.oBias) d.push({ name: P + 'attn_output.bias', dims: [s.E], kind: 'bias' });
    if (s.postNorms) d.push({ name: P + 'post_attention_norm.weight', dims: [s.E], kind: 'norm' });
    if (s.ffnNorm !== false) d.push(...normDefs(P + 'ffn_norm', s.E));
    const ffn = s.ffn ?? 'gated';
    if (ffn === 'gated') d.push(mat(P + 'ffn_gate.weight', [s.E, s.F]), mat(P + 'ffn_up.weight', [s.E, s.F]), mat(P + 'ffn_down.weight', [s.F, s.E]));
    else if (ffn === 'fused') d.push(mat(P + 'ffn_up.weight', [s.E, 2 * s.F]), mat(P + 'ffn_down.weight', [s.F, s.E]));
    else {
      d.push(mat(P + 'ffn_up.weight', [s.E, s.F]), { name: P + 'ffn_up.bias', dims: [s.F], kind: 'bias' },
        mat(P + 'ffn_down.weight', [s.F, s.E]), { name: P + 'ffn_down.bias', dims: [s.E], kind: 'bias' });
    }
    if (s.postNorms) d.push({ name: P + 'post_ffw_norm.weight', dims: [s.E], kind: 'norm' });
  }
  return [...d, ...(s.extraTensors ?? [])];
}

/** The metadata of a shape (context length 64 unless nCtx is given). */
export function metaFor(s: Shape): [string, MetaValue][] {
  const a = s.arch;
  return [
    ['general.architecture', a], [`${a}.context_length`, s.nCtx ?? 64], [`${a}.embedding_length`, s.E], [`${a}.block_count`, s.nLayer],
    [`${a}.feed_forward_length`, s.F], [`${a}.attention.head_count`, s.nHead], [`${a}.attention.head_count_kv`, s.nKv],
    [`${a}.attention.key_length`, s.hd], [`${a}.attention.value_length`, s.hd],
    [s.norm === 'rms' ? `${a}.attention.layer_norm_rms_epsilon` : `${a}.attention.layer_norm_epsilon`, 1e-5],
    [`${a}.rope.freq_base`, 10000], [`${a}.rope.dimension_count`, s.nRot], ...(s.extraMeta ?? []),
  ];
}

/** A built shape: the file, its float64 weights (fused tensors also split into q/k/v, gate/up) and reference config. */
export interface Built { file: ModelFile; w: Map<string, Float64Array>; ref: RefConfig }

/** Build `s` with `seed`; `ref` holds the reference-forward fields the shape does not determine. */
export function buildShape(s: Shape, ref: Pick<RefConfig, 'rope' | 'act' | 'parallel'> & Partial<RefConfig>, seed = 7): Built {
  const { file, w } = buildModel(metaFor(s), tensorDefs(s), seed);
  const q = s.nHead * s.hd, kv = s.nKv * s.hd;
  for (let l = 0; l < s.nLayer; l++) {
    const P = `blk.${l}.`;
    if (s.fusedQkv) {
      const f = w.get(P + 'attn_qkv.weight')!;
      w.set(P + 'attn_q.weight', f.subarray(0, q * s.E));
      w.set(P + 'attn_k.weight', f.subarray(q * s.E, (q + kv) * s.E));
      w.set(P + 'attn_v.weight', f.subarray((q + kv) * s.E, (q + 2 * kv) * s.E));
    }
    if (s.ffn === 'fused') {
      const f = w.get(P + 'ffn_up.weight')!;
      w.set(P + 'ffn_gate.weight', f.subarray(0, s.F * s.E));
      w.set(P + 'ffn_up.weight', f.subarray(s.F * s.E, 2 * s.F * s.E));
    }
  }
  const config: RefConfig = {
    nEmbd: s.E, nHead: s.nHead, nKv: s.nKv, headDim: s.hd, nFF: s.F, nLayer: s.nLayer, nVocab: s.V, norm: s.norm, eps: 1e-5,
    nRot: s.nRot, base: 10000, attnNorm: s.attnNorm !== false,
    qkNorm: s.qkNorm === 'head-per' ? 'head' : s.qkNorm ?? 'none', postNorms: s.postNorms ?? false, ffnNorm: s.ffnNorm !== false,
    ffn: s.ffn === 'plain' ? 'plain' : 'gated', output: s.output === false ? 'token_embd.weight' : 'output.weight', posEmbd: false,
    ...ref,
  };
  return { file, w, ref: config };
}

const BASE = { E: 32, nHead: 4, nKv: 2, hd: 8, F: 48, V: 500, nLayer: 2, nRot: 8 };

/** Phi-3 128k-style: fused QKV and gate/up, LongRoPE factors, original context 16 of 64, attn_factor. */
export const PHI3_LONGROPE = {
  nCtxOrig: 16,
  attnFactor: Math.sqrt(1 + Math.log(64 / 16) / Math.log(16)),
  shape(): Shape {
    return {
      arch: 'phi3', ...BASE, norm: 'rms', fusedQkv: true, ffn: 'fused',
      extraMeta: [['phi3.rope.scaling.original_context_length', 16], ['phi3.rope.scaling.attn_factor', Math.fround(this.attnFactor)]],
      extraTensors: [{ name: 'rope_factors_long.weight', dims: [4], kind: 'pos' }, { name: 'rope_factors_short.weight', dims: [4], kind: 'pos' }],
    };
  },
};

/** StableLM-2-12B-style: LayerNorm, per-head Q/K LayerNorms, partial NEOX rotary, parallel residual. */
export const STABLELM_12B: Shape = { arch: 'stablelm', ...BASE, nRot: 4, norm: 'layer', qkNorm: 'head-per', ffnNorm: false };

/**
 * One synthetic model per family shape, for checks that need only files (e.g. backend parity).
 * Their `ref` configs leave out rope scaling (llama-yarn, phi3-longrope need `angle`/`mscale`).
 */
export function synthFamilies(): { name: string; built: Built }[] {
  const neox = { rope: 'neox' as const, act: 'silu' as const, parallel: false };
  const phi = PHI3_LONGROPE.shape();
  return [
    { name: 'qwen3', built: buildShape({ arch: 'qwen3', ...BASE, hd: 16, nRot: 16, norm: 'rms', qkNorm: 'head', output: false }, neox) },
    { name: 'stablelm', built: buildShape({ arch: 'stablelm', ...BASE, nRot: 4, norm: 'layer', qkvBias: true }, neox) },
    { name: 'stablelm-12b', built: buildShape(STABLELM_12B, { ...neox, parallel: true, qkNormKind: 'layer' }) },
    { name: 'starcoder2', built: buildShape({ arch: 'starcoder2', ...BASE, norm: 'layer', qkvBias: true, oBias: true, ffn: 'plain', output: false }, { ...neox, act: 'gelu' }) },
    { name: 'olmo2', built: buildShape({ arch: 'olmo2', ...BASE, nKv: 4, norm: 'rms', attnNorm: false, qkNorm: 'full', postNorms: true, ffnNorm: false }, neox) },
    { name: 'internlm2', built: buildShape({ arch: 'internlm2', ...BASE, norm: 'rms' }, { ...neox, rope: 'norm' }) },
    { name: 'llama-yarn', built: buildShape({ arch: 'llama', ...BASE, norm: 'rms', extraMeta: [['llama.rope.scaling.type', 'yarn'], ['llama.rope.scaling.factor', 4], ['llama.rope.scaling.original_context_length', 16]] }, { ...neox, rope: 'norm' }) },
    { name: 'llama-f16', built: buildShape({ arch: 'llama', ...BASE, norm: 'rms', type: GGMLType.F16 }, { ...neox, rope: 'norm' }) },
    { name: 'phi3-longrope', built: buildShape(phi, neox) },
  ];
}
