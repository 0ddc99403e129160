/**
 * Gemma 2: Gemma plus post-attention and post-FFN RMSNorms, attention-score soft-capping
 * (attn_logit_softcapping, default 50), final-logit soft-capping (final_logit_softcapping,
 * default 30), and a sliding window (attention.sliding_window, default 4096) on even layers.
 * Query scale 1/sqrt(head_dim), except the 27B (46 layers): 1/sqrt(n_embd/n_head), as llama.cpp.
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const gemma2: Family = {
  architectures: ['gemma2'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, {
    rope: 'neox', embdScaleSqrt: true, ffnAct: 'gelu', output: 'tied',
    postAttnNorm: true, postFfnNorm: true,
    attnScale: (c) => 1 / Math.sqrt(c.nLayer === 46 ? c.nEmbd / c.nHead : c.headDim),
    attnSoftcap: (m) => m.float('attn_logit_softcapping', 50),
    finalSoftcap: (m) => m.float('final_logit_softcapping', 30),
    window: (il, m) => (il % 2 === 0 ? m.int('attention.sliding_window', 4096) : 0),
  }, opts),
};
