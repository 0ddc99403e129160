/**
 * Logit bias (OpenAI "logit_bias"): l_t ← l_t + b_t for each listed token id. A bias of -Infinity
 * bans the token outright: its probability becomes exactly 0 and no sampler can pick it.
 */
import { forEachListed } from '../candidates.js';
import type { Candidates, LogitsProcessor, ParamValue, ProcessorContext } from '../types.js';
import { InvalidOptionError } from '../../errors.js';
import { describeValue } from './check.js';

/** Adds a fixed bias to chosen token ids (-Infinity bans). */
export class LogitBias implements LogitsProcessor {
  readonly name = 'logit-bias';
  readonly params: { readonly bias: Readonly<Record<string, ParamValue>> };
  private readonly bias: ReadonlyMap<number, number>;
  /** `vocabSize`, when given, bounds the ids. */
  constructor(bias: ReadonlyMap<number, number>, vocabSize?: number) {
    const shown: Record<string, ParamValue> = {};
    for (const [id, b] of bias) {
      if (!Number.isInteger(id) || id < 0 || (vocabSize !== undefined && id >= vocabSize)) {
        const range = vocabSize === undefined ? '>= 0' : `in [0, ${vocabSize - 1}]`;
        throw new InvalidOptionError(`logitBias token id must be an integer ${range}, got ${describeValue(id)}`);
      }
      if (typeof b !== 'number' || Number.isNaN(b) || b === Infinity) {
        throw new InvalidOptionError(`logitBias[${id}] must be a finite number or -Infinity (ban), got ${describeValue(b)}`);
      }
      // JSON has no -Infinity; report a ban as the string "-inf".
      shown[String(id)] = b === -Infinity ? '-inf' : b;
    }
    this.bias = new Map(bias);
    this.params = { bias: shown };
  }
  apply(c: Candidates, _ctx?: ProcessorContext): void {
    const lg = c.logits;
    forEachListed(c, this.bias, (i, b) => { lg[i] = lg[i]! + b; });
    if (this.bias.size > 0) c.sorted = false;
  }
}

/** Logit-bias processor from id → bias pairs. */
export function createLogitBias(bias: ReadonlyMap<number, number>, vocabSize?: number): LogitBias {
  return new LogitBias(bias, vocabSize);
}
