/**
 * Parameter checks shared by the processor factories, so a processor built directly (not through
 * options.ts) still rejects bad settings with an InvalidOptionError naming the setting.
 */
import { InvalidOptionError } from '../../errors.js';

/** Throws unless `x` is a finite number within [min, max] (open ends when the flags say so). */
export function checkNumber(
  name: string, x: unknown, min: number, max: number,
  o: { minOpen?: boolean; maxOpen?: boolean; integer?: boolean } = {},
): number {
  const range = `${o.minOpen ? '(' : '['}${min}, ${max}${o.maxOpen ? ')' : ']'}`;
  const what = o.integer ? 'an integer' : 'a finite number';
  if (typeof x !== 'number' || !Number.isFinite(x) || (o.integer && !Number.isInteger(x))
      || (o.minOpen ? x <= min : x < min) || (o.maxOpen ? x >= max : x > max)) {
    throw new InvalidOptionError(`${name} must be ${what} in ${range}, got ${describeValue(x)}`);
  }
  return x;
}

/** A short rendering of a bad value for an error message. */
export function describeValue(x: unknown): string {
  if (typeof x === 'string') return JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}…` : x);
  if (typeof x === 'number' || typeof x === 'boolean' || x === null || x === undefined) return String(x);
  return Array.isArray(x) ? 'an array' : `a ${typeof x}`;
}
