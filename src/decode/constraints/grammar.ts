/**
 * Compiles a grammar AST into the flat byte-level form the automaton runs: every rule is a list
 * of alternatives, every alternative a run of elements ending in END, stored in parallel arrays
 * (the layout llama.cpp's grammar engine uses, but over bytes instead of code points). Character
 * classes become byte-range sequences (utf8-ranges.ts), so tokens that end mid-character are
 * handled naturally; groups and repetitions become helper rules (`x*` → `r ::= x r | ε`).
 *
 * Also precomputed: the fewest bytes that complete each rule and each position (used to steer a
 * generation to a close within a token budget), and a left-recursion check (the stack automaton
 * would never advance on a left-recursive rule).
 */
import { InvalidOptionError } from '../../errors.js';
import type { GrammarAst, GrammarExpr } from './gbnf.js';
import { utf8Sequences, normalizeRanges, type CodePointRange } from './utf8-ranges.js';

export const END = 0;
export const BYTES = 1;
export const REF = 2;

/** The compiled grammar. Positions index `kind`/`arg`/`suffixMin`. */
export interface CompiledGrammar {
  /** END, BYTES or REF per position. */
  readonly kind: Uint8Array;
  /** BYTES: index into byteSets; REF: rule id; END: the rule id it ends. */
  readonly arg: Int32Array;
  /** 256-entry membership tables (1 = byte allowed). */
  readonly byteSets: readonly Uint8Array[];
  /** Start position of each alternative, per rule. */
  readonly ruleAlts: readonly Int32Array[];
  readonly ruleNames: readonly string[];
  readonly root: number;
  /** Fewest bytes from this position to the end of its alternative (inclusive). */
  readonly suffixMin: Float64Array;
  /** Fewest bytes any derivation of the rule takes. */
  readonly ruleMin: Float64Array;
}

type Elem = { k: 'b'; set: number } | { k: 'r'; rule: number };

class Builder {
  readonly names: string[] = [];
  readonly bodies: (Elem[][] | null)[] = [];
  readonly sets: Uint8Array[] = [];
  private readonly setIds = new Map<string, number>();
  private readonly ids = new Map<string, number>();
  private readonly classRules = new Map<string, number>();
  /** `x*` helper rules: their self-reference after a nullable x is not left recursion that matters. */
  readonly stars = new Set<number>();

  constructor(private readonly ast: GrammarAst) {
    for (const name of ast.rules.keys()) this.declare(name);
  }

  declare(name: string): number {
    const id = this.names.length;
    this.names.push(name);
    this.bodies.push(null);
    this.ids.set(name, id);
    return id;
  }

  fresh(base: string): number {
    let i = this.names.length, name = `${base}-${i}`;
    while (this.ids.has(name)) name = `${base}-${++i}`;
    return this.declare(name);
  }

  byteSet(lo: number, hi: number, extra?: Uint8Array): number {
    const t = extra ?? new Uint8Array(256);
    if (!extra) t.fill(1, lo, hi + 1);
    const key = t.join('');
    let id = this.setIds.get(key);
    if (id === undefined) { id = this.sets.length; this.sets.push(t); this.setIds.set(key, id); }
    return id;
  }

  /** Elements of one sequence (groups and repetitions become helper rules of `owner`). */
  seq(e: GrammarExpr, owner: string): Elem[] {
    switch (e.kind) {
      case 'literal': {
        const out: Elem[] = [];
        for (const b of Buffer.from(String.fromCodePoint(...e.codePoints), 'utf8')) out.push({ k: 'b', set: this.byteSet(b, b) });
        return out;
      }
      case 'class': return this.charClass(e.ranges, e.negated);
      case 'ref': {
        const id = this.ids.get(e.name);
        if (id === undefined || !this.ast.rules.has(e.name)) throw new InvalidOptionError(`grammar: rule "${owner}" refers to undefined rule "${e.name}"`);
        return [{ k: 'r', rule: id }];
      }
      case 'seq': return e.items.flatMap((x) => this.seq(x, owner));
      case 'alt': {
        const id = this.fresh(owner);
        this.bodies[id] = e.alts.map((a) => this.seq(a, owner));
        return [{ k: 'r', rule: id }];
      }
      case 'repeat': return this.repeat(e.expr, e.min, e.max, owner);
    }
  }

  charClass(ranges: readonly CodePointRange[], negated: boolean): Elem[] {
    const norm = normalizeRanges(ranges, negated);
    const key = norm.map(([a, b]) => `${a}-${b}`).join(',');
    const seqs = utf8Sequences(norm);
    if (seqs.length === 0) throw new InvalidOptionError(`grammar: character class [${negated ? '^' : ''}${key}] matches nothing`);
    if (seqs.every((s) => s.length === 1)) {
      const t = new Uint8Array(256);
      for (const s of seqs) t.fill(1, s[0]![0], s[0]![1] + 1);
      return [{ k: 'b', set: this.byteSet(0, 0, t) }];
    }
    let id = this.classRules.get(key);
    if (id === undefined) {
      id = this.fresh('char');
      this.classRules.set(key, id);
      this.bodies[id] = seqs.map((s) => s.map(([lo, hi]) => ({ k: 'b', set: this.byteSet(lo, hi) }) as Elem));
    }
    return [{ k: 'r', rule: id }];
  }

  repeat(x: GrammarExpr, min: number, max: number, owner: string): Elem[] {
    let item = this.seq(x, owner);
    if (item.length !== 1) {
      const id = this.fresh(owner);
      this.bodies[id] = [item];
      item = [{ k: 'r', rule: id }];
    }
    const out: Elem[] = [];
    for (let i = 0; i < min; i++) out.push(...item);
    if (max === Infinity) {
      const star = this.fresh(owner);
      this.bodies[star] = [[...item, { k: 'r', rule: star }], []];
      this.stars.add(star);
      out.push({ k: 'r', rule: star });
    } else if (max > min) {
      // opt_k ::= item opt_{k-1} | ε — k optional copies, nested so a skipped copy ends the run.
      let prev = -1;
      for (let k = 1; k <= max - min; k++) {
        const opt = this.fresh(owner);
        this.bodies[opt] = [prev < 0 ? [...item] : [...item, { k: 'r', rule: prev }], []];
        prev = opt;
      }
      out.push({ k: 'r', rule: prev });
    }
    return out;
  }
}

/** Compiles a parsed grammar. Throws InvalidOptionError for undefined rules, rules that can never finish, and left recursion. */
export function compileGrammar(ast: GrammarAst): CompiledGrammar {
  const b = new Builder(ast);
  for (const [name, body] of ast.rules) {
    const id = b.names.indexOf(name);
    b.bodies[id] = body.kind === 'alt' ? body.alts.map((a) => b.seq(a, name)) : [b.seq(body, name)];
  }
  const bodies = b.bodies as Elem[][][];
  const nRules = bodies.length;

  // Fewest bytes per rule: a fixpoint of min over alternatives of the sum over elements.
  const ruleMin = new Float64Array(nRules).fill(Infinity);
  const altLen = (alt: Elem[]) => alt.reduce((s, e) => s + (e.k === 'b' ? 1 : ruleMin[e.rule]!), 0);
  for (let changed = true; changed;) {
    changed = false;
    for (let r = 0; r < nRules; r++) {
      let m = Infinity;
      for (const alt of bodies[r]!) m = Math.min(m, altLen(alt));
      if (m < ruleMin[r]!) { ruleMin[r] = m; changed = true; }
    }
  }
  for (let r = 0; r < nRules; r++) {
    if (ruleMin[r] === Infinity) throw new InvalidOptionError(`grammar: rule "${b.names[r]}" can never finish (it always recurses)`);
  }
  checkLeftRecursion(bodies, ruleMin, b.names, b.stars);

  let total = 0;
  for (const alts of bodies) for (const alt of alts) total += alt.length + 1;
  const kind = new Uint8Array(total), arg = new Int32Array(total), suffixMin = new Float64Array(total);
  const ruleAlts: Int32Array[] = [];
  let p = 0;
  for (let r = 0; r < nRules; r++) {
    const starts = new Int32Array(bodies[r]!.length);
    bodies[r]!.forEach((alt, ai) => {
      starts[ai] = p;
      for (const e of alt) {
        kind[p] = e.k === 'b' ? BYTES : REF;
        arg[p] = e.k === 'b' ? e.set : e.rule;
        p++;
      }
      kind[p] = END; arg[p] = r; suffixMin[p] = 0;
      for (let q = p - 1; q >= starts[ai]!; q--) suffixMin[q] = suffixMin[q + 1]! + (kind[q] === BYTES ? 1 : ruleMin[arg[q]!]!);
      p++;
    });
    ruleAlts.push(starts);
  }
  return { kind, arg, byteSets: b.sets, ruleAlts, ruleNames: b.names, root: b.names.indexOf(ast.root), suffixMin, ruleMin };
}

/** Rejects a rule that can reach itself without consuming a byte first. */
function checkLeftRecursion(bodies: Elem[][][], ruleMin: Float64Array, names: readonly string[], stars: ReadonlySet<number>): void {
  // A star rule reaching itself through a nullable item only repeats an empty match; the
  // automaton's per-step visited set stops that loop, and nothing is lost, so it is allowed.
  const first: number[][] = bodies.map((alts, r) => {
    const out: number[] = [];
    for (const alt of alts) {
      for (const e of alt) {
        if (e.k === 'b') break;
        if (!(e.rule === r && stars.has(r))) out.push(e.rule);
        if (ruleMin[e.rule] !== 0) break;
      }
    }
    return out;
  });
  const state = new Uint8Array(bodies.length); // 0 new, 1 on path, 2 done
  const visit = (r: number): void => {
    state[r] = 1;
    for (const s of first[r]!) {
      if (state[s] === 1) throw new InvalidOptionError(`grammar: rule "${names[s]}" is left-recursive`);
      if (state[s] === 0) visit(s);
    }
    state[r] = 2;
  };
  for (let r = 0; r < bodies.length; r++) if (state[r] === 0) visit(r);
}
