/** Strict parsers for numeric CLI arguments: "12abc", "" or "1e999" are errors, not silently coerced. */
import { InvalidArgumentError } from 'commander';

export function parseInteger(value: string): number {
  if (!/^[+-]?\d+$/.test(value.trim())) throw new InvalidArgumentError(`expected an integer, got "${value}"`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`integer out of range: "${value}"`);
  return n;
}

/** A parser of integers >= 1, its error naming `what` ("a thread count", "a batch size"). */
export function positiveInteger(what: string): (value: string) => number {
  return (value) => {
    const n = parseInteger(value);
    if (n < 1) throw new InvalidArgumentError(`expected ${what} >= 1, got "${value}"`);
    return n;
  };
}

export function parseNumber(value: string): number {
  const v = value.trim();
  if (/^[+-]?inf(inity)?$/i.test(v)) return v.startsWith('-') ? -Infinity : Infinity;
  if (v === '' || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(v)) throw new InvalidArgumentError(`expected a number, got "${value}"`);
  const n = Number(v);
  if (!Number.isFinite(n)) throw new InvalidArgumentError(`number out of range: "${value}"`);
  return n;
}

/** For repeatable options: collect into an array. */
export function collect<T>(parse: (v: string) => T): (v: string, prev: T[] | undefined) => T[] {
  return (v, prev) => [...(prev ?? []), parse(v)];
}
