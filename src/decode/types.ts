/**
 * Decoding vocabulary: a candidate list that processors reshape and a sampler picks from
 * (the llama.cpp sampler-chain idea: one array, every control the same small interface).
 */
import type { Rng } from './rng.js';

/** The live candidates. Only the first `size` entries are meaningful. */
export interface Candidates {
  ids: Int32Array;
  logits: Float32Array;
  size: number;
  /** True when entries are sorted by logit, descending. */
  sorted: boolean;
}

/** What a processor may look at besides the scores: the tokens so far. */
export interface ProcessorContext {
  /** Prompt and generated ids, in order. */
  readonly tokens: readonly number[];
  /** How many of `tokens` are the prompt. */
  readonly promptLength: number;
}

/** A setting as reported by `describe()`: JSON-friendly scalars and small records. */
export type ParamValue = number | string | boolean | null | readonly ParamValue[] | { readonly [k: string]: ParamValue };

/** Reshapes candidate logits (temperature, top-k, penalties, ...). */
export interface LogitsProcessor {
  readonly name: string;
  /** The settings this processor runs with, for reporting the effective chain. */
  readonly params?: Readonly<Record<string, ParamValue>>;
  apply(c: Candidates, ctx: ProcessorContext): void;
  /** Called with each chosen token (for stateful processors). */
  accept?(token: number): void;
  /** A fresh copy with the same settings and state (for beams / parallel samples). */
  clone?(): LogitsProcessor;
}

/** Picks one token from the (processed) candidates. */
export interface Sampler {
  readonly name: string;
  /** The settings this sampler runs with, for reporting the effective chain. */
  readonly params?: Readonly<Record<string, ParamValue>>;
  select(c: Candidates, rng: Rng): number;
}
