/**
 * Decoding strategy options — how many sequences and how they are searched — and the rules for
 * combining them with the sampling controls. The rules (one clear error each):
 * - `numBeams` > 1 is deterministic beam search (Hugging Face `num_beams` with `do_sample=False`):
 *   the random-sampling controls (temperature other than 0/1, topK, topP, typicalP, minP, seed)
 *   are rejected with it rather than silently ignored; penalties, logit bias, no-repeat-n-gram and
 *   user processors (constraints) do apply, to every beam.
 * - `lengthPenalty`, `earlyStopping`, `numReturnSequences` need `numBeams` > 1.
 * - `numReturnSequences` ≤ `numBeams`. With beam search, `n` is another name for
 *   `numReturnSequences` (both may be given only if equal).
 * - `n` > 1 without beams draws n independent samples; greedy decoding (temperature 0) is
 *   rejected there, because it would return n identical sequences.
 */
import { InvalidOptionError } from '../errors.js';
import type { EarlyStopping } from '../decode/beam.js';
import { validateTopLogprobs } from '../decode/logprobs.js';
import type { SamplingOptions } from '../decode/options.js';
import { checkNumber, describeValue } from '../decode/processors/check.js';

/** Options that choose the strategy and what results carry. */
export interface StrategyOptions {
  /** Independent samples from one prompt (integer in [1, 128]; default 1), sharing its prefill. */
  n?: number;
  /** Beam search with this many beams (integer in [1, 128]; default 1 = no beam search). */
  numBeams?: number;
  /** Beam score = Σ logprobs / length^lengthPenalty (default 1, as Hugging Face). */
  lengthPenalty?: number;
  /** Beam search stopping rule: true, false (default) or 'never' (Hugging Face semantics). */
  earlyStopping?: EarlyStopping;
  /** Beam search: how many of the best hypotheses to return (default 1, ≤ numBeams). */
  numReturnSequences?: number;
  /** Per-token log-probabilities with this many top alternatives (0–20), raw and processed. */
  topLogprobs?: number;
}

export const STRATEGY_OPTION_KEYS = ['n', 'numBeams', 'lengthPenalty', 'earlyStopping', 'numReturnSequences', 'topLogprobs'] as const satisfies readonly (keyof StrategyOptions)[];

/** The resolved strategy. */
export type Strategy =
  | { kind: 'sample'; n: number }
  | { kind: 'beam'; numBeams: number; lengthPenalty: number; earlyStopping: EarlyStopping; numReturnSequences: number };

/** Most sequences or beams one request may ask for (each holds its own KV cache). */
export const MAX_SEQUENCES = 128;

/** Sampling options that make no sense with deterministic beam search, with their neutral values. */
const SAMPLING_ONLY: readonly [keyof SamplingOptions, (v: unknown) => boolean][] = [
  ['temperature', (v) => v === 0 || v === 1], ['topK', (v) => v === 0], ['topP', (v) => v === 1],
  ['typicalP', (v) => v === 1], ['minP', (v) => v === 0], ['seed', () => false],
];

/** Validates the strategy options against each other and the sampling options; see the module comment. */
export function resolveStrategy(o: StrategyOptions, sampling: SamplingOptions): Strategy {
  const int = (name: string, v: unknown) => checkNumber(name, v, 1, MAX_SEQUENCES, { integer: true });
  if (o.n !== undefined) int('n', o.n);
  if (o.numBeams !== undefined) int('numBeams', o.numBeams);
  if (o.numReturnSequences !== undefined) int('numReturnSequences', o.numReturnSequences);
  if (o.lengthPenalty !== undefined) checkNumber('lengthPenalty', o.lengthPenalty, -Infinity, Infinity, { minOpen: true, maxOpen: true });
  if (o.earlyStopping !== undefined && typeof o.earlyStopping !== 'boolean' && o.earlyStopping !== 'never') {
    throw new InvalidOptionError(`earlyStopping must be true, false or "never", got ${describeValue(o.earlyStopping)}`);
  }
  if (o.topLogprobs !== undefined) validateTopLogprobs(o.topLogprobs);
  const numBeams = o.numBeams ?? 1;
  if (numBeams === 1) {
    for (const k of ['lengthPenalty', 'earlyStopping', 'numReturnSequences'] as const) {
      if (o[k] !== undefined) throw new InvalidOptionError(`${k} applies to beam search only: set numBeams > 1`);
    }
    const n = o.n ?? 1;
    if (n > 1 && sampling.temperature === 0) {
      throw new InvalidOptionError(`n = ${n} with greedy decoding (temperature 0) would return ${n} identical sequences: sample (temperature > 0) or use numBeams`);
    }
    return { kind: 'sample', n };
  }
  for (const [k, neutral] of SAMPLING_ONLY) {
    const v = sampling[k];
    if (v !== undefined && !neutral(v)) {
      throw new InvalidOptionError(`${k} cannot be combined with numBeams > 1: beam search is deterministic (drop ${k}, or set numBeams to 1 to sample)`);
    }
  }
  if (o.n !== undefined && o.numReturnSequences !== undefined && o.n !== o.numReturnSequences) {
    throw new InvalidOptionError(`n (${o.n}) and numReturnSequences (${o.numReturnSequences}) disagree; with beam search they mean the same`);
  }
  const numReturnSequences = o.numReturnSequences ?? o.n ?? 1;
  if (numReturnSequences > numBeams) {
    throw new InvalidOptionError(`cannot return ${numReturnSequences} sequences from ${numBeams} beams: numReturnSequences (or n) must be <= numBeams`);
  }
  return { kind: 'beam', numBeams, lengthPenalty: o.lengthPenalty ?? 1, earlyStopping: o.earlyStopping ?? false, numReturnSequences };
}
