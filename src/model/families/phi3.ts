/**
 * Phi-3 / Phi-4: RMSNorm blocks with a fused attn_qkv (rows Q, K, V; separate tensors are also
 * accepted), NEOX RoPE, a sliding window on every layer (attention.sliding_window; 0 or absent =
 * none), and a fused gate/up FFN (ffn_up holds gate rows then up rows, SwiGLU). 128k-context
 * variants carry LongRoPE factors (rope_factors_long/short.weight) and rope.scaling.attn_factor;
 * rope-config.ts picks the set for the context length the model is loaded with.
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const phi3: Family = {
  architectures: ['phi3'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, {
    rope: 'neox', qkv: 'either', ffn: 'fused-gated', output: 'required',
    window: (_il, m) => m.int('attention.sliding_window', 0),
  }, opts),
};
