import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnsupportedError } from '../../src/errors.js';
import { createChain } from '../../src/decode/chain.js';
import { createSamplingChain } from '../../src/decode/options.js';
import { createTopK } from '../../src/decode/processors/top-k.js';
import { createRng } from '../../src/decode/rng.js';
import { createDistSampler } from '../../src/decode/samplers.js';
import type { LogitsProcessor } from '../../src/decode/types.js';

const CTX = { tokens: [] as number[], promptLength: 0 };
const LOGITS = Float32Array.from({ length: 16 }, (_, i) => Math.cos(i));

test('process() reuses one candidate buffer across steps', () => {
  const chain = createSamplingChain({ topK: 4, seed: 1 }, 16);
  const a = chain.process(LOGITS, CTX);
  const ids = a.ids;
  assert.equal(a.size, 4);
  const b = chain.process(LOGITS, CTX);
  assert.equal(b, a);
  assert.equal(b.ids, ids);
  assert.equal(chain.candidates, a);
});

test('accept() reaches stateful processors; clone() copies them and splits the rng', () => {
  class Counter implements LogitsProcessor {
    readonly name = 'counter';
    accepted: number[] = [];
    apply(): void {}
    accept(t: number): void { this.accepted.push(t); }
    clone(): Counter { const c = new Counter(); c.accepted = [...this.accepted]; return c; }
  }
  const counter = new Counter();
  const chain = createSamplingChain({ processors: [counter], seed: 5 }, 16);
  chain.accept(3); chain.accept(4);
  assert.deepEqual(counter.accepted, [3, 4]);
  const copy = chain.clone();
  const copied = copy.processors[0] as Counter;
  assert.notEqual(copied, counter);
  assert.deepEqual(copied.accepted, [3, 4]);
  copy.accept(9);
  assert.deepEqual(counter.accepted, [3, 4]);
  // A clone draws different numbers from the original (split rng), deterministically.
  const seqA = Array.from({ length: 50 }, () => copy.sample(LOGITS, CTX));
  const seqB = Array.from({ length: 50 }, () => chain.sample(LOGITS, CTX));
  assert.notDeepEqual(seqA, seqB);
  const again = createSamplingChain({ processors: [new Counter()], seed: 5 }, 16).clone();
  assert.deepEqual(Array.from({ length: 50 }, () => again.sample(LOGITS, CTX)), seqA);
  assert.equal(copy.describe().seed, 5);
});

test('clone() refuses a stateful processor without clone()', () => {
  const p: LogitsProcessor = { name: 'sticky', apply() {}, accept() {} };
  const chain = createChain([p, createTopK(2)], createDistSampler(), createRng(1), 1);
  assert.throws(() => chain.clone(), (e: unknown) => e instanceof UnsupportedError && /sticky/.test((e as Error).message));
});

test('unseeded chains get a random seed that describe() reports and that replays the run', () => {
  const a = createSamplingChain({ temperature: 1.2 }, 16);
  const seed = a.describe().seed;
  assert.ok(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32);
  const replay = createSamplingChain({ temperature: 1.2, seed }, 16);
  const seq = (c: typeof a) => Array.from({ length: 40 }, () => c.sample(LOGITS, CTX));
  assert.deepEqual(seq(a), seq(replay));
});
