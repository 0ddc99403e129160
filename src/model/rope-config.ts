/**
 * RoPE frequency parameters from GGUF metadata, as llama.cpp interprets them:
 * `rope.freq_base`, `rope.scaling.type` (none | linear | yarn | longrope; absent = linear),
 * `rope.scaling.factor` (freq_scale = 1/factor; type none disables it),
 * `rope.scaling.original_context_length`, `rope.scaling.attn_factor` (a multiplier on cos/sin for
 * every type: llama.cpp multiplies its yarn_attn_factor by it), YaRN β_fast = 32 / β_slow = 1 and
 * ext_factor 1 for YaRN (llama.cpp defaults, overridable by the `rope.scaling.yarn_*` keys), and
 * per-pair frequency divisors: the `rope_freqs.weight` tensor (Llama 3.1 style), or LongRoPE's
 * `rope_factors_long.weight` / `rope_factors_short.weight` (Phi-3 128k, Phi-3.5, Phi-4-mini).
 *
 * LongRoPE (Ding et al. 2024) as llama.cpp runs it (llama_model::get_rope_factors): rope_freqs,
 * when present, wins; otherwise the long factors are used when the context in use exceeds
 * `rope.scaling.original_context_length`, else the short ones (a missing set = no divisors). The
 * magnitude correction sqrt(1 + ln(s)/ln(n_orig)) is not computed here: the converter stores it
 * as `rope.scaling.attn_factor`, which applies to both sets. The choice is made once, when the
 * model is loaded, for the context length the caller will use (SpecOptions.contextLength), so
 * every cache and fork of one model rotates with the same factors (llama.cpp: once per context).
 */
import { ModelFormatError, UnsupportedError } from '../errors.js';
import { yarnCorrDims, type RopeParams } from './kernels/rope.js';
import type { MetaReader } from './meta.js';
import type { TensorSource } from './tensors.js';

const TYPES = ['none', 'linear', 'yarn', 'longrope'];

/**
 * Read RoPE parameters for `nRot` rotated dims per head. `nCtxTrain` is the file's context
 * length, `nCtxUsed` the context the model will run with (picks LongRoPE's long or short set).
 */
export function readRope(meta: MetaReader, src: TensorSource, nRot: number, nCtxTrain: number, nCtxUsed = nCtxTrain): RopeParams {
  const arch = meta.arch;
  if (nRot <= 0 || nRot % 2 !== 0) throw new ModelFormatError(`${arch}: rope.dimension_count = ${nRot} must be a positive even number`);
  const freqBase = meta.float('rope.freq_base', 10000);
  const type = meta.str('rope.scaling.type') ?? 'linear';
  if (!TYPES.includes(type)) {
    throw new UnsupportedError(`${arch}: ${arch}.rope.scaling.type "${type}" is not supported (supported: ${TYPES.join(', ')})`);
  }
  let factor = meta.num('rope.scaling.factor') ?? meta.num('rope.scale_linear') ?? 0;
  if (factor < 0 || !Number.isFinite(factor)) throw new ModelFormatError(`${arch}: rope.scaling.factor = ${factor} is invalid`);
  if (factor === 0) factor = 1;
  // DeepSeek-style YaRN mscale (yarn_log_multiplier) changes the attention temperature; not implemented.
  const logMul = meta.num('rope.scaling.yarn_log_multiplier');
  if (logMul !== undefined && logMul !== 0) {
    throw new UnsupportedError(`${arch}: ${arch}.rope.scaling.yarn_log_multiplier = ${logMul} is not supported`);
  }
  if (meta.raw('rope.dimension_sections') !== undefined) {
    throw new UnsupportedError(`${arch}: multimodal RoPE sections (${arch}.rope.dimension_sections) are not supported`);
  }
  const nCtxOrig = meta.int('rope.scaling.original_context_length', nCtxTrain);
  const why = 'one divisor per rotated pair';
  const freqs = src.vec('rope_freqs.weight', nRot / 2, false, why);
  const long = src.vec('rope_factors_long.weight', nRot / 2, false, why);
  const short = src.vec('rope_factors_short.weight', nRot / 2, false, why);
  if (freqs && (long || short)) throw new ModelFormatError(`${arch}: the file has both rope_freqs.weight and rope_factors_long/short.weight`);
  let freqFactors = freqs;
  let factorSet: RopeParams['factorSet'] = freqs ? 'rope_freqs' : undefined;
  if (long || short) {
    factorSet = nCtxUsed > nCtxOrig ? 'long' : 'short';
    freqFactors = factorSet === 'long' ? long : short;
  }
  for (const f of freqFactors ?? []) {
    if (!(f > 0) || !Number.isFinite(f)) throw new ModelFormatError(`${arch}: rope frequency factor ${f} is not a positive number`);
  }
  const attnFactor = meta.float('rope.scaling.attn_factor', 1);
  const base: RopeParams = { nRot, freqBase, freqScale: 1 / factor, freqFactors, extFactor: 0, attnFactor, corrDims: [0, 0], ...(factorSet && { factorSet }) };
  switch (type) {
    case 'none':
      return { ...base, freqScale: 1 };
    case 'yarn': {
      const betaFast = meta.float('rope.scaling.yarn_beta_fast', 32);
      const betaSlow = meta.float('rope.scaling.yarn_beta_slow', 1);
      const extFactor = meta.float('rope.scaling.yarn_ext_factor', 1);
      const yAttn = meta.num('rope.scaling.yarn_attn_factor');
      return {
        ...base, extFactor, attnFactor: yAttn ?? attnFactor,
        corrDims: yarnCorrDims(nRot, nCtxOrig, freqBase, betaFast, betaSlow),
      };
    }
    default: // linear, longrope: position interpolation by freq_scale (1 without a factor) plus the divisors
      return base;
  }
}
