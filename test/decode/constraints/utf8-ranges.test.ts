import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeCodePoint, normalizeRanges, utf8Sequences, type ByteRange } from '../../../src/decode/constraints/utf8-ranges.ts';

const matches = (seq: readonly ByteRange[], bytes: number[]) =>
  seq.length === bytes.length && seq.every(([lo, hi], i) => bytes[i]! >= lo && bytes[i]! <= hi);

test('encodeCodePoint agrees with Buffer for every length', () => {
  for (const cp of [0, 0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xffff, 0x10000, 0x10ffff]) {
    assert.deepEqual(encodeCodePoint(cp), [...Buffer.from(String.fromCodePoint(cp), 'utf8')]);
  }
});

test('normalizeRanges merges, complements and drops surrogates', () => {
  assert.deepEqual(normalizeRanges([[5, 9], [0, 4], [20, 30]]), [[0, 9], [20, 30]]);
  assert.deepEqual(normalizeRanges([[0x22, 0x22], [0x5c, 0x5c], [0, 0x1f]], true), [[0x20, 0x21], [0x23, 0x5b], [0x5d, 0xd7ff], [0xe000, 0x10ffff]]);
  assert.deepEqual(normalizeRanges([[0xd000, 0xe100]]), [[0xd000, 0xd7ff], [0xe000, 0xe100]]);
});

test('utf8Sequences match exactly the encodings of the range (sampled over all of Unicode)', () => {
  const ranges: [number, number][][] = [[[0x41, 0x5a]], [[0x70, 0x900]], [[0x7ff, 0x10001]], [[0x3b1, 0x3c9], [0x1f600, 0x1f64f]], [[0, 0x10ffff]]];
  for (const r of ranges) {
    const seqs = utf8Sequences(r);
    const inRange = (cp: number) => (cp < 0xd800 || cp > 0xdfff) && r.some(([a, b]) => cp >= a && cp <= b);
    for (let cp = 0; cp <= 0x10ffff; cp += cp < 0x3000 ? 1 : 97) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const b = encodeCodePoint(cp);
      const n = seqs.filter((s) => matches(s, b)).length;
      assert.equal(n, inRange(cp) ? 1 : 0, `U+${cp.toString(16)} matched ${n} sequences`);
    }
    // Nothing that is not a valid encoding matches (overlongs, surrogates).
    for (const bad of [[0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]]) {
      assert.equal(seqs.some((s) => matches(s, bad)), false, `bad bytes ${bad} matched`);
    }
  }
});
