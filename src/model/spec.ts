/**
 * The generic decoder-only transformer block description every family maps onto. A family file
 * reads its metadata and tensors and fills one TransformerSpec; transformer.ts executes it.
 */
import type { ModelConfig } from './model.js';
import type { RopeParams } from './kernels/rope.js';
import type { Weight } from './kernels/weight.js';

export type NormKind = 'rms' | 'layer';

/** Norm scale (and LayerNorm bias) as f32 vectors. */
export interface NormWeights {
  w: Float32Array | null;
  b: Float32Array | null;
  /**
   * Per-head scales (StableLM-2-12B Q/K norms, tensor {head_dim, n_head}): when set, normed row r
   * (token t, head h, r = t·nHeads + h) uses heads[r % heads.length] instead of w.
   */
  heads?: Float32Array[];
}

/** One transformer block. Exactly one of (wq, wk, wv) or wqkv is set. */
export interface LayerSpec {
  /** Pre-attention norm; null = the projections read the residual stream directly (OLMo 2). */
  attnNorm: NormWeights | null;
  wq: Weight | null; wk: Weight | null; wv: Weight | null;
  /** Fused projection: output rows Q, then K, then V. */
  wqkv: Weight | null;
  bq: Float32Array | null; bk: Float32Array | null; bv: Float32Array | null; bqkv: Float32Array | null;
  /** Q/K norms (see TransformerSpec.qkNorm for their extent). */
  qNorm: NormWeights | null; kNorm: NormWeights | null;
  wo: Weight; bo: Float32Array | null;
  /** Norm on the attention output before the residual add (Gemma 2, OLMo 2). */
  postAttnNorm: NormWeights | null;
  /** Pre-FFN norm; null = parallel residual or un-normed input (see TransformerSpec.parallelResidual). */
  ffnNorm: NormWeights | null;
  /** Gate projection of a gated FFN; null with fusedGateUp or for an ungated FFN. */
  ffnGate: Weight | null;
  /** Up projection; with fusedGateUp it holds gate rows first, then up rows (Phi-3). */
  ffnUp: Weight;
  fusedGateUp: boolean;
  ffnDown: Weight;
  bGate: Float32Array | null; bUp: Float32Array | null; bDown: Float32Array | null;
  /** Norm on the FFN output before the residual add. */
  postFfnNorm: NormWeights | null;
  /** Sliding attention window in tokens (0 = full causal). */
  window: number;
}

/** Everything the shared forward needs. */
export interface TransformerSpec {
  config: ModelConfig;
  normKind: NormKind;
  normEps: number;
  tokenEmbd: Weight;
  /** Learned absolute positions (GPT-2), rows indexed by position. */
  posEmbd: Weight | null;
  /** Multiplier on the token embedding (Gemma: sqrt(n_embd)); 1 = none. */
  embdScale: number;
  layers: LayerSpec[];
  outputNorm: NormWeights;
  /** Output projection (may be the token embedding when tied). */
  output: Weight;
  /** null = no rotary embedding. */
  rope: RopeParams | null;
  /** NEOX pairing (i, i+nRot/2) instead of adjacent pairs. */
  ropeNeox: boolean;
  /** 'head': norm each head over headDim; 'full': over the whole projection (OLMo 2). */
  qkNorm: 'none' | 'head' | 'full';
  qkNormKind: NormKind;
  /** Multiplier on q·k. */
  attnScale: number;
  /** 0 = none. */
  attnSoftcap: number;
  /** Final logit soft-cap, 0 = none. */
  finalSoftcap: number;
  ffnAct: 'silu' | 'gelu';
  /** Whether the FFN is gated (gate ⊙ up). */
  ffnGated: boolean;
  /** Without ffnNorm: true = FFN reads the attention-normed input (parallel block), false = the residual. */
  parallelResidual: boolean;
  /** Emulate ggml's F16 GELU lookup table (bit-compatible with llama.cpp's CPU backend). */
  geluF16: boolean;
}
