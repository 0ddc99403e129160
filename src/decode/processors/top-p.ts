/**
 * Nucleus (top-p) truncation (Holtzman et al. 2020, "The Curious Case of Neural Text
 * Degeneration"): sort by probability and keep the smallest prefix whose cumulative probability
 * is ≥ p; at least one token is always kept. p = 1 keeps everything.
 *
 * To avoid sorting the whole vocabulary every step, the head is partially sorted (64 entries,
 * then 8× more each round) until its mass reaches p; the nucleus is usually tiny.
 */
import { maxLogit, sortTopCandidates, truncateCandidates } from '../candidates.js';
import { expNonPositive } from '../exp.js';
import type { Candidates, LogitsProcessor, ProcessorContext } from '../types.js';
import { checkNumber } from './check.js';

/** Keeps the smallest highest-probability set with cumulative probability ≥ p; leaves it sorted. */
export class TopP implements LogitsProcessor {
  readonly name = 'top-p';
  readonly params: { readonly topP: number };
  constructor(readonly topP: number) {
    checkNumber('topP', topP, 0, 1, { minOpen: true });
    this.params = { topP };
  }
  apply(c: Candidates, _ctx?: ProcessorContext): void {
    if (this.topP >= 1 || c.size <= 1) return;
    const lg = c.logits, n = c.size;
    const m = maxLogit(c);
    if (m === -Infinity) return;
    // Total unnormalised mass Σ exp(l − max), float64 (the e^y DistSampler draws with)
    let total = 0;
    for (let i = 0; i < n; i++) total += expNonPositive(lg[i]! - m);
    const target = this.topP * total;
    let k = Math.min(n, 64);
    for (;;) {
      sortTopCandidates(c, k);
      let cum = 0;
      for (let i = 0; i < k; i++) {
        cum += expNonPositive(lg[i]! - m);
        if (cum >= target) {
          truncateCandidates(c, i + 1);
          c.sorted = true;
          return;
        }
      }
      // Rounding can leave cum a hair below p·total even with everything included: keep all.
      if (k === n) { c.sorted = true; return; }
      k = Math.min(n, k * 8);
    }
  }
}

/** Top-p processor (p in (0, 1]; 1 disables). */
export function createTopP(topP: number): TopP {
  return new TopP(topP);
}
