/**
 * The grammar constraint as a LogitsProcessor: each step it walks the vocabulary trie with the
 * automaton state and keeps only the candidates whose bytes continue a valid prefix; end-of-
 * generation ids stay only when the text so far is complete (and are all that stays once nothing
 * can follow). With a token budget (`maxTokens`), a token is kept only if the grammar can still be
 * completed in the tokens left after it (each state knows the fewest bytes to completion, and a
 * vocabulary with byte tokens can always emit one byte per token), so generation is steered to a
 * close instead of hitting the length limit mid-value.
 */
import { InvalidOptionError } from '../../errors.js';
import type { Tokenizer } from '../../tokenizer/tokenizer.js';
import { retainCandidates } from '../candidates.js';
import type { Candidates, LogitsProcessor, ParamValue, ProcessorContext } from '../types.js';
import type { AutomatonState, GrammarAutomaton } from './grammar-automaton.js';
import { isTextToken, tokenTrieFor, type TokenTrie } from './token-trie.js';

/** Options shared by every constraint factory. */
export interface ConstraintOptions {
  /**
   * Token budget: the most tokens the generation may take (pass generate()'s maxTokens). Tokens
   * after which the value could no longer be completed in time are masked. Default: unlimited.
   */
  maxTokens?: number;
  /** Ids that end generation (default: the tokenizer's endOfGeneration, plus eos). */
  endOfGeneration?: Iterable<number>;
}

/** Time spent computing masks, for measurements. */
export interface ConstraintStats {
  steps: number;
  totalMs: number;
  maxMs: number;
  /** Automaton states built so far (shared with clones). */
  states: number;
}

/** A LogitsProcessor that keeps output inside a grammar. */
export interface GrammarConstraint extends LogitsProcessor {
  /** True when the accepted text is a complete sentence (e.g. a whole JSON value). */
  isComplete(): boolean;
  /** Advances the state by a chosen token (throws InvalidOptionError if the grammar forbids it). */
  accept(token: number): void;
  /** Whether `bytes` would be a valid continuation from the current state (does not change it). */
  allowsBytes(bytes: ArrayLike<number>): boolean;
  /** Mask timing so far (this copy only). */
  stats(): ConstraintStats;
  clone(): GrammarConstraint;
}

/** What every copy of one constraint shares: automaton, tries, scratch buffers. */
interface Shared {
  readonly name: string;
  readonly params: Readonly<Record<string, ParamValue>>;
  readonly automaton: GrammarAutomaton;
  readonly tokenizer: Tokenizer;
  readonly eog: Int32Array;
  readonly isEog: Uint8Array;
  readonly budget: number;
  readonly stamp: Int32Array;
  readonly validIds: Int32Array;
  readonly validDist: Float64Array;
  readonly walkStates: (AutomatonState | null)[];
  mark: number;
}

class Constraint implements GrammarConstraint {
  private state: AutomatonState;
  private accepted = 0;
  private finished = false;
  private afterBos = false;
  private st: ConstraintStats = { steps: 0, totalMs: 0, maxMs: 0, states: 0 };

  constructor(private readonly sh: Shared, state?: AutomatonState) {
    this.state = state ?? sh.automaton.initial;
  }

  get name(): string { return this.sh.name; }
  get params(): Readonly<Record<string, ParamValue>> { return this.sh.params; }

  isComplete(): boolean { return this.state.accepting; }

  allowsBytes(bytes: ArrayLike<number>): boolean { return this.sh.automaton.stepBytes(this.state, bytes) !== null; }

  stats(): ConstraintStats { return { ...this.st, states: this.sh.automaton.stateCount }; }

  apply(c: Candidates, ctx: ProcessorContext): void {
    const t0 = performance.now();
    const sh = this.sh;
    const last = ctx.tokens.length === 0 ? null : ctx.tokens[ctx.tokens.length - 1]!;
    this.afterBos = last === null || last === sh.tokenizer.bos;
    const mark = ++sh.mark;
    const stamp = sh.stamp;
    if (!this.finished) {
      const trie = tokenTrieFor(sh.tokenizer, this.afterBos);
      // Tokens left after this one, less one for the end-of-generation token; each can carry at
      // least one byte of the shortest completion.
      const left = sh.budget - this.accepted - 2;
      const n = this.walk(trie);
      let best = Infinity, kept = 0;
      for (let i = 0; i < n; i++) {
        const d = sh.validDist[i]!;
        if (d <= left) { stamp[sh.validIds[i]!] = mark; kept++; }
        if (d < best) best = d;
      }
      // Budget already too small (e.g. the budget was tiny from the start): head for the exit anyway.
      if (kept === 0 && n > 0 && !this.state.accepting) {
        for (let i = 0; i < n; i++) if (sh.validDist[i] === best) stamp[sh.validIds[i]!] = mark;
      }
    }
    if (this.state.accepting || this.finished) for (const id of sh.eog) stamp[id] = mark;
    const ids = c.ids;
    retainCandidates(c, (i) => stamp[ids[i]!] === mark);
    const ms = performance.now() - t0;
    this.st.steps++;
    this.st.totalMs += ms;
    if (ms > this.st.maxMs) this.st.maxMs = ms;
  }

  /** Pre-order trie walk; fills sh.validIds/validDist with every token that keeps the state alive. Returns the count. */
  private walk(trie: TokenTrie): number {
    const sh = this.sh, auto = sh.automaton;
    const states = sh.walkStates;
    const { byte, depth, end, tokStart, tokens } = trie;
    const isEog = sh.isEog, ids = sh.validIds, dists = sh.validDist;
    states[0] = this.state;
    let n = 0;
    for (let i = 1; i < trie.nodeCount;) {
      const d = depth[i]!;
      const t = auto.step(states[d - 1]!, byte[i]!);
      if (t === null) { i = end[i]!; continue; }
      states[d] = t;
      for (let k = tokStart[i]!, e = tokStart[i + 1]!; k < e; k++) {
        const id = tokens[k]!;
        if (isEog[id] === 1) continue;
        ids[n] = id; dists[n] = t.dist; n++;
      }
      i++;
    }
    return n;
  }

  accept(token: number): void {
    const sh = this.sh;
    if (!Number.isSafeInteger(token) || token < 0 || token >= sh.tokenizer.vocabSize) {
      throw new InvalidOptionError(`constraint "${sh.name}": token id ${token} is outside the vocabulary`);
    }
    if (sh.isEog[token] === 1) {
      if (!this.state.accepting) throw new InvalidOptionError(`constraint "${sh.name}": end-of-generation token ${token} before the output is complete`);
      this.finished = true;
      return;
    }
    if (this.finished) throw new InvalidOptionError(`constraint "${sh.name}": token ${token} after end of generation`);
    const next = isTextToken(sh.tokenizer, token) ? sh.automaton.stepBytes(this.state, sh.tokenizer.tokenBytes(token, this.afterBos)) : null;
    if (next === null || sh.tokenizer.tokenBytes(token, this.afterBos).length === 0) {
      throw new InvalidOptionError(`constraint "${sh.name}": token ${token} ${JSON.stringify(sh.tokenizer.piece(token))} is not allowed here`);
    }
    this.state = next;
    this.accepted++;
    this.afterBos = false;
  }

  clone(): GrammarConstraint {
    const c = new Constraint(this.sh, this.state);
    c.accepted = this.accepted;
    c.finished = this.finished;
    c.afterBos = this.afterBos;
    return c;
  }
}

/**
 * Wraps an automaton as a constraint for `tokenizer`. `name`/`params` are what describe() reports.
 * Throws InvalidOptionError for a bad budget or when the tokenizer has no end-of-generation id.
 */
export function createAutomatonConstraint(
  automaton: GrammarAutomaton, tokenizer: Tokenizer, opts: ConstraintOptions = {}, name = 'grammar',
  params: Readonly<Record<string, ParamValue>> = {},
): GrammarConstraint {
  const budget = opts.maxTokens ?? Infinity;
  if (budget !== Infinity && (!Number.isSafeInteger(budget) || budget < 1)) {
    throw new InvalidOptionError(`constraint maxTokens must be an integer >= 1, got ${String(opts.maxTokens)}`);
  }
  const eogSet = new Set<number>(opts.endOfGeneration ?? tokenizer.endOfGeneration);
  if (opts.endOfGeneration === undefined && tokenizer.eos !== null) eogSet.add(tokenizer.eos);
  for (const id of eogSet) {
    if (!Number.isSafeInteger(id) || id < 0 || id >= tokenizer.vocabSize) throw new InvalidOptionError(`constraint: end-of-generation id ${id} is outside the vocabulary`);
  }
  if (eogSet.size === 0) throw new InvalidOptionError('constraint: the tokenizer has no end-of-generation token, so a complete output could never end');
  if (budget < automaton.initial.dist + 1) { // the bytes (one per token at worst) + end of generation
    throw new InvalidOptionError(`constraint maxTokens ${budget} is too small: the shortest valid output takes ${automaton.initial.dist} bytes`);
  }
  tokenTrieFor(tokenizer); // build (or fetch) the vocabulary trie now rather than in the first step
  const v = tokenizer.vocabSize;
  const isEog = new Uint8Array(v);
  for (const id of eogSet) isEog[id] = 1;
  const sh: Shared = {
    name, params: { ...params, ...(budget !== Infinity && { maxTokens: budget }) }, automaton, tokenizer,
    eog: Int32Array.from(eogSet), isEog, budget,
    stamp: new Int32Array(v), validIds: new Int32Array(v), validDist: new Float64Array(v),
    walkStates: [], mark: 0,
  };
  return new Constraint(sh);
}
