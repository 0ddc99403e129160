/**
 * No-repeat n-gram blocking with Hugging Face semantics (NoRepeatNGramLogitsProcessor, after
 * Paulus et al. 2017): over the whole context (prompt + generated), every n-gram that already
 * occurred may not occur again. With prefix = the last n−1 tokens, each token that followed an
 * earlier occurrence of that prefix gets logit −∞. Nothing is banned while the context holds
 * fewer than n−1 tokens; n = 1 bans every token already present.
 */
import { forEachListed } from '../candidates.js';
import type { Candidates, LogitsProcessor, ProcessorContext } from '../types.js';
import { checkNumber } from './check.js';

/** Bans tokens that would complete an n-gram already in the context. O(context · n) per step. */
export class NoRepeatNgram implements LogitsProcessor {
  readonly name = 'no-repeat-ngram';
  readonly params: { readonly n: number };
  private readonly banned = new Map<number, number>();
  constructor(readonly n: number) {
    checkNumber('noRepeatNgramSize', n, 1, Number.MAX_SAFE_INTEGER, { integer: true });
    this.params = { n };
  }
  apply(c: Candidates, ctx: ProcessorContext): void {
    const t = ctx.tokens, n = this.n, len = t.length;
    if (len + 1 < n) return;
    const banned = this.banned;
    banned.clear();
    const p0 = len - (n - 1); // where the current prefix starts
    // Every earlier window [s, s+n) whose first n−1 tokens equal the prefix.
    for (let s = 0; s + n <= len; s++) {
      let match = true;
      for (let j = 0; j < n - 1; j++) if (t[s + j] !== t[p0 + j]) { match = false; break; }
      if (match) banned.set(t[s + n - 1]!, 1);
    }
    const lg = c.logits;
    forEachListed(c, banned, (i) => { lg[i] = -Infinity; });
    if (banned.size > 0) c.sorted = false;
  }
}

/** No-repeat-n-gram processor (n ≥ 1). */
export function createNoRepeatNgram(n: number): NoRepeatNgram {
  return new NoRepeatNgram(n);
}
