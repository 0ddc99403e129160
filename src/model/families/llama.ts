/**
 * Llama (and Mistral-style files using the `llama` architecture): RMSNorm pre-norm blocks, NORM
 * (adjacent-pair) RoPE over the whole head with optional rope scaling, GQA, SwiGLU FFN, optional
 * q/k/v/o biases, separate or tied output. Also serves llama2.c checkpoints (presented as llama).
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const llama: Family = {
  architectures: ['llama', 'mistral'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, { rope: 'norm', ropeFullHead: true, output: 'optional' }, opts),
};
