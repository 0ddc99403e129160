/**
 * Presence and frequency penalties in the OpenAI form (OpenAI API reference, "presence_penalty" /
 * "frequency_penalty"): l_t ← l_t − presence · [c_t > 0] − frequency · c_t, where c_t is how often t
 * occurs in the GENERATED tokens so far. The prompt is not counted (as in vLLM's implementation of
 * the OpenAI API): a penalty meant to discourage the model repeating itself should not punish it
 * for using the words of the question. Both values range over [-2, 2] like the OpenAI API.
 */
import { forEachListed } from '../candidates.js';
import type { Candidates, LogitsProcessor, ProcessorContext } from '../types.js';
import { checkNumber } from './check.js';

/** Subtracts presence·[count>0] + frequency·count from each generated token's logit. */
export class PresenceFrequencyPenalty implements LogitsProcessor {
  readonly name = 'presence-frequency-penalty';
  readonly params: { readonly presence: number; readonly frequency: number };
  private readonly counts = new Map<number, number>();
  constructor(readonly presence: number, readonly frequency: number) {
    checkNumber('presencePenalty', presence, -2, 2);
    checkNumber('frequencyPenalty', frequency, -2, 2);
    this.params = { presence, frequency };
  }
  apply(c: Candidates, ctx: ProcessorContext): void {
    if (this.presence === 0 && this.frequency === 0) return;
    const t = ctx.tokens, counts = this.counts;
    counts.clear();
    for (let i = ctx.promptLength; i < t.length; i++) counts.set(t[i]!, (counts.get(t[i]!) ?? 0) + 1);
    const lg = c.logits, pres = this.presence, freq = this.frequency;
    forEachListed(c, counts, (i, n) => { lg[i] = lg[i]! - pres - freq * n; });
    if (counts.size > 0) c.sorted = false;
  }
}

/** Presence/frequency penalty processor (each in [-2, 2]; both 0 disables). */
export function createPresenceFrequencyPenalty(presence: number, frequency: number): PresenceFrequencyPenalty {
  return new PresenceFrequencyPenalty(presence, frequency);
}
