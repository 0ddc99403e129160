/**
 * InternLM2: computed exactly like Llama (RMSNorm, NORM RoPE, GQA, SwiGLU, optional q/k/v/o
 * biases) under `internlm2.*` keys, with a required separate output.weight.
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const internlm2: Family = {
  architectures: ['internlm2'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, { rope: 'norm', output: 'required' }, opts),
};
