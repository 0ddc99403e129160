/**
 * Qwen3 (dense): the Llama block without biases, with per-head RMSNorm on Q and K
 * (attn_q_norm / attn_k_norm of length head_dim) before NEOX RoPE; head_dim may differ from
 * n_embd/n_head (attention.key_length). Output tied when output.weight is absent.
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const qwen3: Family = {
  architectures: ['qwen3'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, {
    rope: 'neox', qkNorm: 'head', qkNormPresence: 'required', output: 'optional',
  }, opts),
};
