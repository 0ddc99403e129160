/**
 * Qwen2 / Qwen2.5: the Llama block with required Q/K/V biases and NEOX RoPE; the output may be
 * tied to the token embedding (small Qwen2 models have no output.weight).
 */
import { buildStandardSpec } from '../standard.js';
import type { Family } from '../family.js';

export const qwen2: Family = {
  architectures: ['qwen2'],
  build: (file, arch, opts) => buildStandardSpec(file, arch, { rope: 'neox', qkvBias: 'required', output: 'optional' }, opts),
};
