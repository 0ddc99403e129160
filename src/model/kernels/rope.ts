/**
 * Rotary position embedding (Su et al. 2021, RoFormer) with the variants GGUF models use:
 * NORM rotates adjacent pairs (2i, 2i+1), NEOX rotates (i, i + nRot/2); only the first nRot
 * elements of a head rotate (partial rotary). Frequencies: θ_i = pos · base^(−2i/nRot) / f_i with
 * optional per-pair divisors f_i (`rope_freqs`, or LongRoPE's long/short factors), linear position
 * interpolation (Chen et al. 2023) and YaRN (Peng et al. 2023) blended exactly as ggml's rope_yarn
 * does.
 */

/** Frequency parameters of one model. */
export interface RopeParams {
  /** Rotated dims per head (even). */
  nRot: number;
  freqBase: number;
  /** 1/factor for linear or YaRN scaling, 1 without scaling. */
  freqScale: number;
  /** Per-pair frequency divisors (nRot/2), or null. */
  freqFactors: Float32Array | null;
  /** YaRN extrapolation mix (0 disables the ramp; 1 for YaRN models). */
  extFactor: number;
  /** Multiplier on cos/sin (attention temperature). */
  attnFactor: number;
  /** YaRN correction range [low, high] in pair indices (ggml_rope_yarn_corr_dims). */
  corrDims: [number, number];
  /** Which tensor freqFactors came from (LongRoPE: 'long' or 'short', chosen at load time). */
  factorSet?: 'rope_freqs' | 'long' | 'short';
}

/** ggml_rope_yarn_corr_dims: the pair range between the fast and slow YaRN boundaries. */
export function yarnCorrDims(nRot: number, nCtxOrig: number, freqBase: number, betaFast: number, betaSlow: number): [number, number] {
  const corrDim = (nRotations: number) => (nRot * Math.log(nCtxOrig / (nRotations * 2 * Math.PI))) / (2 * Math.log(freqBase));
  const start = Math.floor(corrDim(betaFast));
  const end = Math.ceil(corrDim(betaSlow));
  return [Math.max(0, start), Math.min(nRot - 1, end)];
}

/** Plain RoPE parameters (no scaling). */
export function plainRope(nRot: number, freqBase: number): RopeParams {
  return { nRot, freqBase, freqScale: 1, freqFactors: null, extFactor: 0, attnFactor: 1, corrDims: [0, 0] };
}

/** cos/sin of every rotated pair at position `pos`, written to cos/sin[off .. off+nRot/2). */
export function ropeCosSin(cos: Float32Array, sin: Float32Array, off: number, pos: number, p: RopeParams): void {
  const half = p.nRot >> 1;
  for (let i = 0; i < half; i++) {
    let thetaExtrap = pos * Math.pow(p.freqBase, (-2 * i) / p.nRot);
    if (p.freqFactors) thetaExtrap /= p.freqFactors[i]!;
    const thetaInterp = p.freqScale * thetaExtrap;
    let theta = thetaInterp;
    let mscale = p.attnFactor;
    if (p.extFactor !== 0) {
      const [lo, hi] = p.corrDims;
      const y = (i - lo) / Math.max(0.001, hi - lo);
      const rampMix = (1 - Math.min(1, Math.max(0, y))) * p.extFactor;
      theta = thetaInterp * (1 - rampMix) + thetaExtrap * rampMix;
      mscale *= 1 + 0.1 * Math.log(1 / p.freqScale);
    }
    cos[off + i] = Math.cos(theta) * mscale;
    sin[off + i] = Math.sin(theta) * mscale;
  }
}

/**
 * Rotate `nHeads` heads of `headDim` values starting at x[off], using cos/sin[csOff ..] of this
 * token's position. `neox` selects the (i, i+nRot/2) pairing, else adjacent pairs.
 */
export function ropeApply(x: Float32Array, off: number, nHeads: number, headDim: number, nRot: number,
  cos: Float32Array, sin: Float32Array, csOff: number, neox: boolean): void {
  const half = nRot >> 1;
  for (let h = 0; h < nHeads; h++) {
    const b = off + h * headDim;
    for (let i = 0; i < half; i++) {
      const ia = neox ? b + i : b + 2 * i;
      const ib = neox ? ia + half : ia + 1;
      const c = cos[csOff + i]!, s = sin[csOff + i]!;
      const x0 = x[ia]!, x1 = x[ib]!;
      x[ia] = x0 * c - x1 * s;
      x[ib] = x0 * s + x1 * c;
    }
  }
}
