/**
 * Beam-search bookkeeping, with Hugging Face transformers' semantics (`BeamSearchScorer` /
 * `BeamHypotheses`): the pure parts — scoring, the finished-hypothesis pool, the stopping rule and
 * the per-step candidate selection. The loop that runs the model lives in generate/beam-search.ts.
 *
 * - A hypothesis's score is Σ log-probs / length^lengthPenalty, length = generated tokens
 *   (the end-of-generation token included). lengthPenalty > 0 favours longer sequences,
 *   < 0 shorter ones, 0 ranks by the plain sum.
 * - Each step keeps the 2·numBeams best (beam, token) continuations by cumulative log-prob; an
 *   end-of-sequence continuation ranked among the first numBeams becomes a finished hypothesis,
 *   the others fill the numBeams open beams.
 * - earlyStopping: true stops as soon as numBeams hypotheses are finished; false (the default)
 *   stops when the best open beam, at its current length, can no longer beat the worst finished
 *   one; 'never' assumes the open beam could still grow to the maximum length (the canonical
 *   beam-search stopping rule).
 */
import type { Candidates } from './types.js';

/** How beam search decides it is done (Hugging Face `early_stopping`). */
export type EarlyStopping = boolean | 'never';

/** Σ log-probs / length^lengthPenalty (a length of 0 counts as 1). */
export function beamScore(sumLogprobs: number, length: number, lengthPenalty: number): number {
  return sumLogprobs / Math.max(1, length) ** lengthPenalty;
}

/** The pool of finished hypotheses: keeps the numBeams best by score. */
export class BeamHypotheses<T> {
  private readonly hyps: { score: number; item: T }[] = [];
  private worst = Infinity;

  constructor(
    readonly numBeams: number,
    readonly lengthPenalty: number,
    readonly earlyStopping: EarlyStopping,
    /** The most tokens a hypothesis can have (used by earlyStopping 'never'). */
    readonly maxLength: number,
  ) {}

  get size(): number { return this.hyps.length; }

  /** Offers a finished hypothesis; returns its score. Kept only if it is among the numBeams best. */
  add(sumLogprobs: number, length: number, item: T): number {
    const score = beamScore(sumLogprobs, length, this.lengthPenalty);
    if (this.hyps.length < this.numBeams || score > this.worst) {
      this.hyps.push({ score, item });
      if (this.hyps.length > this.numBeams) {
        let w = 0;
        for (let i = 1; i < this.hyps.length; i++) if (this.hyps[i]!.score < this.hyps[w]!.score) w = i;
        this.hyps.splice(w, 1);
      }
      this.worst = Math.min(...this.hyps.map((h) => h.score));
    }
    return score;
  }

  /**
   * Whether no open beam can improve the pool: `bestSum` is the best cumulative log-prob among this
   * step's continuations, `length` their generated length.
   */
  isDone(bestSum: number, length: number): boolean {
    if (this.hyps.length < this.numBeams) return false;
    if (this.earlyStopping === true) return true;
    const len = this.earlyStopping === 'never' && this.lengthPenalty > 0 ? this.maxLength : length;
    return this.worst >= beamScore(bestSum, len, this.lengthPenalty);
  }

  /** The hypotheses, best score first (stable: earlier additions win ties). */
  sorted(): { score: number; item: T }[] {
    return this.hyps.map((h, i) => ({ h, i })).sort((a, b) => b.h.score - a.h.score || a.i - b.i).map((x) => x.h);
  }
}

/** One continuation: open beam `beam` extended by `token`, cumulative log-prob `sum`. */
export interface BeamCandidate {
  beam: number;
  token: number;
  sum: number;
  /** The token's log-prob in the beam's processed distribution. */
  logprob: number;
}

/** One open beam's processed distribution at this step: candidates and their log-sum-exp. */
export interface BeamStep {
  /** Cumulative processed log-prob of the beam so far. */
  sum: number;
  cands: Candidates;
  /** logsumexp of the live candidate logits (normalises them to log-probs). */
  lse: number;
}

/**
 * The `k` best continuations over all beams by sum + log p(token), best first; ties go to the lower
 * beam index, then the lower token id. Tokens with log-prob −∞ are never returned.
 */
export function topBeamCandidates(steps: readonly BeamStep[], k: number): BeamCandidate[] {
  const best: BeamCandidate[] = [];
  const worse = (a: BeamCandidate, b: BeamCandidate) =>
    a.sum < b.sum || (a.sum === b.sum && (a.beam > b.beam || (a.beam === b.beam && a.token > b.token)));
  steps.forEach((s, beam) => {
    if (s.lse === -Infinity) return; // every token of this beam is banned
    const { ids, logits } = s.cands;
    for (let i = 0; i < s.cands.size; i++) {
      const lp = logits[i]! - s.lse;
      if (lp === -Infinity) continue;
      const c: BeamCandidate = { beam, token: ids[i]!, sum: s.sum + lp, logprob: lp };
      if (best.length === k && !worse(best[k - 1]!, c)) continue;
      let j = best.length;
      while (j > 0 && worse(best[j - 1]!, c)) j--;
      best.splice(j, 0, c);
      if (best.length > k) best.pop();
    }
  });
  return best;
}
