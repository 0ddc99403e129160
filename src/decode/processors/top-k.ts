/**
 * Top-k truncation (Fan et al. 2018, "Hierarchical Neural Story Generation"): keep the k
 * highest-logit candidates, ties broken by lower id. k = 0 disables; k ≥ size keeps everything.
 */
import { sortTopCandidates, truncateCandidates } from '../candidates.js';
import type { Candidates, LogitsProcessor, ProcessorContext } from '../types.js';
import { checkNumber } from './check.js';

/** Keeps the k best candidates (partial sort: O(size + k log k)); leaves them sorted. */
export class TopK implements LogitsProcessor {
  readonly name = 'top-k';
  readonly params: { readonly k: number };
  constructor(readonly k: number) {
    checkNumber('topK', k, 0, Number.MAX_SAFE_INTEGER, { integer: true });
    this.params = { k };
  }
  apply(c: Candidates, _ctx?: ProcessorContext): void {
    if (this.k === 0 || this.k >= c.size) return;
    sortTopCandidates(c, this.k);
    truncateCandidates(c, this.k);
    c.sorted = true;
  }
}

/** Top-k processor (k = 0 disables). */
export function createTopK(k: number): TopK {
  return new TopK(k);
}
