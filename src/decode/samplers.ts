/**
 * Final samplers: they read the processed candidates and pick one token id.
 * - greedy: argmax, ties → lowest id (as llama.cpp's greedy sampler, which keeps the first max).
 * - dist: inverse-CDF sampling from softmax of the live candidates with the seeded Rng: draw
 *   u ∈ [0, 1) and return the first token whose cumulative probability exceeds u.
 */
import { argmaxCandidates, maxLogit, noCandidateError, scratchFor } from './candidates.js';
import { expNonPositive } from './exp.js';
import type { Rng } from './rng.js';
import type { Candidates, Sampler } from './types.js';

/** Picks the highest-logit live candidate (lowest id among ties). */
export class GreedySampler implements Sampler {
  readonly name = 'greedy';
  readonly params = {};
  select(c: Candidates, _rng?: Rng): number {
    const i = argmaxCandidates(c);
    if (i < 0 || c.logits[i] === -Infinity) throw noCandidateError();
    return c.ids[i]!;
  }
}

/**
 * Samples from p_i = exp(l_i − max) / Σ exp(l_j − max) over the live candidates (float64 sums).
 * Tokens with logit −∞ have probability exactly 0 and can never be returned.
 */
export class DistSampler implements Sampler {
  readonly name = 'dist';
  readonly params = {};
  select(c: Candidates, rng: Rng): number {
    const n = c.size, lg = c.logits, ids = c.ids;
    const m = maxLogit(c);
    if (m === -Infinity) throw noCandidateError();
    const w = scratchFor(c);
    let total = 0;
    for (let i = 0; i < n; i++) { const e = expNonPositive(lg[i]! - m); w[i] = e; total += e; }
    const target = rng.next() * total;
    let cum = 0, last = -1;
    for (let i = 0; i < n; i++) {
      const e = w[i]!;
      if (e === 0) continue;
      cum += e;
      last = i;
      if (target < cum) return ids[i]!;
    }
    // Only reachable through rounding (target within an ulp of total): the last positive entry.
    return ids[last]!;
  }
}

/** Greedy (argmax) sampler. */
export function createGreedySampler(): GreedySampler {
  return new GreedySampler();
}

/** Seeded distribution sampler. */
export function createDistSampler(): DistSampler {
  return new DistSampler();
}
