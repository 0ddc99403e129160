/**
 * Repetition penalty in the CTRL / Hugging Face form (Keskar et al. 2019, "CTRL"): for every
 * distinct token t in the window, l_t ← l_t / r if l_t > 0, else l_t · r. With r > 1 this always
 * lowers the token's probability whatever the sign of its logit; repeats are not counted.
 *
 * Window: the last `lastN` tokens of the context, prompt included; lastN = -1 (the default) means
 * the whole context, as Hugging Face's RepetitionPenaltyLogitsProcessor does over `input_ids`.
 * (llama.cpp defaults to the last 64 tokens; pass repetitionPenaltyLastN: 64 for that.)
 */
import { forEachListed } from '../candidates.js';
import type { Candidates, LogitsProcessor, ProcessorContext } from '../types.js';
import { checkNumber } from './check.js';
import { InvalidOptionError } from '../../errors.js';

/** Divides positive / multiplies negative logits of recently seen tokens by the penalty. */
export class RepetitionPenalty implements LogitsProcessor {
  readonly name = 'repetition-penalty';
  readonly params: { readonly penalty: number; readonly lastN: number };
  private readonly seen = new Map<number, number>();
  constructor(readonly penalty: number, readonly lastN = -1) {
    checkNumber('repetitionPenalty', penalty, 0, Infinity, { minOpen: true, maxOpen: true });
    if (lastN !== -1) {
      if (!Number.isSafeInteger(lastN) || lastN < 1) {
        throw new InvalidOptionError(`repetitionPenaltyLastN must be an integer >= 1, or -1 for the whole context, got ${lastN}`);
      }
    }
    this.params = { penalty, lastN };
  }
  apply(c: Candidates, ctx: ProcessorContext): void {
    if (this.penalty === 1) return;
    const t = ctx.tokens;
    const start = this.lastN === -1 ? 0 : Math.max(0, t.length - this.lastN);
    const seen = this.seen;
    seen.clear();
    for (let i = start; i < t.length; i++) seen.set(t[i]!, 1);
    const lg = c.logits, r = this.penalty;
    forEachListed(c, seen, (i) => {
      const x = lg[i]!;
      lg[i] = x > 0 ? x / r : x * r;
    });
    if (seen.size > 0) c.sorted = false;
  }
}

/** Repetition penalty processor (penalty > 0; 1 disables). */
export function createRepetitionPenalty(penalty: number, lastN = -1): RepetitionPenalty {
  return new RepetitionPenalty(penalty, lastN);
}
