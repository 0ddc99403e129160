/**
 * Probabilities in → probabilities out, on small vectors whose expected results are worked out
 * here by hand (comments) and compared to 1e-6.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { candidatesFromLogits, softmaxCandidates } from '../../src/decode/candidates.js';
import { createLogitBias } from '../../src/decode/processors/logit-bias.js';
import { createMinP } from '../../src/decode/processors/min-p.js';
import { createNoRepeatNgram } from '../../src/decode/processors/no-repeat-ngram.js';
import { createPresenceFrequencyPenalty } from '../../src/decode/processors/presence-frequency-penalty.js';
import { createRepetitionPenalty } from '../../src/decode/processors/repetition-penalty.js';
import { createTemperature } from '../../src/decode/processors/temperature.js';
import { createTopK } from '../../src/decode/processors/top-k.js';
import { createTopP } from '../../src/decode/processors/top-p.js';
import { createTypicalP } from '../../src/decode/processors/typical-p.js';
import { createRng } from '../../src/decode/rng.js';
import type { LogitsProcessor, ProcessorContext } from '../../src/decode/types.js';

const NO_CTX: ProcessorContext = { tokens: [], promptLength: 0 };
const P4 = [0.4, 0.3, 0.2, 0.1];

/** Runs one processor over softmax-inverse logits of `probs`; returns id → probability (absent = removed). */
function run(p: LogitsProcessor, probsOrLogits: number[], ctx = NO_CTX, asLogits = false): Map<number, number> {
  const c = candidatesFromLogits(asLogits ? probsOrLogits : probsOrLogits.map(Math.log));
  p.apply(c, ctx);
  const q = softmaxCandidates(c);
  const out = new Map<number, number>();
  for (let i = 0; i < c.size; i++) out.set(c.ids[i]!, q[i]!);
  return out;
}

/** Asserts the id → probability map equals `expected` (same ids, values to 1e-6). */
function assertProbs(got: Map<number, number>, expected: Record<number, number>): void {
  const want = new Map(Object.entries(expected).map(([k, v]) => [Number(k), v]));
  const gotIds = [...got.keys()].filter((id) => got.get(id)! > 0).sort((a, b) => a - b);
  const wantIds = [...want.keys()].filter((id) => want.get(id)! > 0).sort((a, b) => a - b);
  assert.deepEqual(gotIds, wantIds, 'surviving ids');
  for (const [id, v] of want) {
    const g = got.get(id) ?? 0;
    assert.ok(Math.abs(g - v) < 1e-6, `p(${id}) = ${g}, expected ${v}`);
  }
}

test('temperature: p_i ∝ p_i^(1/T)', () => {
  // T = 2: p ∝ sqrt(p): sqrt(.4)=.632456, sqrt(.3)=.547723, sqrt(.2)=.447214, sqrt(.1)=.316228, Σ=1.943621.
  assertProbs(run(createTemperature(2), P4), { 0: 0.632456 / 1.943621, 1: 0.547723 / 1.943621, 2: 0.447214 / 1.943621, 3: 0.316228 / 1.943621 });
  // T = 0.5: p ∝ p²: .16 .09 .04 .01, Σ = .30.
  assertProbs(run(createTemperature(0.5), P4), { 0: 0.16 / 0.3, 1: 0.09 / 0.3, 2: 0.04 / 0.3, 3: 0.01 / 0.3 });
  assert.throws(() => createTemperature(0), /temperature/);
});

test('top-k keeps the k most probable and renormalises; k=0 and k>=size are no-ops', () => {
  assertProbs(run(createTopK(2), P4), { 0: 0.4 / 0.7, 1: 0.3 / 0.7 });
  assertProbs(run(createTopK(3), [0.1, 0.2, 0.4, 0.3]), { 1: 0.2 / 0.9, 2: 0.4 / 0.9, 3: 0.3 / 0.9 });
  assertProbs(run(createTopK(0), P4), { 0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1 });
  assertProbs(run(createTopK(9), P4), { 0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1 });
  // Tie at the boundary: the lower id wins.
  assertProbs(run(createTopK(2), [0.4, 0.2, 0.2, 0.2]), { 0: 0.4 / 0.6, 1: 0.2 / 0.6 });
});

test('top-p keeps the smallest prefix with cumulative prob >= p (at least one token)', () => {
  // Sorted: .4, .3 (cum .7), .2 (cum .9), .1.
  assertProbs(run(createTopP(0.6), P4), { 0: 0.4 / 0.7, 1: 0.3 / 0.7 });
  assertProbs(run(createTopP(0.75), [0.2, 0.1, 0.4, 0.3]), { 0: 0.2 / 0.9, 2: 0.4 / 0.9, 3: 0.3 / 0.9 });
  assertProbs(run(createTopP(0.05), P4), { 0: 1 });
  assertProbs(run(createTopP(1), P4), { 0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1 });
});

test('top-p on a large vocabulary (incremental partial sort) matches a full-sort reference', () => {
  const r = createRng(11);
  const logits = Array.from({ length: 5000 }, () => r.next() * 6);
  for (const p of [0.1, 0.5, 0.9, 0.999]) {
    // Reference: probabilities sorted descending, smallest prefix with cum >= p.
    const m = Math.max(...logits);
    const w = logits.map((l) => Math.exp(Math.fround(l) - m));
    const total = w.reduce((a, b) => a + b, 0);
    const order = w.map((x, id) => ({ x, id })).sort((a, b) => b.x - a.x || a.id - b.id);
    let cum = 0, keep = 0;
    while (cum < p * total) cum += order[keep++]!.x;
    const got = run(createTopP(p), logits, NO_CTX, true);
    assert.equal(got.size, keep, `top-p ${p}: kept ${got.size}, expected ${keep}`);
    for (let i = 0; i < keep; i++) assert.ok(got.has(order[i]!.id));
  }
});

test('min-p keeps p >= min_p * p_max', () => {
  // p_max = .4; min_p .6 → threshold .24 → keep .4, .3.
  assertProbs(run(createMinP(0.6), P4), { 0: 0.4 / 0.7, 1: 0.3 / 0.7 });
  // min_p .3 → threshold .12 → keep .4 .3 .2.
  assertProbs(run(createMinP(0.3), [0.1, 0.4, 0.3, 0.2]), { 1: 0.4 / 0.9, 2: 0.3 / 0.9, 3: 0.2 / 0.9 });
  // min_p 1 → only the top.
  assertProbs(run(createMinP(1), P4), { 0: 1 });
  assertProbs(run(createMinP(0), P4), { 0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1 });
});

test('typical-p keeps the most typical tokens up to mass typical_p', () => {
  // H = −Σ p ln p = .4·.916291 + .3·1.203973 + .2·1.609438 + .1·2.302585 = 1.279854.
  // |−ln p − H|: .4 → .363563, .3 → .075881, .2 → .329584, .1 → 1.022731.
  // Typicality order: .3, .2, .4, .1 (cum .3, .5, .9, 1.0).
  const h = -P4.reduce((s, p) => s + p * Math.log(p), 0);
  assert.ok(Math.abs(h - 1.279854) < 1e-6);
  assertProbs(run(createTypicalP(0.45), P4), { 1: 0.6, 2: 0.4 });
  assertProbs(run(createTypicalP(0.2), P4), { 1: 1 }); // .3 alone already ≥ .2; note the top token .4 is dropped
  assertProbs(run(createTypicalP(0.55), P4), { 0: 0.4 / 0.9, 1: 0.3 / 0.9, 2: 0.2 / 0.9 });
  assertProbs(run(createTypicalP(1), P4), { 0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1 });
});

test('repetition penalty (CTRL/HF): positive logits divided, negative multiplied, distinct tokens', () => {
  const logits = [2, -1, 0.5, 3];
  const ctx: ProcessorContext = { tokens: [0, 1, 1], promptLength: 2 };
  // r = 2, seen {0, 1}: [2/2, -1·2, .5, 3] = [1, -2, .5, 3] (token 1 penalised once despite repeats).
  const sm = (l: number[]) => { const e = l.map(Math.exp); const s = e.reduce((a, b) => a + b); return Object.fromEntries(e.map((x, i) => [i, x / s])); };
  assertProbs(run(createRepetitionPenalty(2), logits, ctx, true), sm([1, -2, 0.5, 3]));
  // lastN = 1: only the last token (1) counts → [2, -2, .5, 3].
  assertProbs(run(createRepetitionPenalty(2, 1), logits, ctx, true), sm([2, -2, 0.5, 3]));
  // r = 1 changes nothing.
  assertProbs(run(createRepetitionPenalty(1), logits, ctx, true), sm(logits));
  assert.throws(() => createRepetitionPenalty(1.1, 0), /repetitionPenaltyLastN/);
});

test('presence/frequency penalties (OpenAI form) count generated tokens only', () => {
  // Prompt [0], generated [1, 1, 2]; presence .5, frequency .25, all logits 1:
  // t0: prompt only → 1; t1: 1 − .5 − 2·.25 = 0; t2: 1 − .5 − .25 = .25; t3: 1.
  const ctx: ProcessorContext = { tokens: [0, 1, 1, 2], promptLength: 1 };
  const e = [1, 0, 0.25, 1].map(Math.exp), s = e.reduce((a, b) => a + b);
  assertProbs(run(createPresenceFrequencyPenalty(0.5, 0.25), [1, 1, 1, 1], ctx, true), { 0: e[0]! / s, 1: e[1]! / s, 2: e[2]! / s, 3: e[3]! / s });
  assert.throws(() => createPresenceFrequencyPenalty(2.5, 0), /presencePenalty/);
});

test('logit bias adds per-id biases; -Infinity bans', () => {
  // [0, 0, 0, 0] + {0: −∞, 2: +1} → [−∞, 0, 1, 0]: p = [0, 1/(e+2), e/(e+2), 1/(e+2)].
  const e = Math.E;
  assertProbs(run(createLogitBias(new Map([[0, -Infinity], [2, 1]])), [0, 0, 0, 0], NO_CTX, true),
    { 0: 0, 1: 1 / (e + 2), 2: e / (e + 2), 3: 1 / (e + 2) });
  assert.throws(() => createLogitBias(new Map([[4, 1]]), 4), /logitBias token id/);
  assert.throws(() => createLogitBias(new Map([[1, Infinity]])), /logitBias\[1\]/);
});

test('no-repeat-ngram bans completions of an n-gram already seen (HF semantics)', () => {
  const flat = new Array(8).fill(0);
  const even = (ids: number[]) => Object.fromEntries(flat.map((_, i) => [i, ids.includes(i) ? 0 : 1 / (8 - ids.length)]));
  // n=2, tokens 5 6 5 7 5: prefix [5] was followed by 6 and 7 → both banned.
  assertProbs(run(createNoRepeatNgram(2), flat, { tokens: [5, 6, 5, 7, 5], promptLength: 1 }, true), even([6, 7]));
  // n=3, tokens 1 2 3 1 2: prefix [1 2] was followed by 3.
  assertProbs(run(createNoRepeatNgram(3), flat, { tokens: [1, 2, 3, 1, 2], promptLength: 5 }, true), even([3]));
  // n=1 bans every token present.
  assertProbs(run(createNoRepeatNgram(1), flat, { tokens: [4, 0, 4], promptLength: 1 }, true), even([0, 4]));
  // Context shorter than n−1: nothing banned.
  assertProbs(run(createNoRepeatNgram(4), flat, { tokens: [1, 1], promptLength: 2 }, true), even([]));
});

test('processors work when candidates are no longer in identity order', () => {
  // Top-k first scrambles the order; the penalty must still hit the right ids.
  const c = candidatesFromLogits([1, 4, 2, 3]);
  createTopK(3).apply(c, NO_CTX); // ids now [1, 3, 2]
  createLogitBias(new Map([[2, -Infinity], [3, -1]])).apply(c, NO_CTX);
  createRepetitionPenalty(2).apply(c, { tokens: [1], promptLength: 1 });
  const got = new Map([...c.ids.subarray(0, c.size)].map((id, i) => [id, c.logits[i]]));
  assert.deepEqual(got, new Map([[1, 2], [3, 2], [2, -Infinity]]));
});
