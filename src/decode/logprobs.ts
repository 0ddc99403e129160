/**
 * Log-probabilities for results: log p_i = l_i − logsumexp(l), with logsumexp computed as
 * max + ln Σ exp(l_j − max) in float64. Two sources, always labelled:
 * - 'raw': the model's own distribution over the full vocabulary (before any processor);
 * - 'processed': the distribution the sampler actually drew from (after penalties, truncation,
 *   temperature); tokens removed by truncation have logprob −∞ there.
 */
import { InvalidOptionError } from '../errors.js';
import { describeValue } from './processors/check.js';
import { expNonPositive } from './exp.js';
import type { Candidates } from './types.js';

/** Most alternatives a result may ask for (the OpenAI API's limit). */
export const MAX_TOP_LOGPROBS = 20;

/** Which distribution a logprob was taken from. */
export type LogprobSource = 'raw' | 'processed';

/** One token and its log-probability. */
export interface TokenLogprob {
  readonly id: number;
  readonly logprob: number;
}

/** The chosen token's logprob and the top alternatives, best first (ties → lower id). */
export interface LogprobResult {
  readonly source: LogprobSource;
  readonly id: number;
  readonly logprob: number;
  readonly top: readonly TokenLogprob[];
}

/** Checks a requested number of alternatives: integer in [0, 20]. */
export function validateTopLogprobs(n: unknown): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_TOP_LOGPROBS) {
    throw new InvalidOptionError(`topLogprobs must be an integer in [0, ${MAX_TOP_LOGPROBS}], got ${describeValue(n)}`);
  }
  return n;
}

/** ln Σ exp(x_i) over x[0..n), float64, max-subtracted. −∞ when every entry is −∞. */
export function logSumExp(x: ArrayLike<number>, n: number = x.length): number {
  let m = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    if (v !== v) throw new RangeError(`logit ${i} is NaN`);
    if (v > m) m = v;
  }
  if (m === -Infinity || m === Infinity) return m;
  let s = 0;
  for (let i = 0; i < n; i++) s += expNonPositive(x[i]! - m);
  return m + Math.log(s);
}

/** log-softmax of raw logits into `out` (float64; allocated when not given). */
export function logSoftmax(logits: Float32Array, out: Float64Array = new Float64Array(logits.length)): Float64Array {
  const lse = logSumExp(logits);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i]! - lse;
  return out;
}

/** The n best (logit, id) pairs of ids[i]/logits[i], i < size: insertion into a small sorted list. */
function topN(ids: ArrayLike<number> | null, logits: ArrayLike<number>, size: number, n: number, lse: number): TokenLogprob[] {
  const best: { id: number; l: number }[] = [];
  if (n === 0) return [];
  for (let i = 0; i < size; i++) {
    const l = logits[i]!, id = ids === null ? i : ids[i]!;
    if (best.length === n) {
      const w = best[n - 1]!;
      if (l < w.l || (l === w.l && id > w.id)) continue;
    }
    let j = best.length;
    while (j > 0 && (best[j - 1]!.l < l || (best[j - 1]!.l === l && best[j - 1]!.id > id))) j--;
    best.splice(j, 0, { id, l });
    if (best.length > n) best.pop();
  }
  return best.map((b) => ({ id: b.id, logprob: b.l - lse }));
}

/** Logprob of `token` and the `topN` best alternatives under the model's raw distribution. */
export function rawLogprobs(logits: Float32Array, token: number, topN_ = 0): LogprobResult {
  const n = validateTopLogprobs(topN_);
  if (!Number.isInteger(token) || token < 0 || token >= logits.length) {
    throw new RangeError(`token ${token} is outside the vocabulary [0, ${logits.length - 1}]`);
  }
  const lse = logSumExp(logits);
  return { source: 'raw', id: token, logprob: logits[token]! - lse, top: topN(null, logits, logits.length, n, lse) };
}

/** Logprob of `token` and the `topN` best alternatives under the processed candidates. */
export function processedLogprobs(c: Candidates, token: number, topN_ = 0): LogprobResult {
  const n = validateTopLogprobs(topN_);
  const lse = logSumExp(c.logits, c.size);
  let logprob = -Infinity;
  for (let i = 0; i < c.size; i++) {
    if (c.ids[i] === token) { logprob = c.logits[i]! - lse; break; }
  }
  return { source: 'processed', id: token, logprob, top: topN(c.ids, c.logits, c.size, n, lse) };
}

/** Either source, by label. */
export function tokenLogprobs(source: LogprobSource, logits: Float32Array, processed: Candidates, token: number, topN_ = 0): LogprobResult {
  return source === 'raw' ? rawLogprobs(logits, token, topN_) : processedLogprobs(processed, token, topN_);
}
