/**
 * Min-p truncation (Nguyen et al. 2024, "Turning Up the Heat: Min-p Sampling"): keep token i when
 * p_i ≥ min_p · p_max. Since p_i / p_max = exp(l_i − l_max), this is l_i ≥ l_max + ln(min_p), so no
 * softmax is needed. The top token always survives; min_p = 0 keeps everything.
 */
import { maxLogit, retainCandidates } from '../candidates.js';
import type { Candidates, LogitsProcessor, ProcessorContext } from '../types.js';
import { checkNumber } from './check.js';

/** Drops candidates whose probability is below min_p times the top probability; keeps order. */
export class MinP implements LogitsProcessor {
  readonly name = 'min-p';
  readonly params: { readonly minP: number };
  constructor(readonly minP: number) {
    checkNumber('minP', minP, 0, 1);
    this.params = { minP };
  }
  apply(c: Candidates, _ctx?: ProcessorContext): void {
    if (this.minP === 0 || c.size <= 1) return;
    const m = maxLogit(c);
    if (m === -Infinity) return;
    const threshold = m + Math.log(this.minP);
    const lg = c.logits;
    retainCandidates(c, (i) => lg[i]! >= threshold);
  }
}

/** Min-p processor (0 disables). */
export function createMinP(minP: number): MinP {
  return new MinP(minP);
}
