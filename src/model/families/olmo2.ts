/**
 * OLMo 2: no pre-norms; Q/K RMSNorm over the whole projection (before NEOX RoPE); post-attention
 * and post-FFN RMSNorms on the branch outputs; the SwiGLU FFN reads the un-normalised residual.
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const olmo2: Family = {
  architectures: ['olmo2'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, {
    attnNorm: false, rope: 'neox', qkNorm: 'full', qkNormPresence: 'required',
    postAttnNorm: true, postFfnNorm: true, ffnNorm: 'none', output: 'required',
  }, opts),
};
