import { test } from 'node:test';
import assert from 'node:assert/strict';
import { candidatesFromLogits, fillCandidates, createCandidates } from '../../src/decode/candidates.js';
import { createSamplingChain } from '../../src/decode/options.js';
import { createRng } from '../../src/decode/rng.js';
import { createDistSampler, createGreedySampler } from '../../src/decode/samplers.js';
import type { ProcessorContext } from '../../src/decode/types.js';

const CTX: ProcessorContext = { tokens: [], promptLength: 0 };

test('greedy: argmax, ties go to the lowest id', () => {
  const g = createGreedySampler();
  const rng = createRng(0);
  assert.equal(g.select(candidatesFromLogits([1, 3, 3, 2]), rng), 1);
  assert.equal(g.select(candidatesFromLogits([-Infinity, 0, 5, 5, 5]), rng), 2);
  // Out of identity order the tie still resolves to the lower id.
  const c = candidatesFromLogits([0, 0, 0]);
  c.ids.set([2, 0, 1]); c.logits.set([7, 7, 1]);
  assert.equal(g.select(c, rng), 0);
  assert.throws(() => g.select(candidatesFromLogits([-Infinity, -Infinity]), rng), /no token left/);
});

test('top-k 1 picks exactly what greedy picks', () => {
  const r = createRng(3);
  const chain = createSamplingChain({ topK: 1, seed: 9 }, 50);
  const greedy = createSamplingChain({ temperature: 0 }, 50);
  for (let step = 0; step < 200; step++) {
    // Quantised logits so ties happen often.
    const logits = Float32Array.from({ length: 50 }, () => Math.floor(r.next() * 6));
    assert.equal(chain.sample(logits, CTX), greedy.sample(logits, CTX));
  }
});

test('a -Infinity bias is never sampled (1000 draws, banned token otherwise dominant)', () => {
  const chain = createSamplingChain({ logitBias: { 0: -Infinity }, seed: 1, temperature: 1.5 }, 4);
  const logits = new Float32Array([10, 0, 0.5, 1]);
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 1000; i++) counts[chain.sample(logits, CTX)]!++;
  assert.equal(counts[0], 0);
  assert.ok(counts[1]! > 0 && counts[2]! > 0 && counts[3]! > 0, `all others drawn: ${counts}`);
  // Without the ban token 0 dominates, so the test is not vacuous.
  const free = createSamplingChain({ seed: 1, temperature: 1.5 }, 4);
  assert.equal(free.sample(logits, CTX), 0);
});

test('same seed → same picks; different seeds differ', () => {
  const logits = Float32Array.from({ length: 32 }, (_, i) => Math.sin(i) * 2);
  const draw = (seed: number) => {
    const chain = createSamplingChain({ seed, topP: 0.95, temperature: 1.3 }, 32);
    return Array.from({ length: 200 }, () => chain.sample(logits, CTX));
  };
  assert.deepEqual(draw(42), draw(42));
  assert.notDeepEqual(draw(42), draw(43));
});

/**
 * Chi-square goodness of fit of `draws` samples against expected probabilities.
 * Critical value for 7 degrees of freedom (8 categories) at the 0.999 quantile: 24.3219
 * (standard χ² table; e.g. scipy.stats.chi2.ppf(0.999, 7) = 24.32189).
 */
const CHI2_999_DF7 = 24.3219;
function chiSquare(counts: number[], probs: number[], n: number): number {
  return counts.reduce((s, o, i) => s + (o - n * probs[i]!) ** 2 / (n * probs[i]!), 0);
}
function softmax(l: number[]): number[] {
  const m = Math.max(...l), e = l.map((x) => Math.exp(x - m)), s = e.reduce((a, b) => a + b);
  return e.map((x) => x / s);
}

test('dist sampler: chi-square fit to the softmax at a fixed seed, and a wrong distribution is rejected', () => {
  const logits = [0, 0.5, 1, 1.5, -0.5, -1, 0.25, 2];
  const p = softmax(logits);
  const c = createCandidates(8), s = createDistSampler(), rng = createRng(2024), f = Float32Array.from(logits);
  const n = 20000, counts = new Array(8).fill(0);
  for (let i = 0; i < n; i++) counts[s.select(fillCandidates(c, f), rng)]++;
  const chi = chiSquare(counts, p, n);
  assert.ok(chi < CHI2_999_DF7, `χ² = ${chi.toFixed(2)} ≥ ${CHI2_999_DF7}; counts ${counts}`);
  // A deliberately wrong model (two probabilities swapped) must fail the same test.
  const wrong = [...p]; [wrong[0], wrong[7]] = [wrong[7]!, wrong[0]!];
  assert.ok(chiSquare(counts, wrong, n) > CHI2_999_DF7, 'the test can detect a wrong distribution');
});

test('chain with temperature 0.7 after top-k 6: draws fit the renormalised tempered softmax', () => {
  const logits = [0, 0.5, 1, 1.5, -0.5, -1, 0.25, 2];
  // Top-6 drops ids 4 (−0.5) and 5 (−1); then p ∝ exp(l / 0.7) over the rest.
  const kept = [0, 1, 2, 3, 6, 7];
  const q = softmax(kept.map((i) => logits[i]! / 0.7));
  const chain = createSamplingChain({ topK: 6, temperature: 0.7, seed: 77 }, 8);
  const f = Float32Array.from(logits), n = 20000, counts = new Array(8).fill(0);
  for (let i = 0; i < n; i++) counts[chain.sample(f, CTX)]++;
  assert.equal(counts[4] + counts[5], 0);
  // 6 categories → 5 degrees of freedom; 0.999 critical value 20.5150 (χ² table).
  const chi = chiSquare(kept.map((i) => counts[i]), q, n);
  assert.ok(chi < 20.515, `χ² = ${chi.toFixed(2)}`);
});
