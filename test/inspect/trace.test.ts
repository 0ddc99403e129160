import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText } from '../../src/generate/generate.js';
import { loadLanguageModel, type LanguageModel } from '../../src/generate/language-model.js';
import { traceGeneration, type Trace } from '../../src/inspect/trace.js';
import { InvalidOptionError } from '../../src/errors.js';
import { needsShared, sharedPath } from '../helpers.js';

const skip = needsShared();
let cached: LanguageModel | undefined;
const model = (): LanguageModel => (cached ??= loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') }));
const PROMPT = 'Once upon a time';
const SAMPLING = { temperature: 0.9, topK: 8, topP: 0.9, minP: 0.02, seed: 5 } as const;

/** Re-runs the model over prompt + chosen tokens and returns each step's raw logits (an independent check). */
function stepLogits(lm: LanguageModel, trace: Trace): Float32Array[] {
  const cache = lm.model.createCache(trace.prompt.tokens.length + trace.steps.length + 1);
  const out: Float32Array[] = [];
  let logits = new Float32Array(lm.model.forward(trace.prompt.tokens, cache));
  for (const s of trace.steps) {
    out.push(logits);
    logits = new Float32Array(lm.model.forward([s.chosen.id], cache));
  }
  return out;
}

function softmax(l: Float32Array): Float64Array {
  let m = -Infinity;
  for (const x of l) m = Math.max(m, x);
  const p = new Float64Array(l.length);
  let s = 0;
  for (let i = 0; i < l.length; i++) { p[i] = Math.exp(l[i]! - m); s += p[i]!; }
  for (let i = 0; i < l.length; i++) p[i]! /= s;
  return p;
}

test('tracing does not change the result: chosen ids are the generated tokens', { skip }, async () => {
  const lm = model();
  const plain = await generateText(lm, PROMPT, { ...SAMPLING, maxTokens: 24 });
  const trace = await traceGeneration(lm, PROMPT, { ...SAMPLING, maxTokens: 24, top: 5 });
  assert.deepEqual(trace.tokens, plain.tokens);
  assert.equal(trace.text, plain.text);
  assert.deepEqual(trace.steps.map((s) => s.chosen.id), plain.tokens);
  assert.deepEqual(trace.steps.map((s) => s.index), plain.tokens.map((_, i) => i));
  assert.deepEqual(trace.prompt.tokens, plain.promptTokens);
  assert.equal(trace.prompt.pieces.length, plain.promptTokens.length);
});

test('raw probabilities are the softmax of the model\'s logits (1e-6), sum to at most 1, in order', { skip }, async () => {
  const lm = model();
  const trace = await traceGeneration(lm, PROMPT, { ...SAMPLING, maxTokens: 16, top: 10 });
  const logits = stepLogits(lm, trace);
  trace.steps.forEach((s, i) => {
    const p = softmax(logits[i]!);
    assert.equal(s.raw.top.length, 10);
    let sum = 0;
    s.raw.top.forEach((c, j) => {
      assert.ok(Math.abs(c.prob - p[c.id]!) < 1e-6, `step ${i} id ${c.id}: ${c.prob} vs ${p[c.id]}`);
      assert.ok(Math.abs(c.logit - logits[i]![c.id]!) < 1e-5);
      if (j > 0) assert.ok(c.prob <= s.raw.top[j - 1]!.prob);
      sum += c.prob;
    });
    assert.ok(sum <= 1 + 1e-9);
    // the top entries really are the most likely tokens
    const sorted = [...p].sort((a, b) => b - a);
    assert.ok(Math.abs(s.raw.top[9]!.prob - sorted[9]!) < 1e-6);
    assert.ok(Math.abs(s.chosen.prob - p[s.chosen.id]!) < 1e-6);
    assert.ok(Math.abs(Math.exp(s.chosen.logprob) - s.chosen.prob) < 1e-12);
    assert.equal(s.chosen.rawRank, sorted.filter((x) => x > p[s.chosen.id]!).length);
  });
});

test('stages follow the chain; top-k leaves at most K, truncation never grows; the chosen token survives', { skip }, async () => {
  const lm = model();
  const trace = await traceGeneration(lm, PROMPT, { ...SAMPLING, maxTokens: 16, top: 20 });
  assert.deepEqual(trace.steps[0]!.stages.map((s) => s.name), ['input', 'top-k', 'top-p', 'min-p', 'temperature']);
  for (const s of trace.steps) {
    const [input, topK, topP, minP, temp] = s.stages;
    assert.equal(input!.size, 512);
    assert.ok(topK!.size <= SAMPLING.topK, `top-k kept ${topK!.size}`);
    assert.ok(topP!.size <= topK!.size && minP!.size <= topP!.size && minP!.size >= 1);
    assert.equal(temp!.size, minP!.size, 'temperature reshapes, never removes');
    for (const st of s.stages) {
      const sum = st.top.reduce((a, c) => a + c.prob, 0);
      assert.ok(sum <= 1 + 1e-9, `${st.name} sums to ${sum}`);
      assert.ok(st.top.length <= Math.min(20, st.size));
    }
    // after top-p the live set is renormalised: its listed probabilities cover everything when all are listed
    if (minP!.size <= 20) assert.ok(Math.abs(minP!.top.reduce((a, c) => a + c.prob, 0) - 1) < 1e-9);
    // temperature 0.9 sharpens: the top candidate gains probability
    assert.ok(temp!.top[0]!.prob >= minP!.top[0]!.prob - 1e-12);
    assert.ok(s.chosen.processedProb > 0, 'the sampled token was live');
    assert.ok(temp!.top.every((c) => c.kept), 'everything in the last stage reached the sampler');
    assert.ok(input!.top.some((c) => c.id === s.chosen.id) || s.chosen.rawRank >= 20);
    const inTemp = temp!.top.find((c) => c.id === s.chosen.id);
    if (inTemp) assert.ok(Math.abs(inTemp.prob - s.chosen.processedProb) < 1e-9);
    const dropped = input!.top.filter((c) => !c.kept).length;
    assert.equal(dropped, input!.top.length - Math.min(input!.top.length, minP!.size), 'raw entries beyond the live set are marked as removed');
  }
});

test('the KV cache grows by one position per step', { skip }, async () => {
  const lm = model();
  const trace = await traceGeneration(lm, PROMPT, { ...SAMPLING, maxTokens: 12 });
  const n = trace.prompt.tokens.length;
  assert.equal(trace.prefill.cacheLength, n);
  assert.ok(trace.prefill.cacheBytes > 0);
  trace.steps.forEach((s, i) => {
    assert.equal(s.position, n + i);
    assert.equal(s.cache.before.length, n + i);
    if (i < trace.steps.length - 1) {
      assert.equal(s.cache.after!.length, n + i + 1);
      assert.ok(s.cache.after!.bytes > s.cache.before.bytes);
      assert.equal(trace.steps[i + 1]!.cache.before.bytes, s.cache.after!.bytes);
      assert.ok(s.timings.forwardMs! >= 0);
    } else {
      assert.equal(s.cache.after, null, 'the last token is not run through the model');
    }
  });
});

test('greedy: the chosen token is the raw argmax and the chain has no truncation stages', { skip }, async () => {
  const lm = model();
  const trace = await traceGeneration(lm, PROMPT, { temperature: 0, topK: 5, maxTokens: 8 });
  assert.deepEqual(trace.steps[0]!.stages.map((s) => s.name), ['input']);
  for (const s of trace.steps) {
    assert.equal(s.sampler, 'greedy');
    assert.equal(s.chosen.rawRank, 0);
    assert.equal(s.chosen.id, s.raw.top[0]!.id);
  }
});

test('n samples are traced per sequence; beam search and bad top sizes are rejected', { skip }, async () => {
  const lm = model();
  const trace = await traceGeneration(lm, PROMPT, { temperature: 1, seed: 2, n: 2, maxTokens: 5 });
  assert.deepEqual(trace.steps.map((s) => s.sequence), [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
  const n = trace.prompt.tokens.length;
  assert.deepEqual(trace.steps.map((s) => s.position), [n, n, n + 1, n + 1, n + 2, n + 2, n + 3, n + 3, n + 4, n + 4]);
  await assert.rejects(traceGeneration(lm, PROMPT, { numBeams: 2, maxTokens: 3 }), InvalidOptionError);
  await assert.rejects(traceGeneration(lm, PROMPT, { top: 0 }), InvalidOptionError);
});

test('generate() rejects a trace option that is not a tracer', { skip }, async () => {
  const { generateText: run } = await import('../../src/generate/generate.js');
  await assert.rejects(run(model(), PROMPT, { maxTokens: 1, trace: {} as never }), /trace must be an object with a step\(\) method/);
});
