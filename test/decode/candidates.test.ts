import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  argmaxCandidates, candidatesFromLogits, createCandidates, fillCandidates, retainCandidates,
  softmaxCandidates, sortCandidates, sortTopCandidates,
} from '../../src/decode/candidates.js';
import { createRng } from '../../src/decode/rng.js';

/** Reference order: logit descending, ties by lower id. */
function referenceOrder(logits: number[]): number[] {
  return logits.map((l, id) => ({ l, id })).sort((a, b) => b.l - a.l || a.id - b.id).map((x) => x.id);
}

function randomLogits(n: number, seed: number, levels = 0): Float32Array {
  const r = createRng(seed);
  // levels > 0 quantises values so many ties occur.
  return Float32Array.from({ length: n }, () => (levels ? Math.floor(r.next() * levels) : r.next() * 20 - 10));
}

test('fillCandidates reuses the buffers and resets ids/sorted', () => {
  const c = createCandidates(4);
  const ids = c.ids, lg = c.logits;
  fillCandidates(c, new Float32Array([1, 2, 3, 4]));
  sortCandidates(c);
  assert.deepEqual([...c.ids], [3, 2, 1, 0]);
  fillCandidates(c, new Float32Array([5, 6, 7]));
  assert.equal(c.ids, ids);
  assert.equal(c.logits, lg);
  assert.equal(c.size, 3);
  assert.equal(c.sorted, false);
  assert.deepEqual([...c.ids.subarray(0, 3)], [0, 1, 2]);
});

test('fillCandidates rejects NaN logits and oversize input', () => {
  assert.throws(() => fillCandidates(createCandidates(3), new Float32Array([0, NaN, 1])), /token 1 is NaN/);
  assert.throws(() => fillCandidates(createCandidates(2), new Float32Array(3)), RangeError);
});

test('full sort matches the reference order, including many ties', () => {
  for (const [seed, levels] of [[1, 0], [2, 5], [3, 1]] as const) {
    const lg = randomLogits(3000, seed, levels);
    const c = candidatesFromLogits(lg);
    sortCandidates(c);
    assert.deepEqual([...c.ids], referenceOrder([...lg]));
    assert.equal(c.sorted, true);
  }
});

test('partial sort puts exactly the top k, in order, first', () => {
  for (const [seed, levels, k] of [[4, 0, 1], [5, 0, 37], [6, 7, 500], [7, 3, 2999]] as const) {
    const lg = randomLogits(3000, seed, levels);
    const c = candidatesFromLogits(lg);
    sortTopCandidates(c, k);
    assert.deepEqual([...c.ids.subarray(0, k)], referenceOrder([...lg]).slice(0, k));
    // The rest is still the complementary set.
    assert.equal(new Set(c.ids).size, 3000);
  }
});

test('softmax over live candidates, max-subtracted, matches hand values', () => {
  // Logits ln(.4), ln(.3), ln(.2), ln(.1): softmax gives the probabilities back.
  const c = candidatesFromLogits([0.4, 0.3, 0.2, 0.1].map((p) => Math.log(p)));
  const p = softmaxCandidates(c);
  [0.4, 0.3, 0.2, 0.1].forEach((q, i) => assert.ok(Math.abs(p[i]! - q) < 1e-6, `p[${i}]=${p[i]}`));
  // Only the live prefix counts.
  c.size = 2;
  const p2 = softmaxCandidates(c);
  assert.ok(Math.abs(p2[0]! - 4 / 7) < 1e-6 && Math.abs(p2[1]! - 3 / 7) < 1e-6);
});

test('softmax does not overflow on large logits', () => {
  // Exactly representable in float32: p0 = 1 / (1 + e^-1), p1 = e^-1 / (1 + e^-1).
  const p = softmaxCandidates(candidatesFromLogits([1000, 999]));
  assert.ok(Math.abs(p[0]! - 1 / (1 + Math.exp(-1))) < 1e-12);
  assert.ok(Math.abs(p[1]! - Math.exp(-1) / (1 + Math.exp(-1))) < 1e-12);
});

test('softmax with every candidate banned is a clear error', () => {
  const c = candidatesFromLogits([-Infinity, -Infinity]);
  assert.throws(() => softmaxCandidates(c), /no token left to sample/);
});

test('retain keeps order; argmax breaks ties by lowest id even out of identity order', () => {
  const c = candidatesFromLogits([1, 5, 2, 5, 0]);
  retainCandidates(c, (i) => c.logits[i]! >= 2);
  assert.deepEqual([...c.ids.subarray(0, c.size)], [1, 2, 3]);
  c.ids.set([3, 2, 1]); c.logits.set([5, 2, 5]);
  assert.equal(c.ids[argmaxCandidates(c)], 1);
});

test('fillCandidates reuses a larger buffer: identity ids, the new logits, NaN named by token', () => {
  const c = createCandidates(10);
  fillCandidates(c, Float32Array.from({ length: 10 }, (_, i) => i));
  retainCandidates(c, (i) => i % 3 === 0);
  c.ids.set([9, 6, 3, 0]);
  fillCandidates(c, new Float32Array([0.5, -1, 7, 7, 2]));
  assert.equal(c.size, 5);
  assert.equal(c.sorted, false);
  assert.deepEqual([...c.ids.subarray(0, 5)], [0, 1, 2, 3, 4]);
  assert.deepEqual([...c.logits.subarray(0, 5)], [0.5, -1, 7, 7, 2]);
  assert.equal(argmaxCandidates(c), 2, 'first of the tied maxima (lowest id)');
  assert.throws(() => fillCandidates(c, new Float32Array([1, 2, NaN])), /logit of token 2 is NaN/);
  assert.throws(() => fillCandidates(createCandidates(2), new Float32Array(3)), /holds 2/);
});
