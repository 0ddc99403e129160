/**
 * JSON Schema → GBNF, so a schema constraint is just a grammar constraint (the llama.cpp
 * json-schema-to-grammar idea, written from the JSON Schema 2020-12 spec). Every keyword is
 * either honoured or rejected with UnsupportedError naming it; annotations (title, description,
 * default, examples, ...) are accepted and have no effect.
 *
 * Supported: type (incl. arrays of types), enum, const, anyOf / oneOf (as alternatives — for
 * oneOf the schema author must keep the branches disjoint), allOf with one entry, $ref to "#",
 * "#/$defs/…", "#/definitions/…" or any local JSON pointer (recursion allowed), and per type:
 *  - object: properties, required, additionalProperties. Output has exactly the declared
 *    properties, in declared order, required ones always, optional ones optional; undeclared
 *    properties are never generated (valid whatever additionalProperties says). An object schema
 *    without `properties` generates a map: any keys, values per additionalProperties (any JSON by
 *    default; `false` → only `{}`).
 *  - array: items (one schema), minItems, maxItems.
 *  - string: minLength, maxLength (counted in code points, like JSON Schema).
 *  - integer: minimum, maximum, exclusiveMinimum, exclusiveMaximum (exact digit-range grammar).
 *  - number: integer-valued minimum/maximum (then no exponent is generated); other bounds → Unsupported.
 *  - boolean, null.
 * Numbers stay finite: at most 15 integer digits (json-grammar.ts).
 */
import { InvalidOptionError, UnsupportedError } from '../../errors.js';
import { MAX_REPEAT } from './gbnf.js';
import { checkWhitespace, gbnfLiteral, INT_DIGITS, JsonPrimitives } from './json-grammar.js';

/** Keywords that carry no constraint; accepted and ignored. */
const ANNOTATIONS: ReadonlySet<string> = new Set([
  'title', 'description', '$schema', '$id', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$defs', 'definitions',
]);

const OBJECT_KW = ['properties', 'required', 'additionalProperties'];
const ARRAY_KW = ['items', 'minItems', 'maxItems'];
const STRING_KW = ['minLength', 'maxLength'];
const NUMBER_KW = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
const SUPPORTED: ReadonlySet<string> = new Set([
  ...ANNOTATIONS, 'type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', '$ref', ...OBJECT_KW, ...ARRAY_KW, ...STRING_KW, ...NUMBER_KW,
]);
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const;
type JsonType = (typeof TYPES)[number];

/** Largest integer generated (INT_DIGITS nines). */
const MAX_INT = 10 ** INT_DIGITS - 1;

type Schema = Record<string, unknown>;

function isObject(x: unknown): x is Schema {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Options for converting a schema. */
export interface JsonSchemaGrammarOptions {
  /** Whitespace bytes allowed between JSON tokens (default 0: compact JSON). */
  whitespace?: number;
}

class SchemaConverter {
  readonly rules = new Map<string, string>();
  private readonly refs = new Map<string, string>();
  readonly p: JsonPrimitives;

  constructor(private readonly root: unknown, whitespace: number) {
    this.p = new JsonPrimitives(whitespace);
  }

  /** A sequence of GBNF items, dropping empty ones (the whitespace reference may be ''). */
  private seq(...items: string[]): string {
    return items.filter((x) => x !== '').join(' ');
  }

  /** Adds a rule with a unique name derived from `hint`; returns the name. */
  private rule(hint: string, body: string): string {
    const name = this.reserve(hint);
    this.rules.set(name, body);
    return name;
  }

  private reserve(hint: string): string {
    const base = hint.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'r';
    let name = base, i = 1;
    while (this.rules.has(name) || name === 'ws' || name.startsWith('json-')) name = `${base}-${i++}`;
    this.rules.set(name, '');
    return name;
  }

  visit(s: unknown, path: string, hint: string): string {
    if (s === true) return this.p.use('json-value');
    if (s === false) throw new InvalidOptionError(`JSON Schema at ${path} is false: no value can match it`);
    if (!isObject(s)) throw new InvalidOptionError(`JSON Schema at ${path} must be an object or a boolean`);
    for (const k of Object.keys(s)) {
      if (!SUPPORTED.has(k)) throw new UnsupportedError(`JSON Schema keyword "${k}" is not supported (at ${path})`);
    }
    const keys = Object.keys(s).filter((k) => !ANNOTATIONS.has(k));
    const alone = (kw: string, allowed: readonly string[] = []) => {
      const other = keys.find((k) => k !== kw && !allowed.includes(k));
      if (other !== undefined) throw new UnsupportedError(`JSON Schema keyword "${other}" alongside "${kw}" is not supported (at ${path})`);
    };
    if ('$ref' in s) { alone('$ref'); return this.ref(s['$ref'], path); }
    for (const kw of ['anyOf', 'oneOf'] as const) {
      if (kw in s) {
        alone(kw);
        const list = s[kw];
        if (!Array.isArray(list) || list.length === 0) throw new InvalidOptionError(`JSON Schema "${kw}" at ${path} must be a non-empty array`);
        const alts = list.map((x, i) => this.visit(x, `${path}/${kw}/${i}`, `${hint}-${i}`));
        return this.rule(hint, alts.join(' | '));
      }
    }
    if ('allOf' in s) {
      const list = s['allOf'];
      if (!Array.isArray(list) || list.length !== 1) throw new UnsupportedError(`JSON Schema keyword "allOf" is supported only with exactly one schema (at ${path})`);
      alone('allOf');
      return this.visit(list[0], `${path}/allOf/0`, hint);
    }
    const types = this.types(s, path);
    if ('const' in s || 'enum' in s) {
      const kw = 'const' in s ? 'const' : 'enum';
      alone(kw, ['type']);
      const values = kw === 'const' ? [s['const']] : s['enum'];
      if (!Array.isArray(values) || values.length === 0) throw new InvalidOptionError(`JSON Schema "enum" at ${path} must be a non-empty array`);
      const ok = values.filter((v) => types === null || types.some((t) => matchesType(v, t)));
      if (ok.length === 0) throw new InvalidOptionError(`JSON Schema at ${path}: no ${kw} value has the allowed type`);
      return this.rule(hint, ok.map((v) => gbnfLiteral(JSON.stringify(v))).join(' | '));
    }
    if (types === null) return this.p.use('json-value');
    return this.rule(hint, types.map((t) => this.typed(t, s, path, hint)).join(' | '));
  }

  /** The declared types, or those implied by type-specific keywords; null = any value. */
  private types(s: Schema, path: string): JsonType[] | null {
    const t = s['type'];
    if (t === undefined) {
      const implied: JsonType[] = [];
      if (OBJECT_KW.some((k) => k in s)) implied.push('object');
      if (ARRAY_KW.some((k) => k in s)) implied.push('array');
      if (STRING_KW.some((k) => k in s)) implied.push('string');
      if (NUMBER_KW.some((k) => k in s)) implied.push('number');
      return implied.length === 0 ? null : implied;
    }
    const list = Array.isArray(t) ? t : [t];
    if (list.length === 0) throw new InvalidOptionError(`JSON Schema "type" at ${path} is an empty array`);
    for (const x of list) {
      if (!(TYPES as readonly unknown[]).includes(x)) throw new InvalidOptionError(`JSON Schema "type" at ${path} has unknown type ${JSON.stringify(x)}`);
    }
    // integer ⊂ number: listing both is the same as number.
    const set = new Set(list as JsonType[]);
    if (set.has('number')) set.delete('integer');
    return [...set];
  }

  private typed(t: JsonType, s: Schema, path: string, hint: string): string {
    switch (t) {
      case 'null': return '"null"';
      case 'boolean': return '( "true" | "false" )';
      case 'string': return this.string(s, path);
      case 'integer': return this.integer(s, path);
      case 'number': return this.number(s, path);
      case 'object': return this.object(s, path, hint);
      case 'array': return this.array(s, path, hint);
    }
  }

  private count(s: Schema, kw: string, path: string): number | undefined {
    const v = s[kw];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new InvalidOptionError(`JSON Schema "${kw}" at ${path} must be a non-negative integer`);
    if (v > MAX_REPEAT) throw new UnsupportedError(`JSON Schema "${kw}" above ${MAX_REPEAT} is not supported (at ${path})`);
    return v;
  }

  private string(s: Schema, path: string): string {
    const min = this.count(s, 'minLength', path), max = this.count(s, 'maxLength', path);
    if (min === undefined && max === undefined) return this.p.use('json-string');
    const lo = min ?? 0;
    if (max !== undefined && max < lo) throw new InvalidOptionError(`JSON Schema at ${path}: maxLength ${max} < minLength ${lo}`);
    this.p.use('json-char');
    return `( "\\"" json-char{${lo},${max ?? ''}} "\\"" )`;
  }

  private bound(s: Schema, kw: string, path: string): number | undefined {
    const v = s[kw];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new UnsupportedError(`JSON Schema "${kw}" must be a finite number here (boolean draft-4 form not supported) (at ${path})`);
    }
    return v;
  }

  private integer(s: Schema, path: string): string {
    const bounds = NUMBER_KW.map((k) => this.bound(s, k, path));
    if (bounds.every((b) => b === undefined)) return this.p.use('json-int');
    const [min, max, xmin, xmax] = bounds;
    let lo = -MAX_INT, hi = MAX_INT;
    if (min !== undefined) lo = Math.max(lo, Math.ceil(min));
    if (xmin !== undefined) lo = Math.max(lo, Math.floor(xmin) + 1);
    if (max !== undefined) hi = Math.min(hi, Math.floor(max));
    if (xmax !== undefined) hi = Math.min(hi, Math.ceil(xmax) - 1);
    if (lo > hi) throw new InvalidOptionError(`JSON Schema at ${path}: no integer with at most ${INT_DIGITS} digits lies within the bounds`);
    return `( ${intRange(lo, hi)} )`;
  }

  private number(s: Schema, path: string): string {
    for (const k of ['exclusiveMinimum', 'exclusiveMaximum']) {
      if (k in s) throw new UnsupportedError(`JSON Schema keyword "${k}" is supported on type "integer" only (at ${path})`);
    }
    const min = this.bound(s, 'minimum', path), max = this.bound(s, 'maximum', path);
    if (min === undefined && max === undefined) return this.p.use('json-number');
    for (const [k, v] of [['minimum', min], ['maximum', max]] as const) {
      if (v !== undefined && (!Number.isInteger(v) || Math.abs(v) > MAX_INT)) {
        throw new UnsupportedError(`JSON Schema "${k}" ${v} on type "number": only integer bounds up to ${INT_DIGITS} digits are supported (at ${path})`);
      }
    }
    const lo = min ?? -MAX_INT, hi = max ?? MAX_INT;
    if (lo > hi) throw new InvalidOptionError(`JSON Schema at ${path}: minimum ${lo} > maximum ${hi}`);
    const parts: string[] = [];
    if (lo < 0) parts.push(`"-" ( ${numRange(Math.max(-hi, 0), -lo)} )`);
    if (hi >= 0) parts.push(numRange(Math.max(lo, 0), hi));
    return `( ${parts.join(' | ')} )`;
  }

  private object(s: Schema, path: string, hint: string): string {
    const W = this.p.W;
    const props = s['properties'];
    const required = s['required'] ?? [];
    const ap = s['additionalProperties'];
    if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) throw new InvalidOptionError(`JSON Schema "required" at ${path} must be an array of strings`);
    if (props === undefined) {
      if (required.length > 0) throw new UnsupportedError(`JSON Schema "required" without "properties" is not supported (at ${path})`);
      if (ap === false) return this.seq('"{"', W, '"}"');
      const val = ap === undefined || ap === true ? this.p.use('json-value') : this.visit(ap, `${path}/additionalProperties`, `${hint}-value`);
      const member = this.seq(this.p.use('json-string'), W, '":"', W, val, W);
      return `( ${this.seq('"{"', W)} ( ${member} ( ${this.seq('","', W)} ${member} )* )? "}" )`;
    }
    if (!isObject(props)) throw new InvalidOptionError(`JSON Schema "properties" at ${path} must be an object`);
    if (ap !== undefined && typeof ap !== 'boolean') this.visit(ap, `${path}/additionalProperties`, `${hint}-extra`); // checked, never generated
    const names = Object.keys(props);
    for (const r of required as string[]) {
      if (!names.includes(r)) throw new UnsupportedError(`JSON Schema "required" names "${r}", which is not in "properties" (at ${path})`);
    }
    const kv = names.map((n) => this.seq(gbnfLiteral(JSON.stringify(n)), W, '":"', W, this.visit(props[n], `${path}/properties/${n}`, `${hint}-${n}`), W));
    const req = names.map((n) => (required as string[]).includes(n));
    const comma = this.seq('","', W);
    if (req.every(Boolean)) return `( ${this.seq('"{"', W)} ${kv.join(` ${comma} `)} "}" )`;
    // rest[i]: properties i.. after something was emitted (each needs a leading comma);
    // first[i]: properties i.. when nothing was emitted yet. Optional ones may be skipped.
    let rest = '', first = '';
    for (let i = names.length - 1; i >= 0; i--) {
      const withRest = this.seq(kv[i]!, rest);
      const r = req[i] ? this.seq(comma, withRest) : `( ${this.seq(comma, withRest)} | ${rest === '' ? '""' : rest} )`;
      const f = req[i] ? withRest : `( ${withRest} | ${first === '' ? '""' : first} )`;
      rest = this.rule(`${hint}-rest${i}`, r);
      first = this.rule(`${hint}-first${i}`, f);
    }
    return `( ${this.seq('"{"', W, first)} "}" )`;
  }

  private array(s: Schema, path: string, hint: string): string {
    const W = this.p.W;
    const items = s['items'];
    if (Array.isArray(items)) throw new UnsupportedError(`JSON Schema "items" as an array (tuple form) is not supported; (at ${path})`);
    const min = this.count(s, 'minItems', path) ?? 0, max = this.count(s, 'maxItems', path) ?? Infinity;
    if (max < min) throw new InvalidOptionError(`JSON Schema at ${path}: maxItems ${max} < minItems ${min}`);
    if (max === 0) return `( ${this.seq('"["', W, '"]"')} )`;
    const item = items === undefined ? this.p.use('json-value') : this.visit(items, `${path}/items`, `${hint}-item`);
    const more = `( ${this.seq('","', W, item, W)} ){${Math.max(min - 1, 0)},${max === Infinity ? '' : max - 1}}`;
    const body = this.seq(item, W, more);
    return `( ${this.seq('"["', W)} ${min === 0 ? `( ${body} )?` : body} "]" )`;
  }

  private ref(ref: unknown, path: string): string {
    if (typeof ref !== 'string') throw new InvalidOptionError(`JSON Schema "$ref" at ${path} must be a string`);
    const known = this.refs.get(ref);
    if (known !== undefined) return known;
    if (!ref.startsWith('#')) throw new UnsupportedError(`JSON Schema "$ref" ${JSON.stringify(ref)}: only local references ("#...") are supported (at ${path})`);
    let target: unknown = this.root;
    const pointer = ref.slice(1);
    if (pointer !== '') {
      if (!pointer.startsWith('/')) throw new UnsupportedError(`JSON Schema "$ref" ${JSON.stringify(ref)}: anchors are not supported (at ${path})`);
      for (const raw of pointer.slice(1).split('/')) {
        const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
        if (!isObject(target) && !Array.isArray(target)) target = undefined;
        else target = (target as Record<string, unknown>)[key];
        if (target === undefined) throw new InvalidOptionError(`JSON Schema "$ref" ${JSON.stringify(ref)} does not resolve (at ${path})`);
      }
    }
    const name = this.reserve(`ref-${pointer.split('/').pop() || 'root'}`);
    this.refs.set(ref, name); // before visiting, so recursive references terminate
    this.rules.set(name, this.visit(target, ref, `${name}-def`));
    return name;
  }
}

function matchesType(v: unknown, t: JsonType): boolean {
  switch (t) {
    case 'null': return v === null;
    case 'boolean': return typeof v === 'boolean';
    case 'string': return typeof v === 'string';
    case 'number': return typeof v === 'number';
    case 'integer': return typeof v === 'number' && Number.isInteger(v);
    case 'array': return Array.isArray(v);
    case 'object': return isObject(v);
  }
}

/** GBNF alternatives for the decimal strings of all integers in [x, y], both of the same length. */
function sameLength(x: string, y: string): string[] {
  if (x.length === 0) return [''];
  if (x === y) return [gbnfLiteral(x)];
  if (x[0] === y[0]) return sameLength(x.slice(1), y.slice(1)).map((r) => `${gbnfLiteral(x[0]!)} ${r}`.trim());
  const n = x.length - 1;
  const out: string[] = [];
  let loD = Number(x[0]), hiD = Number(y[0]);
  const tail: string[] = [];
  if (!/^0*$/.test(x.slice(1))) { out.push(...sameLength(x.slice(1), '9'.repeat(n)).map((r) => `"${x[0]}" ${r}`)); loD++; }
  if (!/^9*$/.test(y.slice(1))) { tail.push(...sameLength('0'.repeat(n), y.slice(1)).map((r) => `"${y[0]}" ${r}`)); hiD--; }
  if (loD <= hiD) out.push(`[${loD}-${hiD}]${n > 0 ? ` [0-9]{${n}}` : ''}`);
  return [...out, ...tail];
}

/** GBNF for the canonical decimal forms of the non-negative integers in [a, b]. */
function nonNegativeRange(a: number, b: number): string {
  const alts: string[] = [];
  const la = String(a).length, lb = String(b).length;
  for (let len = la; len <= lb; len++) {
    const lo = len === la ? a : 10 ** (len - 1);
    const hi = len === lb ? b : 10 ** len - 1;
    alts.push(...sameLength(String(lo), String(hi)));
  }
  return alts.join(' | ');
}

/** GBNF for the integers in [lo, hi] (digit-range decomposition, as in regex range generators). */
export function intRange(lo: number, hi: number): string {
  const parts: string[] = [];
  if (lo < 0) parts.push(`"-" ( ${nonNegativeRange(Math.max(1, -hi), -lo)} )`);
  if (hi >= 0) parts.push(nonNegativeRange(Math.max(0, lo), hi));
  return parts.join(' | ');
}

/** GBNF for the non-negative decimal numbers (no exponent) in [a, b], a and b integers. */
function numRange(a: number, b: number): string {
  const exact = `${gbnfLiteral(String(b))} ( "." "0"{1,15} )?`;
  if (a === b) return exact;
  return `( ${nonNegativeRange(a, b - 1)} ) ( "." [0-9]{1,15} )? | ${exact}`;
}

/**
 * Converts a JSON Schema (an object or boolean) to GBNF text whose root rule is the schema.
 * Throws UnsupportedError naming any keyword it cannot honour, InvalidOptionError for a malformed schema.
 */
export function jsonSchemaToGbnf(schema: unknown, opts: JsonSchemaGrammarOptions = {}): string {
  const c = new SchemaConverter(schema, checkWhitespace(opts.whitespace));
  const rootExpr = c.visit(schema, '#', 'value');
  const lines = [`root ::= ${rootExpr}`];
  for (const [name, body] of c.rules) lines.push(`${name} ::= ${body}`);
  const prims = c.p.render();
  return `${lines.join('\n')}\n${prims === '' ? '' : `${prims}\n`}`;
}
