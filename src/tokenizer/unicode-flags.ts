/**
 * Per-code-point character classes as llama.cpp's unicode tables define them (unicode.cpp
 * `unicode_cpt_flags`): one general category (letter, number, punctuation, mark, symbol, other,
 * unassigned) plus a White_Space bit. Computed lazily from the JS engine's Unicode property escapes
 * and memoised per code point.
 */
export const CPT_WHITESPACE = 1;
export const CPT_LETTER = 2;
export const CPT_NUMBER = 4;
export const CPT_PUNCTUATION = 8;
export const CPT_MARK = 16;
export const CPT_SYMBOL = 32;
/** Separator, control, format, private use... (assigned but none of the above). */
export const CPT_OTHER = 64;
/** Unassigned (Cn) or a surrogate. */
export const CPT_UNDEFINED = 128;

const table = new Uint8Array(0x110000);
const RE_L = /\p{L}/u, RE_N = /\p{N}/u, RE_P = /\p{P}/u, RE_M = /\p{M}/u, RE_S = /\p{S}/u;
const RE_WS = /\p{White_Space}/u, RE_CN = /\p{Cn}|\p{Cs}/u;

function compute(cp: number): number {
  const ch = String.fromCodePoint(cp);
  let f = RE_L.test(ch) ? CPT_LETTER : RE_N.test(ch) ? CPT_NUMBER : RE_P.test(ch) ? CPT_PUNCTUATION
    : RE_M.test(ch) ? CPT_MARK : RE_S.test(ch) ? CPT_SYMBOL : RE_CN.test(ch) ? CPT_UNDEFINED : CPT_OTHER;
  if (RE_WS.test(ch)) f |= CPT_WHITESPACE;
  return f;
}

/** Flags of one code point (0 for values outside 0..0x10FFFF). */
export function cptFlags(cp: number): number {
  if (cp < 0 || cp >= 0x110000) return 0;
  let f = table[cp]!;
  if (f === 0) { f = compute(cp); table[cp] = f; }
  return f;
}

/** Code points of a string (lone surrogates become U+FFFD, as a UTF-8 round trip would make them). */
export function codePoints(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) { out.push(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000); i++; continue; }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    out.push(c);
  }
  return out;
}
