/**
 * Runs a compiled grammar over bytes as a pushdown automaton whose configuration is a set of
 * stacks (llama.cpp's grammar engine: each stack's top is the next terminal to match, deeper
 * entries are return positions). Stacks are hash-consed linked lists and stack sets are interned,
 * so a configuration is a single object and transitions are memoized per (state, byte): the
 * automaton becomes a lazily built DFA. Walking a token trie then costs one table lookup per trie
 * node once the states involved have been seen.
 *
 * Each state also knows `dist`, the fewest bytes that complete the grammar from it (0 when it
 * accepts), from the compiled grammar's minimum lengths.
 */
import { BYTES, END, REF, type CompiledGrammar } from './grammar.js';

/** One stack entry (top first). Interned: equal stacks are the same object. */
interface StackNode {
  readonly id: number;
  readonly pos: number;
  readonly next: StackNode | null;
  /** Fewest bytes that empty this stack. */
  readonly dist: number;
}

/** An automaton configuration: the live stacks plus whether the input so far is a complete sentence. */
export interface AutomatonState {
  readonly id: number;
  /** Stacks whose top is a byte terminal (an empty stack is recorded as `accepting`). */
  readonly stacks: readonly StackNode[];
  readonly accepting: boolean;
  /** Fewest bytes that complete the grammar (0 when accepting). */
  readonly dist: number;
  /** Memoized transitions: undefined = not computed, null = dead. */
  next: (AutomatonState | null | undefined)[];
  epoch: number;
}

/** When the memo grows past this many states it is dropped and rebuilt on demand (bounded memory). */
const MAX_STATES = 20_000; // ≈ 2 KB of transition table each

/** The lazily determinized automaton of one grammar; shared by every constraint (and clone) on it. */
export class GrammarAutomaton {
  readonly initial: AutomatonState;
  private stackIds = new Map<string, StackNode>();
  private stateIds = new Map<string, AutomatonState>();
  private nextId = 0;
  private epoch = 0;

  constructor(readonly grammar: CompiledGrammar) {
    const out = new Collector();
    for (const a of grammar.ruleAlts[grammar.root]!) this.expand(a, null, out);
    this.initial = this.intern(out);
  }

  /** Number of distinct states built so far (in the current memo). */
  get stateCount(): number { return this.stateIds.size; }

  /** The state after reading `byte`, or null when no sentence continues that way. */
  step(s: AutomatonState, byte: number): AutomatonState | null {
    if (s.epoch !== this.epoch) { s.next = new Array(256); s.epoch = this.epoch; }
    const known = s.next[byte];
    if (known !== undefined) return known;
    const g = this.grammar;
    const out = new Collector();
    for (const st of s.stacks) {
      if (g.byteSets[g.arg[st.pos]!]![byte] === 1) this.expand(st.pos + 1, st.next, out);
    }
    const r = out.stacks.size === 0 && !out.accepting ? null : this.intern(out);
    s.next[byte] = r;
    return r;
  }

  /** Reads several bytes; null as soon as one is rejected. */
  stepBytes(s: AutomatonState, bytes: ArrayLike<number>): AutomatonState | null {
    let cur: AutomatonState | null = s;
    for (let i = 0; i < bytes.length && cur !== null; i++) cur = this.step(cur, bytes[i]!);
    return cur;
  }

  /** Whether the whole byte string is a complete sentence of the grammar. */
  accepts(bytes: ArrayLike<number>): boolean {
    return this.stepBytes(this.initial, bytes)?.accepting ?? false;
  }

  /** Whether the byte string can be continued into a sentence (a viable prefix). */
  isPrefix(bytes: ArrayLike<number>): boolean {
    return this.stepBytes(this.initial, bytes) !== null;
  }

  /** Pushes every stack reachable from position `pos` (with return stack `rest`) whose top is a byte terminal. */
  private expand(pos: number, rest: StackNode | null, out: Collector): void {
    const key = `${pos}:${rest === null ? -1 : rest.id}`;
    if (out.visited.has(key)) return; // nullable cycles (e.g. `(x?)*`) would otherwise loop
    out.visited.add(key);
    const g = this.grammar;
    const k = g.kind[pos]!;
    if (k === END) {
      if (rest === null) out.accepting = true;
      else this.expand(rest.pos, rest.next, out);
    } else if (k === BYTES) {
      const node = this.stack(pos, rest);
      out.stacks.set(node.id, node);
    } else if (k === REF) {
      // Tail position: no need to remember where to return (keeps `x*` stacks flat).
      const ret = g.kind[pos + 1] === END ? rest : this.stack(pos + 1, rest);
      for (const a of g.ruleAlts[g.arg[pos]!]!) this.expand(a, ret, out);
    }
  }

  private stack(pos: number, next: StackNode | null): StackNode {
    const key = `${pos}:${next === null ? -1 : next.id}`;
    let n = this.stackIds.get(key);
    if (n === undefined) {
      n = { id: this.nextId++, pos, next, dist: this.grammar.suffixMin[pos]! + (next === null ? 0 : next.dist) };
      this.stackIds.set(key, n);
    }
    return n;
  }

  private intern(out: Collector): AutomatonState {
    const stacks = [...out.stacks.values()].sort((a, b) => a.id - b.id);
    const key = `${out.accepting ? 'A' : ''}${stacks.map((s) => s.id).join(',')}`;
    let s = this.stateIds.get(key);
    if (s === undefined) {
      if (this.stateIds.size >= MAX_STATES) {
        // Drop the memo; states still held elsewhere rebuild their transitions lazily (epoch check).
        this.stateIds = new Map();
        this.stackIds = new Map();
        this.epoch++;
      }
      let dist = out.accepting ? 0 : Infinity;
      for (const st of stacks) dist = Math.min(dist, st.dist);
      s = { id: this.nextId++, stacks, accepting: out.accepting, dist, next: new Array(256), epoch: this.epoch };
      this.stateIds.set(key, s);
    }
    return s;
  }
}

class Collector {
  readonly stacks = new Map<number, StackNode>();
  readonly visited = new Set<string>();
  accepting = false;
}
