/**
 * Builds a TransformerSpec from GGUF metadata and tensor names shared by the llama.cpp family
 * (blk.N.attn_norm, attn_q/k/v/qkv, attn_output, ffn_norm, ffn_gate/up/down, …). Each family
 * file only states how it differs: which pieces exist, are optional or required, and how the
 * block is wired.
 */
import { ContextOverflowError, InvalidOptionError, ModelFormatError, UnsupportedError } from '../errors.js';
import type { ModelFile } from '../format/model-file.js';
import { plainRope } from './kernels/rope.js';
import { toF32 } from './kernels/row.js';
import type { Weight } from './kernels/weight.js';
import { MetaReader } from './meta.js';
import type { ModelConfig } from './model.js';
import { readRope } from './rope-config.js';
import type { LayerSpec, NormKind, NormWeights, TransformerSpec } from './spec.js';
import { TensorSource } from './tensors.js';

export type Presence = 'required' | 'optional' | 'none';

/** How a family differs from the plain Llama block. Every field has the Llama default. */
export interface FamilyOptions {
  normKind?: NormKind;
  /** Pre-attention norm present (OLMo 2 has none). */
  attnNorm?: boolean;
  /** Q/K/V projections: separate tensors, one fused attn_qkv, or whichever the file has. */
  qkv?: 'separate' | 'fused' | 'either';
  qkvBias?: Presence;
  outBias?: Presence;
  qkNorm?: 'none' | 'head' | 'full';
  qkNormPresence?: Presence;
  qkNormKind?: NormKind;
  /** 'head' Q/K norms with one scale vector per head ({head_dim, n_head}; no bias), StableLM-2-12B. */
  qkNormPerHead?: boolean;
  postAttnNorm?: boolean;
  postFfnNorm?: boolean;
  ffnNorm?: Presence;
  /** gated: ffn_gate + ffn_up; fused-gated: ffn_up holds gate then up; plain: up → act → down. */
  ffn?: 'gated' | 'fused-gated' | 'plain';
  ffnBias?: Presence;
  ffnAct?: 'silu' | 'gelu';
  rope?: 'norm' | 'neox' | 'none';
  /** Require rope.dimension_count == head_dim (Llama). */
  ropeFullHead?: boolean;
  /** output.weight: required, or tied to token_embd when absent, or always tied. */
  output?: 'required' | 'optional' | 'tied';
  posEmbd?: boolean;
  embdScaleSqrt?: boolean;
  /** Score multiplier; default 1/sqrt(head_dim). */
  attnScale?: (c: ModelConfig) => number;
  /** Sliding window per layer (0 = none). */
  window?: (layer: number, meta: MetaReader) => number;
  attnSoftcap?: (meta: MetaReader) => number;
  finalSoftcap?: (meta: MetaReader) => number;
  parallelResidual?: boolean;
}

/** Options the caller of loadModel may pass through to the spec. */
export interface SpecOptions {
  /** Use exact tanh-GELU instead of ggml's F16 table (default: emulate ggml, as llama.cpp computes). */
  exactGelu?: boolean;
  /**
   * Context length the model will run with (default: the file's context_length, as llama.cpp with
   * n_ctx = 0). Caches larger than this are refused; it also picks LongRoPE's long or short
   * frequency factors (long when it exceeds rope.scaling.original_context_length).
   */
  contextLength?: number;
}

/** Read hyperparameters and tensors of `arch` into a TransformerSpec. */
export function buildStandardSpec(file: ModelFile, arch: string, o: FamilyOptions, so: SpecOptions = {}): { spec: TransformerSpec; bytes: number } {
  const meta = new MetaReader(file, arch);
  const src = new TensorSource(file, arch);
  const normKind = o.normKind ?? 'rms';
  const nEmbd = meta.int('embedding_length');
  const nLayer = meta.int('block_count');
  const nHead = meta.int('attention.head_count');
  const nHeadKv = meta.int('attention.head_count_kv', nHead);
  const nFF = meta.int('feed_forward_length');
  const nCtx = meta.int('context_length');
  const nExpert = meta.num('expert_count') ?? 0;
  if (nExpert > 0) throw new UnsupportedError(`${arch}: mixture-of-experts (${arch}.expert_count = ${nExpert}) is not supported`);
  const bad = (what: string) => new ModelFormatError(`${arch}: inconsistent metadata: ${what}`);
  if (nEmbd === 0 || nLayer === 0 || nHead === 0 || nHeadKv === 0 || nFF === 0 || nCtx === 0) throw bad('a size is zero');
  if (nHead % nHeadKv !== 0) throw bad(`head_count ${nHead} is not a multiple of head_count_kv ${nHeadKv}`);
  if (meta.num('attention.key_length') === undefined && nEmbd % nHead !== 0) throw bad(`embedding_length ${nEmbd} is not a multiple of head_count ${nHead}`);
  const headDim = meta.int('attention.key_length', nEmbd / nHead);
  const vLen = meta.int('attention.value_length', headDim);
  if (vLen !== headDim) throw bad(`value_length ${vLen} differs from key_length ${headDim}`);
  const epsKey = normKind === 'rms' ? 'attention.layer_norm_rms_epsilon' : 'attention.layer_norm_epsilon';
  const normEps = meta.float(epsKey, 1e-5);

  const embdT = file.tensors.get('token_embd.weight');
  if (!embdT) throw new ModelFormatError(`${arch}: missing tensor token_embd.weight`);
  const nVocab = embdT.dims[1] ?? 0;
  const metaVocab = meta.num('vocab_size');
  if (metaVocab !== undefined && metaVocab !== nVocab) throw bad(`vocab_size ${metaVocab} but token_embd.weight has ${nVocab} rows`);
  const tokenEmbd = src.need('token_embd.weight', [nEmbd, nVocab], 'embedding_length × vocab');

  const qDim = nHead * headDim;
  const kvDim = nHeadKv * headDim;
  const nCtxUsed = so.contextLength ?? nCtx;
  if (!Number.isInteger(nCtxUsed) || nCtxUsed <= 0) throw new InvalidOptionError(`contextLength must be a positive integer, got ${nCtxUsed}`);
  if (nCtxUsed > nCtx) throw new ContextOverflowError(`contextLength ${nCtxUsed} exceeds the model's context length ${nCtx}`);
  const config: ModelConfig = { architecture: arch, nVocab, nCtx: nCtxUsed, nEmbd, nLayer, nHead, nHeadKv, headDim, nFF };

  const ropeKind = o.rope ?? 'norm';
  let rope = null;
  if (ropeKind !== 'none') {
    const nRot = meta.int('rope.dimension_count', headDim);
    if (nRot > headDim) throw bad(`rope.dimension_count ${nRot} exceeds the head size ${headDim}`);
    if (o.ropeFullHead && nRot !== headDim) throw bad(`rope.dimension_count ${nRot} must equal the head size ${headDim}`);
    rope = readRope(meta, src, nRot, nCtx, nCtxUsed);
  }

  const qkNorm = o.qkNorm ?? 'none';
  const ffn = o.ffn ?? 'gated';
  const shapeWhy = `n_embd ${nEmbd}, ${nHead} heads, ${nHeadKv} KV heads, head_dim ${headDim}`;
  const layers: LayerSpec[] = [];
  for (let il = 0; il < nLayer; il++) {
    const p = `blk.${il}.`;
    const req = (pr: Presence | undefined) => pr === 'required';
    const vec = (name: string, n: number, pr: Presence) => (pr === 'none' ? null : src.vec(p + name, n, pr === 'required', shapeWhy));
    const attnNorm = o.attnNorm === false ? null : src.norm(p + 'attn_norm', nEmbd, true, normKind === 'layer');
    let wq: Weight | null = null, wk: Weight | null = null, wv: Weight | null = null, wqkv: Weight | null = null;
    let bq = null, bk = null, bv = null, bqkv = null;
    const qkvMode = o.qkv ?? 'separate';
    const fused = qkvMode === 'fused' || (qkvMode === 'either' && src.has(p + 'attn_qkv.weight'));
    const qkvBias = o.qkvBias ?? 'optional';
    if (fused) {
      wqkv = src.need(p + 'attn_qkv.weight', [nEmbd, qDim + 2 * kvDim], shapeWhy);
      bqkv = vec('attn_qkv.bias', qDim + 2 * kvDim, qkvBias);
    } else {
      wq = src.need(p + 'attn_q.weight', [nEmbd, qDim], shapeWhy);
      wk = src.need(p + 'attn_k.weight', [nEmbd, kvDim], shapeWhy);
      wv = src.need(p + 'attn_v.weight', [nEmbd, kvDim], shapeWhy);
      bq = vec('attn_q.bias', qDim, qkvBias);
      bk = vec('attn_k.bias', kvDim, qkvBias);
      bv = vec('attn_v.bias', kvDim, qkvBias);
    }
    let qNorm = null, kNorm = null;
    if (qkNorm !== 'none') {
      const r = (o.qkNormPresence ?? 'required') === 'required';
      const lb = (o.qkNormKind ?? normKind) === 'layer';
      if (o.qkNormPerHead) {
        qNorm = perHeadNorm(src, p + 'attn_q_norm', headDim, nHead, r);
        kNorm = perHeadNorm(src, p + 'attn_k_norm', headDim, nHeadKv, r);
      } else {
        qNorm = src.norm(p + 'attn_q_norm', qkNorm === 'head' ? headDim : qDim, r, lb);
        kNorm = src.norm(p + 'attn_k_norm', qkNorm === 'head' ? headDim : kvDim, r, lb);
      }
      if (!qNorm !== !kNorm) throw new ModelFormatError(`${arch}: layer ${il} has only one of attn_q_norm / attn_k_norm`);
    }
    const wo = src.need(p + 'attn_output.weight', [qDim, nEmbd], shapeWhy);
    const bo = vec('attn_output.bias', nEmbd, o.outBias ?? 'optional');
    const postAttnNorm = o.postAttnNorm ? src.norm(p + 'post_attention_norm', nEmbd, true) : null;
    const ffnNormP = o.ffnNorm ?? 'required';
    const ffnNorm = ffnNormP === 'none' ? null : src.norm(p + 'ffn_norm', nEmbd, req(ffnNormP), normKind === 'layer');
    const ffnBias = o.ffnBias ?? 'none';
    let ffnGate: Weight | null = null, bGate = null;
    let ffnUp: Weight, bUp;
    if (ffn === 'fused-gated') {
      ffnUp = src.need(p + 'ffn_up.weight', [nEmbd, 2 * nFF], `gate and up stacked, feed_forward_length ${nFF}`);
      bUp = vec('ffn_up.bias', 2 * nFF, ffnBias);
    } else {
      if (ffn === 'gated') {
        ffnGate = src.need(p + 'ffn_gate.weight', [nEmbd, nFF], `feed_forward_length ${nFF}`);
        bGate = vec('ffn_gate.bias', nFF, ffnBias);
      }
      ffnUp = src.need(p + 'ffn_up.weight', [nEmbd, nFF], `feed_forward_length ${nFF}`);
      bUp = vec('ffn_up.bias', nFF, ffnBias);
    }
    const ffnDown = src.need(p + 'ffn_down.weight', [nFF, nEmbd], `feed_forward_length ${nFF}`);
    const bDown = vec('ffn_down.bias', nEmbd, ffnBias);
    const postFfnNorm = o.postFfnNorm ? src.norm(p + 'post_ffw_norm', nEmbd, true) : null;
    const window = o.window ? o.window(il, meta) : 0;
    layers.push({
      attnNorm, wq, wk, wv, wqkv, bq, bk, bv, bqkv, qNorm, kNorm, wo, bo, postAttnNorm, ffnNorm,
      ffnGate, ffnUp, fusedGateUp: ffn === 'fused-gated', ffnDown, bGate, bUp, bDown, postFfnNorm, window,
    });
  }

  const outputNorm = src.norm('output_norm', nEmbd, true, normKind === 'layer')!;
  const outMode = o.output ?? 'optional';
  let output: Weight;
  if (outMode === 'tied') output = tokenEmbd;
  else if (outMode === 'required') output = src.need('output.weight', [nEmbd, nVocab], 'embedding_length × vocab');
  else output = src.opt('output.weight', [nEmbd, nVocab], 'embedding_length × vocab') ?? tokenEmbd;
  const posEmbd = o.posEmbd ? src.need('position_embd.weight', [nEmbd, nCtx], 'embedding_length × context_length') : null;
  // A tensor the family did not read is a feature tokenloop would silently skip (MoE experts,
  // extra norms, …): refuse it, as llama.cpp refuses a file with unexpected tensors.
  const unused = src.untaken();
  if (unused.length > 0) {
    throw new UnsupportedError(`${arch}: tensor ${unused[0]} is not supported by the ${arch} implementation${unused.length > 1 ? ` (${unused.length} unused tensors)` : ''}`);
  }

  const spec: TransformerSpec = {
    config, normKind, normEps, tokenEmbd, posEmbd,
    embdScale: o.embdScaleSqrt ? Math.fround(Math.sqrt(nEmbd)) : 1,
    layers, outputNorm, output,
    rope: rope ?? (ropeKind === 'none' ? null : plainRope(headDim, 10000)),
    ropeNeox: ropeKind === 'neox',
    qkNorm, qkNormKind: o.qkNormKind ?? normKind,
    attnScale: o.attnScale ? o.attnScale(config) : 1 / Math.sqrt(headDim),
    attnSoftcap: o.attnSoftcap ? o.attnSoftcap(meta) : 0,
    finalSoftcap: o.finalSoftcap ? o.finalSoftcap(meta) : 0,
    ffnAct: o.ffnAct ?? 'silu',
    ffnGated: ffn !== 'plain',
    parallelResidual: o.parallelResidual ?? false,
    geluF16: !so.exactGelu,
  };
  return { spec, bytes: src.bytes };
}

/**
 * Q/K norm scales of shape {headDim, nHeads}: one vector per head (llama.cpp build_norm
 * broadcasting over the (head_dim, n_head, n_tokens) view). No bias, as llama.cpp passes none.
 */
function perHeadNorm(src: TensorSource, prefix: string, headDim: number, nHeads: number, required: boolean): NormWeights | null {
  const w = required ? src.need(`${prefix}.weight`, [headDim, nHeads], 'head_dim × heads') : src.opt(`${prefix}.weight`, [headDim, nHeads], 'head_dim × heads');
  if (!w) return null;
  if (src.has(`${prefix}.bias`)) throw new UnsupportedError(`${src.arch}: per-head norm bias ${prefix}.bias is not supported`);
  const all = toF32(w);
  const heads: Float32Array[] = [];
  for (let h = 0; h < nHeads; h++) heads.push(all.subarray(h * headDim, (h + 1) * headDim));
  return { w: all, b: null, heads };
}
