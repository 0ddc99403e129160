/**
 * Code-point ranges → UTF-8 byte-range sequences, so a character class becomes a set of byte
 * paths a byte-level automaton can follow (the range-splitting idea used by RE2 / Go's
 * regexp/syntax and Rust's regex-syntax `Utf8Sequences`): split a range until both ends encode to
 * the same length and every continuation byte spans its full 0x80–0xBF range below the first
 * differing byte; then each piece is one sequence of per-byte ranges. Surrogates (U+D800–DFFF)
 * are never produced: they are not valid in UTF-8.
 */

/** One byte position of a sequence: an inclusive byte range. */
export type ByteRange = readonly [lo: number, hi: number];

/** Inclusive code-point range. */
export type CodePointRange = readonly [lo: number, hi: number];

export const MAX_CODE_POINT = 0x10ffff;

/** UTF-8 encoding of one code point (1–4 bytes). */
export function encodeCodePoint(cp: number): number[] {
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
}

/** Sorted, merged, surrogate-free copy of `ranges` (optionally complemented over 0..U+10FFFF). */
export function normalizeRanges(ranges: readonly CodePointRange[], negate = false): CodePointRange[] {
  const sorted = ranges.map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as [number, number]).sort((x, y) => x[0] - y[0]);
  const merged: [number, number][] = [];
  for (const r of sorted) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  let out: [number, number][] = merged;
  if (negate) {
    out = [];
    let next = 0;
    for (const [a, b] of merged) {
      if (a > next) out.push([next, a - 1]);
      next = b + 1;
    }
    if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  }
  // Cut the surrogate block out.
  const res: CodePointRange[] = [];
  for (const [a, b] of out) {
    const hi = Math.min(b, MAX_CODE_POINT);
    if (a > hi) continue;
    if (hi < 0xd800 || a > 0xdfff) { res.push([a, hi]); continue; }
    if (a < 0xd800) res.push([a, 0xd7ff]);
    if (hi > 0xdfff) res.push([0xe000, hi]);
  }
  return res;
}

const LENGTH_LIMITS = [0x7f, 0x7ff, 0xffff, MAX_CODE_POINT];

function split(lo: number, hi: number, out: ByteRange[][]): void {
  // Same encoded length at both ends.
  for (let i = 0; i < LENGTH_LIMITS.length - 1; i++) {
    const m = LENGTH_LIMITS[i]!;
    if (lo <= m && hi > m) { split(lo, m, out); split(m + 1, hi, out); return; }
  }
  if (hi < 0x80) { out.push([[lo, hi]]); return; }
  const n = encodeCodePoint(lo).length;
  for (let i = 1; i < n; i++) {
    const m = (1 << (6 * i)) - 1; // the low i continuation bytes
    if ((lo & ~m) !== (hi & ~m)) {
      if ((lo & m) !== 0) { split(lo, lo | m, out); split((lo | m) + 1, hi, out); return; }
      if ((hi & m) !== m) { split(lo, (hi & ~m) - 1, out); split(hi & ~m, hi, out); return; }
    }
  }
  const a = encodeCodePoint(lo), b = encodeCodePoint(hi);
  out.push(a.map((x, i) => [x, b[i]!] as const));
}

/** Byte-range sequences matching exactly the UTF-8 encodings of the code points in `ranges`. */
export function utf8Sequences(ranges: readonly CodePointRange[]): ByteRange[][] {
  const out: ByteRange[][] = [];
  for (const [lo, hi] of normalizeRanges(ranges)) split(lo, hi, out);
  return out;
}
