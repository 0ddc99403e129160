/**
 * A sampling chain: ordered logits processors plus one final sampler, run over a candidate
 * buffer that is allocated once and reused every step (llama.cpp's sampler-chain design).
 * The chain owns its Rng so that a seed fully determines its picks.
 */
import { UnsupportedError } from '../errors.js';
import { createCandidates, fillCandidates } from './candidates.js';
import type { Rng } from './rng.js';
import type { Candidates, LogitsProcessor, ParamValue, ProcessorContext, Sampler } from './types.js';

/** One stage of a chain as reported to the user. */
export interface StageDescription {
  readonly name: string;
  readonly params: Readonly<Record<string, ParamValue>>;
}

/** The effective chain: what actually runs, in order, and the seed that makes it reproducible. */
export interface ChainDescription {
  readonly processors: readonly StageDescription[];
  readonly sampler: StageDescription;
  readonly seed: number;
}

/** Ordered processors + final sampler + seeded Rng. */
export class SamplingChain {
  private cands: Candidates | null = null;
  constructor(
    readonly processors: readonly LogitsProcessor[],
    readonly sampler: Sampler,
    readonly rng: Rng,
    /** The seed the Rng was created from (reported by describe()). */
    readonly seed: number,
  ) {}

  /**
   * Runs the processors over one step's logits and returns the processed candidates. The returned
   * object is the chain's reusable buffer: valid until the next call on this chain.
   */
  process(logits: Float32Array, ctx: ProcessorContext): Candidates {
    if (this.cands === null || this.cands.ids.length < logits.length) this.cands = createCandidates(logits.length);
    const c = fillCandidates(this.cands, logits);
    for (const p of this.processors) p.apply(c, ctx);
    return c;
  }

  /** Processes the logits and picks a token. Does not call accept(): the caller decides what was appended. */
  sample(logits: Float32Array, ctx: ProcessorContext): number {
    const c = this.process(logits, ctx);
    return this.sampler.select(c, this.rng);
  }

  /** The processed candidates of the last process()/sample() call (for processed logprobs), or null. */
  get candidates(): Candidates | null {
    return this.cands;
  }

  /** Tells every stateful processor which token was appended. */
  accept(token: number): void {
    for (const p of this.processors) p.accept?.(token);
  }

  /**
   * An independent copy with the same settings and processor state. The copy's Rng is
   * `rng ?? this.rng.split()`: by default a split, so parallel samples do not draw identical
   * numbers; pass an Rng to control it. A stateful processor (one with accept()) must have clone().
   */
  clone(rng?: Rng): SamplingChain {
    const ps = this.processors.map((p) => {
      if (p.clone) return p.clone();
      if (p.accept) throw new UnsupportedError(`processor "${p.name}" keeps state (accept) but has no clone(), so the chain cannot be cloned`);
      return p; // stateless: safe to share (scratch buffers are only used inside apply)
    });
    return new SamplingChain(ps, this.sampler, rng ?? this.rng.split(), this.seed);
  }

  /** The effective chain (names + parameters), for reporting with each result. */
  describe(): ChainDescription {
    const stage = (s: { name: string; params?: Readonly<Record<string, ParamValue>> }): StageDescription =>
      ({ name: s.name, params: { ...(s.params ?? {}) } });
    return { processors: this.processors.map(stage), sampler: stage(this.sampler), seed: this.seed };
  }
}

/** A chain from explicit parts (options.ts's createSamplingChain is the usual way to get one). */
export function createChain(processors: readonly LogitsProcessor[], sampler: Sampler, rng: Rng, seed: number): SamplingChain {
  return new SamplingChain([...processors], sampler, rng, seed);
}
