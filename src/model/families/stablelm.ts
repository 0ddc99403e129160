/**
 * StableLM 2: LayerNorm (with bias) pre-norms, optional Q/K/V biases, partial NEOX RoPE over
 * rope.dimension_count dims, SwiGLU FFN. Without ffn_norm the block is parallel-residual (the FFN
 * reads the attention-normed input). Per-head Q/K LayerNorms (StableLM-2-12B) are not supported.
 */
import { UnsupportedError } from '../../errors.js';
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const stablelm: Family = {
  architectures: ['stablelm'],
  build: (file, arch, opts) => {
    if (file.tensors.has('blk.0.attn_q_norm.weight')) throw new UnsupportedError(`${arch}: per-head Q/K norms (attn_q_norm, StableLM-2-12B) are not supported yet`);
    return buildStandardSpec(file, arch, {
      normKind: 'layer', rope: 'neox', qkvBias: 'optional', ffnNorm: 'optional', parallelResidual: true, output: 'required',
    }, opts);
  },
};
