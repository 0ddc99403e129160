/**
 * Gemma: embedding × sqrt(n_embd), RMSNorm with the stored (already 1 + w) weights, NEOX RoPE,
 * head_dim from attention.key_length, GeGLU FFN (tanh GELU), output always tied to the embedding.
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const gemma: Family = {
  architectures: ['gemma'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, {
    rope: 'neox', embdScaleSqrt: true, ffnAct: 'gelu', output: 'tied',
  }, opts),
};
