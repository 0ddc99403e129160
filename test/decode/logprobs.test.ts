import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../../src/errors.js';
import { candidatesFromLogits } from '../../src/decode/candidates.js';
import { logSoftmax, processedLogprobs, rawLogprobs, validateTopLogprobs } from '../../src/decode/logprobs.js';
import { createTopK } from '../../src/decode/processors/top-k.js';
import { createTemperature } from '../../src/decode/processors/temperature.js';

const close = (a: number, b: number, msg?: string) => assert.ok(Math.abs(a - b) < 1e-6, msg ?? `${a} vs ${b}`);

test('log-softmax: float64, stable on large logits', () => {
  // [1000, 999]: log p = −ln(1 + e^−1), −1 − ln(1 + e^−1).
  const out = logSoftmax(new Float32Array([1000, 999]));
  close(out[0]!, -Math.log(1 + Math.exp(-1)));
  close(out[1]!, -1 - Math.log(1 + Math.exp(-1)));
  const l = logSoftmax(Float32Array.from([0.4, 0.3, 0.2, 0.1].map(Math.log)));
  [0.4, 0.3, 0.2, 0.1].forEach((p, i) => close(l[i]!, Math.log(p)));
});

test('raw logprobs: chosen token and top-N alternatives (ties → lower id)', () => {
  const logits = Float32Array.from([0.1, 0.3, 0.3, 0.2, 0.1].map(Math.log));
  const r = rawLogprobs(logits, 3, 3);
  assert.equal(r.source, 'raw');
  assert.equal(r.id, 3);
  close(r.logprob, Math.log(0.2));
  assert.deepEqual(r.top.map((t) => t.id), [1, 2, 3]);
  close(r.top[0]!.logprob, Math.log(0.3));
  assert.deepEqual(rawLogprobs(logits, 0, 0).top, []);
  assert.equal(rawLogprobs(logits, 0, 20).top.length, 5);
  assert.throws(() => rawLogprobs(logits, 5), RangeError);
});

test('processed logprobs: over the candidates the sampler saw; removed tokens are -Infinity', () => {
  // p = .4 .3 .2 .1 → top-k 2 → .4/.7, .3/.7 → temperature 0.5 → ∝ .16, .09 → 16/25, 9/25.
  const c = candidatesFromLogits([0.4, 0.3, 0.2, 0.1].map(Math.log));
  createTopK(2).apply(c); createTemperature(0.5).apply(c);
  const r = processedLogprobs(c, 1, 4);
  assert.equal(r.source, 'processed');
  close(r.logprob, Math.log(9 / 25));
  assert.deepEqual(r.top.map((t) => t.id), [0, 1]);
  close(r.top[0]!.logprob, Math.log(16 / 25));
  assert.equal(processedLogprobs(c, 3).logprob, -Infinity);
});

test('topLogprobs is validated: integer in [0, 20]', () => {
  for (const bad of [21, -1, 1.5, NaN, '3']) {
    assert.throws(() => validateTopLogprobs(bad), (e: unknown) => e instanceof InvalidOptionError && /topLogprobs/.test((e as Error).message));
  }
  assert.equal(validateTopLogprobs(20), 20);
  assert.throws(() => rawLogprobs(new Float32Array(3), 0, 21), /topLogprobs/);
});
