/**
 * StarCoder2: LayerNorm (with bias) pre-norms, required Q/K/V/O biases, NEOX RoPE, plain GELU
 * FFN with biases; the output is tied to the embedding when output.weight is absent.
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const starcoder2: Family = {
  architectures: ['starcoder2'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, {
    normKind: 'layer', rope: 'neox', qkvBias: 'required', outBias: 'required',
    ffn: 'plain', ffnBias: 'required', ffnAct: 'gelu', output: 'optional',
  }, opts),
};
