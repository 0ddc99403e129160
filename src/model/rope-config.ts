/**
 * RoPE frequency parameters from GGUF metadata, as llama.cpp interprets them:
 * `rope.freq_base`, `rope.scaling.type` (none | linear | yarn; absent = linear), `rope.scaling.factor`
 * (freq_scale = 1/factor; type none disables it), `rope.scaling.original_context_length`,
 * `rope.scaling.attn_factor`, YaRN β_fast = 32 / β_slow = 1 and ext_factor 1 for YaRN (llama.cpp
 * defaults, overridable by the `rope.scaling.yarn_*` keys), and the optional `rope_freqs.weight`
 * tensor of per-pair frequency divisors (Llama 3.1 style).
 */
import { ModelFormatError, UnsupportedError } from '../errors.js';
import { yarnCorrDims, type RopeParams } from './kernels/rope.js';
import type { MetaReader } from './meta.js';
import type { TensorSource } from './tensors.js';

/** Read RoPE parameters for `nRot` rotated dims per head. */
export function readRope(meta: MetaReader, src: TensorSource, nRot: number, nCtxTrain: number): RopeParams {
  if (nRot <= 0 || nRot % 2 !== 0) throw new ModelFormatError(`${meta.arch}: rope.dimension_count = ${nRot} must be a positive even number`);
  const freqBase = meta.float('rope.freq_base', 10000);
  const type = meta.str('rope.scaling.type') ?? 'linear';
  let factor = meta.num('rope.scaling.factor') ?? meta.num('rope.scale_linear') ?? 0;
  if (factor < 0 || !Number.isFinite(factor)) throw new ModelFormatError(`${meta.arch}: rope.scaling.factor = ${factor} is invalid`);
  if (factor === 0) factor = 1;
  const freqFactors = src.vec('rope_freqs.weight', nRot / 2, false, 'one divisor per rotated pair');
  const attnFactor = meta.float('rope.scaling.attn_factor', 1);
  const base: RopeParams = { nRot, freqBase, freqScale: 1 / factor, freqFactors, extFactor: 0, attnFactor, corrDims: [0, 0] };
  switch (type) {
    case 'none':
      return { ...base, freqScale: 1 };
    case 'linear':
      return base;
    case 'yarn': {
      const nCtxOrig = meta.int('rope.scaling.original_context_length', nCtxTrain);
      const betaFast = meta.float('rope.scaling.yarn_beta_fast', 32);
      const betaSlow = meta.float('rope.scaling.yarn_beta_slow', 1);
      const extFactor = meta.float('rope.scaling.yarn_ext_factor', 1);
      const yAttn = meta.num('rope.scaling.yarn_attn_factor');
      return {
        ...base, extFactor, attnFactor: yAttn ?? attnFactor,
        corrDims: yarnCorrDims(nRot, nCtxOrig, freqBase, betaFast, betaSlow),
      };
    }
    default:
      throw new UnsupportedError(`${meta.arch}: rope scaling type "${type}" is not supported (supported: none, linear, yarn)`);
  }
}
