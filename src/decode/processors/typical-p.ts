/**
 * Locally typical sampling (Meister et al. 2022, "Locally Typical Sampling", TACL). With
 * H = −Σ p_j ln p_j the entropy of the current distribution, rank tokens by |−ln p_i − H|
 * (how far their surprisal is from the expected surprisal), ascending, and keep the smallest
 * prefix of that ranking whose cumulative probability is ≥ typical_p (at least one token).
 * The survivors are left in typicality order, so `sorted` is cleared. typical_p = 1 keeps all.
 */
import { softmaxCandidates } from '../candidates.js';
import type { Candidates, LogitsProcessor, ProcessorContext } from '../types.js';
import { checkNumber } from './check.js';

/** Typical-p truncation; scratch buffers are grown once and reused across steps. */
export class TypicalP implements LogitsProcessor {
  readonly name = 'typical-p';
  readonly params: { readonly typicalP: number };
  private order = new Int32Array(0);
  private score = new Float64Array(0);
  private probs = new Float64Array(0);
  private tmpIds = new Int32Array(0);
  private tmpLogits = new Float32Array(0);
  constructor(readonly typicalP: number) {
    checkNumber('typicalP', typicalP, 0, 1, { minOpen: true });
    this.params = { typicalP };
  }
  apply(c: Candidates, _ctx?: ProcessorContext): void {
    if (this.typicalP >= 1 || c.size <= 1) return;
    const n = c.size;
    this.grow(c.ids.length);
    const p = softmaxCandidates(c, this.probs);
    let h = 0;
    for (let i = 0; i < n; i++) { const q = p[i]!; if (q > 0) h -= q * Math.log(q); }
    const score = this.score;
    for (let i = 0; i < n; i++) {
      const q = p[i]!;
      score[i] = q > 0 ? Math.abs(-Math.log(q) - h) : Infinity;
    }
    const ids = c.ids;
    const order = this.order.subarray(0, n);
    for (let i = 0; i < n; i++) order[i] = i;
    // Most typical first; ties by higher probability, then lower id (deterministic).
    order.sort((a, b) => (score[a]! - score[b]!) || (p[b]! - p[a]!) || (ids[a]! - ids[b]!));
    let cum = 0, keep = n;
    for (let r = 0; r < n; r++) {
      cum += p[order[r]!]!;
      if (cum >= this.typicalP) { keep = r + 1; break; }
    }
    const ti = this.tmpIds, tl = this.tmpLogits, lg = c.logits;
    for (let r = 0; r < keep; r++) { const i = order[r]!; ti[r] = ids[i]!; tl[r] = lg[i]!; }
    ids.set(ti.subarray(0, keep));
    lg.set(tl.subarray(0, keep));
    c.size = keep;
    c.sorted = false;
  }
  clone(): TypicalP {
    return new TypicalP(this.typicalP);
  }
  private grow(cap: number): void {
    if (this.order.length >= cap) return;
    this.order = new Int32Array(cap);
    this.score = new Float64Array(cap);
    this.probs = new Float64Array(cap);
    this.tmpIds = new Int32Array(cap);
    this.tmpLogits = new Float32Array(cap);
  }
}

/** Typical-p processor (typical_p in (0, 1]; 1 disables). */
export function createTypicalP(typicalP: number): TypicalP {
  return new TypicalP(typicalP);
}
