/**
 * Typed access to an architecture's GGUF metadata (`<arch>.<key>`), with errors that name the
 * architecture and the missing or malformed key.
 */
import { ModelFormatError, UnsupportedError } from '../errors.js';
import type { MetaValue, ModelFile } from '../format/model-file.js';

/** Reads `<arch>.*` keys of one file. */
export class MetaReader {
  constructor(readonly file: ModelFile, readonly arch: string) {}

  /** Raw value of `<arch>.<key>` (or of a full key when `full` is true). */
  raw(key: string, full = false): MetaValue | undefined {
    return this.file.meta.get(full ? key : `${this.arch}.${key}`);
  }

  private name(key: string): string { return `${this.arch}.${key}`; }

  /** A number; arrays (per-layer values) must hold one repeated value. */
  num(key: string): number | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (Array.isArray(v)) {
      const nums = v.map((e) => (typeof e === 'bigint' ? Number(e) : e));
      if (nums.length === 0 || !nums.every((e) => typeof e === 'number')) throw new ModelFormatError(`${this.arch}: metadata ${this.name(key)} is not a number`);
      const first = nums[0] as number;
      if (!nums.every((e) => e === first)) throw new UnsupportedError(`${this.arch}: per-layer values of ${this.name(key)} differ; tokenloop needs one value for all layers`);
      return first;
    }
    if (typeof v === 'bigint') return Number(v);
    if (typeof v !== 'number') throw new ModelFormatError(`${this.arch}: metadata ${this.name(key)} is not a number`);
    return v;
  }

  /** A required positive integer. */
  int(key: string): number;
  int(key: string, dflt: number): number;
  int(key: string, dflt?: number): number {
    const v = this.num(key);
    if (v === undefined) {
      if (dflt === undefined) throw new ModelFormatError(`${this.arch}: missing required metadata key ${this.name(key)}`);
      return dflt;
    }
    if (!Number.isInteger(v) || v < 0) throw new ModelFormatError(`${this.arch}: metadata ${this.name(key)} = ${v} is not a valid count`);
    return v;
  }

  /** A float with a default. */
  float(key: string, dflt: number): number {
    return this.num(key) ?? dflt;
  }

  /** A string, or undefined. */
  str(key: string): string | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new ModelFormatError(`${this.arch}: metadata ${this.name(key)} is not a string`);
    return v;
  }
}
