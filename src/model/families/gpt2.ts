/**
 * GPT-2: learned absolute position embeddings (no RoPE), LayerNorm with biases, fused biased
 * attn_qkv (rows Q, K, V), biased output projection, plain GELU FFN with biases, separate output.
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const gpt2: Family = {
  architectures: ['gpt2'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, {
    normKind: 'layer', rope: 'none', posEmbd: true, qkv: 'fused', qkvBias: 'required', outBias: 'required',
    ffn: 'plain', ffnBias: 'required', ffnAct: 'gelu', output: 'required',
  }, opts),
};
