import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../../src/errors.js';
import { candidatesFromLogits } from '../../src/decode/candidates.js';
import { createSamplingChain, DEFAULT_ORDER, validateSamplingOptions } from '../../src/decode/options.js';
import type { Candidates, LogitsProcessor } from '../../src/decode/types.js';

const V = 100;

test('every invalid option is an InvalidOptionError naming the option', () => {
  const cases: [unknown, RegExp][] = [
    [{ temperature: -0.1 }, /temperature.*\[0, Infinity\)/],
    [{ temperature: NaN }, /temperature/],
    [{ temperature: Infinity }, /temperature/],
    [{ temperature: '1' }, /temperature/],
    [{ topK: -1 }, /topK.*integer/],
    [{ topK: 1.5 }, /topK/],
    [{ topP: 0 }, /topP.*\(0, 1\]/],
    [{ topP: 1.01 }, /topP/],
    [{ minP: -0.01 }, /minP.*\[0, 1\]/],
    [{ minP: 2 }, /minP/],
    [{ typicalP: 0 }, /typicalP.*\(0, 1\]/],
    [{ typicalP: 1.5 }, /typicalP/],
    [{ repetitionPenalty: 0 }, /repetitionPenalty/],
    [{ repetitionPenalty: -1 }, /repetitionPenalty/],
    [{ repetitionPenalty: Infinity }, /repetitionPenalty/],
    [{ repetitionPenaltyLastN: 0 }, /repetitionPenaltyLastN/],
    [{ repetitionPenaltyLastN: 2.5 }, /repetitionPenaltyLastN/],
    [{ presencePenalty: 2.1 }, /presencePenalty.*\[-2, 2\]/],
    [{ frequencyPenalty: -3 }, /frequencyPenalty/],
    [{ frequencyPenalty: NaN }, /frequencyPenalty/],
    [{ logitBias: { 100: 1 } }, /logitBias token id.*\[0, 99\]/],
    [{ logitBias: { '-1': 1 } }, /logitBias token id/],
    [{ logitBias: { abc: 1 } }, /logitBias token id/],
    [{ logitBias: { 5: NaN } }, /logitBias\[5\]/],
    [{ logitBias: { 5: Infinity } }, /logitBias\[5\]/],
    [{ logitBias: new Map([[1.5, 1]]) }, /logitBias token id/],
    [{ logitBias: [1, 2] }, /logitBias/],
    [{ noRepeatNgramSize: -1 }, /noRepeatNgramSize/],
    [{ seed: 1.5 }, /seed/],
    [{ seed: Infinity }, /seed/],
    [{ processors: [{ name: 'x' }] }, /processors\[0\]/],
    [{ processors: 'nope' }, /processors/],
    [{ order: ['top-k', 'beam'] }, /order.*"beam"/],
    [{ order: ['top-k', 'top-k'] }, /order lists "top-k" twice/],
    [{ topP: 0.5, order: ['top-k', 'temperature'] }, /topP is set but "top-p" is missing from order/],
    [{ top_p: 0.5 }, /unknown sampling option "top_p"/],
    [{ numBeams: 4 }, /unknown sampling option "numBeams"/],
    [5, /sampling options must be an object/],
  ];
  for (const [opts, re] of cases) {
    assert.throws(() => createSamplingChain(opts as never, V), (e: unknown) => {
      assert.ok(e instanceof InvalidOptionError, `${JSON.stringify(opts)} threw ${String(e)}`);
      assert.match((e as Error).message, re, JSON.stringify(opts));
      assert.ok(!(e as Error).message.includes('\n'), 'one-line message');
      return true;
    });
  }
});

test('valid edge values are accepted; undefined entries are ignored', () => {
  const o = validateSamplingOptions({ temperature: 0, topK: 0, topP: 1, minP: 1, typicalP: 1, presencePenalty: -2,
    frequencyPenalty: 2, logitBias: { 0: -Infinity, 99: 100 }, seed: -5, noRepeatNgramSize: undefined }, V);
  assert.equal('noRepeatNgramSize' in o, false);
  // An unknown key is rejected even when its value is undefined (a typo must not pass silently).
  assert.throws(() => validateSamplingOptions({ topPx: undefined }), /unknown sampling option "topPx"/);
  assert.ok(o.logitBias instanceof Map);
  createSamplingChain({ repetitionPenaltyLastN: -1, repetitionPenalty: 1.3, seed: 0 }, V);
});

test('neutral controls are left out; describe() reports the effective chain', () => {
  const neutral = createSamplingChain({ topP: 1, minP: 0, topK: 0, typicalP: 1, repetitionPenalty: 1, presencePenalty: 0,
    frequencyPenalty: 0, noRepeatNgramSize: 0, logitBias: {}, temperature: 1, seed: 3 }, V);
  assert.deepEqual(neutral.describe(), { processors: [], sampler: { name: 'dist', params: {} }, seed: 3 });
  // top-k ≥ vocab is a no-op too.
  assert.deepEqual(createSamplingChain({ topK: V, seed: 3 }, V).describe().processors, []);

  const full = createSamplingChain({ temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, typicalP: 0.9, repetitionPenalty: 1.1,
    presencePenalty: 0.5, logitBias: { 7: -Infinity, 3: 2 }, noRepeatNgramSize: 3, seed: 12 }, V);
  const d = full.describe();
  assert.deepEqual(d.processors.map((p) => p.name), ['repetition-penalty', 'presence-frequency-penalty', 'logit-bias',
    'no-repeat-ngram', 'top-k', 'typical-p', 'top-p', 'min-p', 'temperature']);
  assert.deepEqual(d.processors[0]!.params, { penalty: 1.1, lastN: -1 });
  assert.deepEqual(d.processors[2]!.params, { bias: { 3: 2, 7: '-inf' } });
  assert.deepEqual(d.processors[8]!.params, { temperature: 0.8 });
  assert.equal(d.sampler.name, 'dist');
  assert.equal(d.seed, 12);
  // JSON-serialisable as reported.
  assert.deepEqual(JSON.parse(JSON.stringify(d)), d);
});

test('temperature 0 → greedy; trailing argmax-preserving truncations dropped, typical-p kept', () => {
  const g = createSamplingChain({ temperature: 0, topK: 5, topP: 0.9, minP: 0.1, repetitionPenalty: 1.2, seed: 1 }, V).describe();
  assert.equal(g.sampler.name, 'greedy');
  assert.deepEqual(g.processors.map((p) => p.name), ['repetition-penalty']);
  const t = createSamplingChain({ temperature: 0, topK: 5, typicalP: 0.5, seed: 1 }, V).describe();
  assert.deepEqual(t.processors.map((p) => p.name), ['top-k', 'typical-p']);
});

test('order is configurable and followed; default order is documented', () => {
  assert.deepEqual([...DEFAULT_ORDER], ['repetition-penalty', 'presence-frequency-penalty', 'logit-bias', 'no-repeat-ngram',
    'processors', 'top-k', 'typical-p', 'top-p', 'min-p', 'temperature']);
  const d = createSamplingChain({ temperature: 2, topP: 0.5, order: ['temperature', 'top-p'], seed: 1 }, V).describe();
  assert.deepEqual(d.processors.map((p) => p.name), ['temperature', 'top-p']);
  // The order changes the result. Logits ln(.6), ln(.4), top-p .58, temperature 4:
  // default (top-p first): .6 ≥ .58 → 1 token survives.
  // temperature first: p ∝ .6^¼ = .8801, .4^¼ = .7953 → .5253 / .4747; .5253 < .58 → both survive.
  const logits = new Float32Array([Math.log(0.6), Math.log(0.4)]);
  const ctx = { tokens: [], promptLength: 0 };
  assert.equal(createSamplingChain({ temperature: 4, topP: 0.58, seed: 1 }, 2).process(logits, ctx).size, 1);
  assert.equal(createSamplingChain({ temperature: 4, topP: 0.58, seed: 1, order: ['temperature', 'top-p'] }, 2).process(logits, ctx).size, 2);
});

test('user processors run in the processors slot, in order, and receive the context', () => {
  const seen: string[] = [];
  const ban3: LogitsProcessor = {
    name: 'ban-3',
    apply(c: Candidates, ctx) { seen.push(`ban3:${c.size}:${ctx.tokens.length}`); for (let i = 0; i < c.size; i++) if (c.ids[i] === 3) c.logits[i] = -Infinity; },
  };
  const tag: LogitsProcessor = { name: 'tag', params: { x: 1 }, apply(c) { seen.push(`tag:${c.size}`); } };
  const chain = createSamplingChain({ processors: [ban3, tag], topK: 2, temperature: 0 }, 5);
  const d = chain.describe();
  assert.deepEqual(d.processors.map((p) => p.name), ['ban-3', 'tag']); // top-k trailing before greedy: dropped
  assert.deepEqual(d.processors[1]!.params, { x: 1 });
  const pick = chain.sample(new Float32Array([0, 1, 2, 9, 3]), { tokens: [1, 2], promptLength: 1 });
  assert.equal(pick, 4);
  assert.deepEqual(seen, ['ban3:5:2', 'tag:5']);
  void candidatesFromLogits;
});
