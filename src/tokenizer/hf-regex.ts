/**
 * Translate a Hugging Face tokenizers regex (Oniguruma syntax, Unicode semantics) into a JS RegExp
 * with the `u` flag: `(?i:...)` groups become explicit case classes (Node 20 has no inline
 * modifiers), and `\s`/`\S` use the Unicode White_Space property as Oniguruma does (JS's `\s` also
 * matches U+FEFF, which Oniguruma's does not).
 */
import { UnsupportedError } from '../errors.js';

const WS = '\\p{White_Space}';
const NOT_WS = '\\P{White_Space}';

/** Make ASCII letters of a fragment case-insensitive ([sS]); escapes are copied as they are. */
function caseless(body: string, pattern: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\') { out += c + (body[i + 1] ?? ''); i++; continue; }
    if (c === '[') throw new UnsupportedError(`regex with a character class inside (?i:...) is not supported: ${pattern}`);
    const lo = c.toLowerCase(), up = c.toUpperCase();
    out += /[a-z]/i.test(c) && lo !== up ? `[${lo}${up}]` : c;
  }
  return out;
}

/** Compile an Oniguruma-style pattern from tokenizer.json into a global Unicode JS RegExp. */
export function compileHfRegex(pattern: string): RegExp {
  let src = '';
  let inside = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n === 's') src += inside ? WS : `[${WS}]`;
      else if (n === 'S') src += inside ? NOT_WS : `[${NOT_WS}]`;
      else src += c + (n ?? '');
      i++;
      continue;
    }
    if (!inside && pattern.startsWith('(?i:', i)) {
      const close = pattern.indexOf(')', i);
      if (close < 0 || pattern.slice(i + 4, close).includes('(')) throw new UnsupportedError(`unsupported (?i:...) group in regex: ${pattern}`);
      src += '(?:' + caseless(pattern.slice(i + 4, close), pattern) + ')';
      i = close;
      continue;
    }
    if (c === '[' && !inside) inside = true;
    else if (c === ']' && inside) inside = false;
    src += c;
  }
  try {
    return new RegExp(src, 'gu');
  } catch (e) {
    throw new UnsupportedError(`regex from tokenizer.json is not supported: ${pattern} (${(e as Error).message})`);
  }
}

/** Escape a literal string for use inside a RegExp. */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
