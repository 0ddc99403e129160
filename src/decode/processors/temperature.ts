/**
 * Temperature scaling: l_i ← l_i / T, so p_i ∝ exp(l_i / T). T < 1 sharpens, T > 1 flattens.
 * T = 0 (greedy) is not a temperature: options.ts maps it to the greedy sampler instead.
 */
import type { Candidates, LogitsProcessor, ProcessorContext } from '../types.js';
import { checkNumber } from './check.js';

/** Divides every live logit by T (T > 0, finite). Order is preserved, so `sorted` stays valid. */
export class Temperature implements LogitsProcessor {
  readonly name = 'temperature';
  readonly params: { readonly temperature: number };
  private readonly inv: number;
  constructor(temperature: number) {
    checkNumber('temperature', temperature, 0, Infinity, { minOpen: true, maxOpen: true });
    this.params = { temperature };
    this.inv = 1 / temperature;
  }
  apply(c: Candidates, _ctx?: ProcessorContext): void {
    const lg = c.logits, inv = this.inv;
    for (let i = 0; i < c.size; i++) lg[i] = lg[i]! * inv;
  }
}

/** Temperature processor (T > 0). */
export function createTemperature(temperature: number): Temperature {
  return new Temperature(temperature);
}
