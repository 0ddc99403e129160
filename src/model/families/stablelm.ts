/**
 * StableLM 2: LayerNorm (with bias) pre-norms, optional Q/K/V biases, partial NEOX RoPE over
 * rope.dimension_count dims, SwiGLU FFN. Without ffn_norm the block is parallel-residual (the FFN
 * reads the attention-normed input). StableLM-2-12B adds per-head Q/K LayerNorms without bias
 * (attn_q_norm {head_dim, n_head}, attn_k_norm {head_dim, n_head_kv}: each head has its own scale),
 * applied after the projections and before RoPE, as llama.cpp's stablelm graph does.
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const stablelm: Family = {
  architectures: ['stablelm'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, {
    normKind: 'layer', rope: 'neox', qkvBias: 'optional', ffnNorm: 'optional', parallelResidual: true, output: 'required',
    qkNorm: 'head', qkNormPresence: 'optional', qkNormKind: 'layer', qkNormPerHead: true,
  }, opts),
};
