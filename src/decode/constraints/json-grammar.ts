/**
 * GBNF building blocks for JSON (RFC 8259): strings with escapes and no raw control characters,
 * numbers, literals, and a generic value. Whitespace between JSON tokens is limited to `ws`
 * bytes (0 = compact JSON), so a model cannot pad forever.
 *
 * Deliberate limits, so every generated number is finite and exact enough to validate:
 * integers have at most 15 digits, fractions at most 15 digits, exponents at most 2 digits.
 * `\u` escapes never encode surrogates, so each string character is exactly one code point
 * (what JSON Schema's minLength/maxLength count).
 */
import { InvalidOptionError } from '../../errors.js';

/** Largest allowed whitespace run. */
export const MAX_WHITESPACE = 64;

/** Digits allowed in the integer part of a number (keeps every integer a safe integer). */
export const INT_DIGITS = 15;

/** The primitive rules, by name. `W` is the whitespace reference ('' when whitespace is 0). */
function primitives(W: string): Record<string, string> {
  const w = W === '' ? '' : ` ${W}`;
  return {
    'json-hex': '[0-9a-fA-F]',
    // One code point per unit: raw UTF-8 (no `"`, `\`, controls) or an escape; \u never a surrogate.
    'json-char': '[^"\\\\\\x00-\\x1F] | "\\\\" ( ["\\\\/bfnrt] | "u" ( [0-9a-cA-Ce-fE-F] json-hex{3} | [dD] [0-7] json-hex{2} ) )',
    'json-string': '"\\"" json-char* "\\""',
    'json-int': `"-"? ( "0" | [1-9] [0-9]{0,${INT_DIGITS - 1}} )`,
    'json-number': 'json-int ( "." [0-9]{1,15} )? ( [eE] [-+]? [0-9]{1,2} )?',
    'json-value': 'json-object | json-array | json-string | json-number | "true" | "false" | "null"',
    'json-member': `json-string${w} ":"${w} json-value${w}`,
    'json-object': `"{"${w} ( json-member ( ","${w} json-member )* )? "}"`,
    'json-array': `"["${w} ( json-value${w} ( ","${w} json-value${w} )* )? "]"`,
  };
}

/** Rule dependencies, so only what is used gets emitted. */
const DEPS: Record<string, readonly string[]> = {
  'json-char': ['json-hex'],
  'json-string': ['json-char'],
  'json-number': ['json-int'],
  'json-value': ['json-object', 'json-array', 'json-string', 'json-number'],
  'json-member': ['json-string', 'json-value'],
  'json-object': ['json-member'],
  'json-array': ['json-value'],
};

/** Checks a whitespace option (integer in [0, MAX_WHITESPACE]). */
export function checkWhitespace(ws: unknown): number {
  if (ws === undefined) return 0;
  if (typeof ws !== 'number' || !Number.isInteger(ws) || ws < 0 || ws > MAX_WHITESPACE) {
    throw new InvalidOptionError(`whitespace must be an integer in [0, ${MAX_WHITESPACE}], got ${String(ws)}`);
  }
  return ws;
}

/** Collects primitive rules on demand and renders them as GBNF lines. */
export class JsonPrimitives {
  private readonly defs: Record<string, string>;
  private readonly used = new Set<string>();
  /** The whitespace reference to put between JSON tokens ('' when none is allowed). */
  readonly W: string;

  constructor(readonly whitespace: number) {
    this.W = whitespace > 0 ? 'ws' : '';
    this.defs = primitives(this.W);
  }

  /** Marks a primitive (and what it needs) as used; returns its name. */
  use(name: string): string {
    if (!(name in this.defs)) throw new Error(`unknown JSON primitive ${name}`);
    if (!this.used.has(name)) {
      this.used.add(name);
      for (const d of DEPS[name] ?? []) this.use(d);
      if (this.W !== '' && /\bws\b/.test(this.defs[name]!)) this.used.add('ws');
    }
    return name;
  }

  /** GBNF lines for every used primitive. */
  render(): string {
    const lines: string[] = [];
    if (this.W !== '') lines.push(`ws ::= [ \\t\\n]{0,${this.whitespace}}`);
    for (const n of Object.keys(this.defs)) if (this.used.has(n)) lines.push(`${n} ::= ${this.defs[n]}`);
    return lines.join('\n');
  }
}

/** GBNF literal for a string (escapes `"`, `\` and control characters). */
export function gbnfLiteral(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Options of JSON mode. */
export interface JsonModeOptions {
  /** 'object' (default, like OpenAI's JSON mode) or any JSON 'value'. */
  root?: 'object' | 'value';
  /** Whitespace bytes allowed between JSON tokens (default 0). */
  whitespace?: number;
}

/** GBNF for JSON mode: any JSON object (or value). */
export function jsonModeGbnf(opts: JsonModeOptions = {}): string {
  const root = opts.root ?? 'object';
  if (root !== 'object' && root !== 'value') throw new InvalidOptionError(`JSON mode root must be "object" or "value", got ${String(root)}`);
  const p = new JsonPrimitives(checkWhitespace(opts.whitespace));
  const start = p.use(root === 'object' ? 'json-object' : 'json-value');
  return `root ::= ${start}\n${p.render()}\n`;
}
