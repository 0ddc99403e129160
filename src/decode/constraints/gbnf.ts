/**
 * Parser for GBNF, llama.cpp's grammar notation (grammars/README.md there): rules `name ::= alts`,
 * literals `"..."`, character classes `[a-z]` / `[^...]`, `.` (any character), groups `( )`,
 * postfix `* + ? {m} {m,} {m,n}`, `|` alternatives, `#` comments. Escapes: `\n \r \t \\ \" \[ \]
 * \- \xHH \uHHHH \UHHHHHHHH`. The start rule is `root`.
 *
 * A rule ends where the next `name ::=` begins (so rules may span lines freely — a superset of
 * llama.cpp's line rules). The result is a small AST that grammar.ts compiles to a byte automaton.
 */
import { InvalidOptionError } from '../../errors.js';
import type { CodePointRange } from './utf8-ranges.js';

/** A grammar expression. Literals hold code points; classes hold code-point ranges. */
export type GrammarExpr =
  | { readonly kind: 'literal'; readonly codePoints: readonly number[] }
  | { readonly kind: 'class'; readonly ranges: readonly CodePointRange[]; readonly negated: boolean }
  | { readonly kind: 'ref'; readonly name: string }
  | { readonly kind: 'seq'; readonly items: readonly GrammarExpr[] }
  | { readonly kind: 'alt'; readonly alts: readonly GrammarExpr[] }
  | { readonly kind: 'repeat'; readonly expr: GrammarExpr; readonly min: number; readonly max: number };

/** Parsed grammar: rule bodies by name, in definition order. */
export interface GrammarAst {
  readonly rules: ReadonlyMap<string, GrammarExpr>;
  readonly root: string;
}

/** Largest `{m,n}` count accepted (each repetition becomes a rule). */
export const MAX_REPEAT = 10_000;

const NAME = /[A-Za-z0-9_-]/;

class Parser {
  private pos = 0;
  constructor(private readonly src: string) {}

  fail(msg: string, at = this.pos): never {
    const before = this.src.slice(0, at);
    const line = before.split('\n').length;
    const col = at - before.lastIndexOf('\n');
    throw new InvalidOptionError(`grammar: ${msg} at line ${line}, column ${col}`);
  }

  /** Skips spaces, newlines and comments. */
  space(): void {
    const s = this.src;
    while (this.pos < s.length) {
      const c = s[this.pos]!;
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') this.pos++;
      else if (c === '#') { while (this.pos < s.length && s[this.pos] !== '\n') this.pos++; }
      else break;
    }
  }

  eof(): boolean { return this.pos >= this.src.length; }

  name(): string {
    const start = this.pos;
    while (this.pos < this.src.length && NAME.test(this.src[this.pos]!)) this.pos++;
    if (this.pos === start) this.fail(`expected a rule name, found ${JSON.stringify(this.src[this.pos] ?? 'end of input')}`);
    return this.src.slice(start, this.pos);
  }

  /** True when a `name ::=` starts here (the start of the next rule). */
  atRuleStart(): boolean {
    const m = /^[A-Za-z0-9_-]+[ \t]*::=/.exec(this.src.slice(this.pos, this.pos + 200));
    return m !== null;
  }

  grammar(): GrammarAst {
    const rules = new Map<string, GrammarExpr>();
    this.space();
    while (!this.eof()) {
      const at = this.pos;
      const name = this.name();
      this.space();
      if (!this.src.startsWith('::=', this.pos)) this.fail(`expected "::=" after rule name "${name}"`);
      this.pos += 3;
      this.space();
      const body = this.alternatives();
      if (rules.has(name)) this.fail(`rule "${name}" is defined twice`, at);
      rules.set(name, body);
      this.space();
      if (!this.eof() && !this.atRuleStart()) this.fail(`unexpected ${JSON.stringify(this.src[this.pos])}`);
    }
    if (!rules.has('root')) throw new InvalidOptionError('grammar: no "root" rule');
    return { rules, root: 'root' };
  }

  alternatives(): GrammarExpr {
    const alts = [this.sequence()];
    this.space();
    while (this.src[this.pos] === '|') {
      this.pos++;
      this.space();
      alts.push(this.sequence());
      this.space();
    }
    return alts.length === 1 ? alts[0]! : { kind: 'alt', alts };
  }

  sequence(): GrammarExpr {
    const items: GrammarExpr[] = [];
    for (;;) {
      this.space();
      const c = this.src[this.pos];
      if (c === undefined || c === '|' || c === ')' || this.atRuleStart()) break;
      items.push(this.postfix(this.primary()));
    }
    return items.length === 1 ? items[0]! : { kind: 'seq', items };
  }

  postfix(e: GrammarExpr): GrammarExpr {
    for (;;) {
      const c = this.src[this.pos];
      if (c === '*') { this.pos++; e = { kind: 'repeat', expr: e, min: 0, max: Infinity }; }
      else if (c === '+') { this.pos++; e = { kind: 'repeat', expr: e, min: 1, max: Infinity }; }
      else if (c === '?') { this.pos++; e = { kind: 'repeat', expr: e, min: 0, max: 1 }; }
      else if (c === '{') {
        const at = this.pos;
        const m = /^\{\s*(\d+)\s*(,\s*(\d*)\s*)?\}/.exec(this.src.slice(this.pos, this.pos + 40));
        if (!m) this.fail('bad repetition, expected {m}, {m,} or {m,n}');
        this.pos += m[0].length;
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
        if (max < min) this.fail(`repetition {${min},${max}} has max < min`, at);
        if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) this.fail(`repetition count above ${MAX_REPEAT}`, at);
        e = { kind: 'repeat', expr: e, min, max };
      } else return e;
    }
  }

  primary(): GrammarExpr {
    const c = this.src[this.pos]!;
    if (c === '"') return this.literal();
    if (c === '[') return this.charClass();
    if (c === '.') { this.pos++; return { kind: 'class', ranges: [], negated: true }; }
    if (c === '(') {
      this.pos++;
      this.space();
      const e = this.alternatives();
      this.space();
      if (this.src[this.pos] !== ')') this.fail('expected ")"');
      this.pos++;
      return e;
    }
    if (NAME.test(c)) return { kind: 'ref', name: this.name() };
    return this.fail(`unexpected ${JSON.stringify(c)}`);
  }

  /** One (possibly escaped) character as a code point. */
  char(): number {
    const s = this.src;
    if (this.pos >= s.length) this.fail('unterminated literal or class');
    if (s[this.pos] !== '\\') {
      const cp = s.codePointAt(this.pos)!;
      this.pos += cp > 0xffff ? 2 : 1;
      return cp;
    }
    const e = s[this.pos + 1];
    this.pos += 2;
    const simple: Record<string, number> = { n: 10, r: 13, t: 9, '\\': 92, '"': 34, '[': 91, ']': 93, '-': 45, '/': 47, "'": 39 };
    if (e !== undefined && e in simple) return simple[e]!;
    const width = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    if (width === 0) this.fail(`unknown escape "\\${e ?? ''}"`, this.pos - 2);
    const hex = s.slice(this.pos, this.pos + width);
    if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== width) this.fail(`bad \\${e} escape`, this.pos - 2);
    this.pos += width;
    const cp = parseInt(hex, 16);
    if (cp > 0x10ffff) this.fail(`code point ${hex} is beyond U+10FFFF`, this.pos - width - 2);
    return cp;
  }

  literal(): GrammarExpr {
    this.pos++; // opening quote
    const cps: number[] = [];
    while (this.src[this.pos] !== '"') {
      if (this.eof()) this.fail('unterminated string literal');
      cps.push(this.char());
    }
    this.pos++;
    return { kind: 'literal', codePoints: cps };
  }

  charClass(): GrammarExpr {
    this.pos++; // [
    let negated = false;
    if (this.src[this.pos] === '^') { negated = true; this.pos++; }
    const ranges: [number, number][] = [];
    while (this.src[this.pos] !== ']') {
      if (this.eof()) this.fail('unterminated character class');
      const lo = this.char();
      let hi = lo;
      if (this.src[this.pos] === '-' && this.src[this.pos + 1] !== ']') {
        this.pos++;
        hi = this.char();
        if (hi < lo) this.fail('character range is reversed');
      }
      ranges.push([lo, hi]);
    }
    this.pos++;
    return { kind: 'class', ranges, negated };
  }
}

/** Parses GBNF text. Throws InvalidOptionError naming the problem and its line/column. */
export function parseGbnf(text: string): GrammarAst {
  if (typeof text !== 'string') throw new InvalidOptionError('grammar must be a string of GBNF text');
  return new Parser(text).grammar();
}
