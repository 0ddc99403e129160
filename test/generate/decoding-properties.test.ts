/**
 * Properties of the decoding controls through generate() on stories260K: limits that must equal
 * greedy, neutral settings that must change nothing, bans that must hold, n samples that must be
 * reproducible, and per-token log-probabilities (raw and processed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError, UnsupportedError } from '../../src/errors.js';
import type { Candidates, LogitsProcessor } from '../../src/decode/types.js';
import type { GenerationEvent, TokenEvent } from '../../src/generate/events.js';
import { createSession, generate, generateText } from '../../src/generate/generate.js';
import { loadLanguageModel, type LanguageModel } from '../../src/generate/language-model.js';
import { needsShared, sharedPath } from '../helpers.js';

const skip = needsShared();
let lmCache: LanguageModel | undefined;
const lm = () => (lmCache ??= loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') }));
const PROMPTS = ['Once upon a time', 'Lily and Ben', 'The dog'];

test('temperature → 0 and top-k 1 give the greedy tokens', { skip }, async () => {
  for (const p of PROMPTS) {
    const greedy = await generateText(lm(), p, { temperature: 0, maxTokens: 60 });
    const cold = await generateText(lm(), p, { temperature: 1e-3, seed: 11, maxTokens: 60 });
    const top1 = await generateText(lm(), p, { temperature: 1.5, topK: 1, seed: 12, maxTokens: 60 });
    assert.deepEqual(cold.tokens, greedy.tokens, `temperature 1e-3, ${p}`);
    assert.deepEqual(top1.tokens, greedy.tokens, `top-k 1, ${p}`);
    assert.equal(greedy.chain.sampler.name, 'greedy');
    assert.equal(cold.chain.sampler.name, 'dist', 'the cold run really sampled');
  }
});

test('neutral settings (top-p 1, min-p 0, typical-p 1, penalties 1/0) change nothing', { skip }, async () => {
  const base = { temperature: 1, seed: 5, maxTokens: 80 };
  const plain = await generateText(lm(), 'Once upon a time', base);
  const neutral = await generateText(lm(), 'Once upon a time', {
    ...base, topP: 1, minP: 0, typicalP: 1, repetitionPenalty: 1, presencePenalty: 0, frequencyPenalty: 0, noRepeatNgramSize: 0, topK: 0,
  });
  assert.deepEqual(neutral.tokens, plain.tokens);
  assert.deepEqual(neutral.chain, plain.chain, 'neutral controls are left out of the effective chain');
  // A non-neutral penalty does change the draw (so the comparison above can fail).
  const penal = await generateText(lm(), 'Once upon a time', { ...base, repetitionPenalty: 1.8 });
  assert.notDeepEqual(penal.tokens, plain.tokens);
  assert.equal(penal.chain.processors[0]!.name, 'repetition-penalty');
});

test('a -Infinity logit bias never yields the banned token in 1000 draws', { skip }, async () => {
  const opts = { temperature: 1.3, seed: 3, n: 4, maxTokens: 250, stopAtEndOfGeneration: false } as const;
  const free = await generateText(lm(), 'Once upon a time', opts);
  // Ban the token the unbiased run drew most often (so the test fails if the ban leaks).
  const counts = new Map<number, number>();
  for (const s of free.sequences!) for (const id of s.tokens) counts.set(id, (counts.get(id) ?? 0) + 1);
  const [banned, freq] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
  assert.ok(freq > 20, `the most common token appears ${freq} times without the ban`);
  const done = await generateText(lm(), 'Once upon a time', { ...opts, logitBias: { [banned]: -Infinity } });
  const draws = done.sequences!.flatMap((s) => s.tokens);
  assert.equal(draws.length, 1000);
  assert.ok(!draws.includes(banned), `token ${banned} was banned`);
});

test('n = 4 samples: reproducible for a seed, distinct, sample 0 equals the single-sample run, one prefill', { skip }, async () => {
  const opts = { temperature: 1, topP: 0.95, seed: 21, n: 4, maxTokens: 40 };
  const events: TokenEvent[] = [];
  let done;
  for await (const ev of generate(lm(), 'Once upon a time', opts)) if (ev.type === 'token') events.push(ev); else done = ev;
  const again = await generateText(lm(), 'Once upon a time', opts);
  assert.ok(done?.sequences);
  assert.deepEqual(again.sequences!.map((s) => s.tokens), done.sequences.map((s) => s.tokens));
  assert.equal(new Set(done.sequences.map((s) => s.tokens.join(','))).size, 4, 'the samples differ');
  const single = await generateText(lm(), 'Once upon a time', { ...opts, n: 1 });
  assert.deepEqual(done.sequences[0]!.tokens, single.tokens);
  assert.equal(done.timings.prefillTokens, 5, 'the prompt is prefilled once');
  for (const s of done.sequences) {
    const mine = events.filter((e) => e.sequence === s.index);
    assert.deepEqual(mine.map((e) => e.id), s.tokens, 'token events carry their sequence');
    assert.equal(mine.map((e) => e.text).join(''), s.text);
    assert.ok(Math.abs(s.tokenLogprobs.reduce((a, b) => a + b, 0) - s.logprob) < 1e-9);
  }
  const best = done.sequences.reduce((a, b) => (b.logprob > a.logprob ? b : a));
  assert.deepEqual(done.tokens, best.tokens, 'the top-level fields describe the most likely sample');
  assert.equal(done.usage.completionTokens, done.sequences.reduce((a, s) => a + s.tokens.length, 0));
});

test('n > 1 with a session keeps the session at the prompt; a stateful processor without clone() is refused', { skip }, async () => {
  const s = createSession();
  const d = await generateText(lm(), 'Once upon a time', { temperature: 1, seed: 2, n: 3, maxTokens: 10, session: s });
  assert.equal(d.sequences!.length, 3);
  assert.deepEqual(s.tokens, d.promptTokens);
  assert.equal(s.cache!.length, d.promptTokens.length);
  const stateful: LogitsProcessor = { name: 'counter', apply(_c: Candidates) {}, accept() {} };
  await assert.rejects(generateText(lm(), 'x', { temperature: 1, n: 2, processors: [stateful], maxTokens: 2 }), UnsupportedError);
});

test('top logprobs: raw and processed, labelled, top-N only when asked', { skip }, async () => {
  const evs: GenerationEvent[] = [];
  for await (const ev of generate(lm(), 'Once upon a time', { temperature: 1, topK: 3, seed: 4, maxTokens: 12, topLogprobs: 5 })) evs.push(ev);
  const toks = evs.filter((e): e is TokenEvent => e.type === 'token');
  for (const t of toks) {
    const { raw, processed } = t.logprobs!;
    assert.equal(raw.source, 'raw');
    assert.equal(processed.source, 'processed');
    assert.equal(raw.id, t.id);
    assert.ok(Math.abs(raw.logprob - t.logprob) < 1e-9);
    assert.equal(raw.top.length, 5);
    assert.equal(processed.top.length, 3, 'top-k 3 leaves three candidates');
    for (let i = 1; i < raw.top.length; i++) assert.ok(raw.top[i - 1]!.logprob >= raw.top[i]!.logprob);
    assert.ok(processed.top.some((a) => a.id === t.id), 'the chosen token is among the processed survivors');
    assert.ok(Math.abs(processed.top.reduce((s, a) => s + Math.exp(a.logprob), 0) - 1) < 1e-5, 'processed top-3 is the whole distribution');
    assert.ok(processed.logprob >= raw.logprob, 'truncation renormalises upward');
  }
  const done = evs.at(-1)!;
  assert.equal(done.type, 'done');
  if (done.type === 'done') assert.equal(done.logprobs!.length, done.tokens.length);
  const plain = await generateText(lm(), 'Once upon a time', { temperature: 0, maxTokens: 5 });
  assert.equal(plain.logprobs, undefined);
  assert.equal(plain.tokenLogprobs.length, 5);
});

test('invalid strategy combinations are rejected with clear errors', { skip }, async () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ numBeams: 4, temperature: 0.7 }, /temperature cannot be combined with numBeams/],
    [{ numBeams: 4, topP: 0.9 }, /topP cannot be combined with numBeams/],
    [{ numBeams: 2, seed: 1 }, /seed cannot be combined/],
    [{ lengthPenalty: 2 }, /lengthPenalty applies to beam search only/],
    [{ earlyStopping: true }, /earlyStopping applies to beam search/],
    [{ numReturnSequences: 2 }, /numReturnSequences applies to beam search/],
    [{ numBeams: 2, numReturnSequences: 3 }, /cannot return 3 sequences from 2 beams/],
    [{ numBeams: 2, n: 3 }, /cannot return 3 sequences from 2 beams/],
    [{ numBeams: 4, n: 2, numReturnSequences: 3 }, /disagree/],
    [{ n: 2, temperature: 0 }, /identical sequences/],
    [{ n: 0 }, /\bn must be an integer/],
    [{ numBeams: 1.5 }, /numBeams/],
    [{ numBeams: 2, earlyStopping: 'sometimes' }, /earlyStopping must be/],
    [{ topLogprobs: 21 }, /topLogprobs/],
  ];
  for (const [o, re] of bad) {
    await assert.rejects(generateText(lm(), 'x', { maxTokens: 2, ...o } as never), (e: Error) => e instanceof InvalidOptionError && re.test(e.message), JSON.stringify(o));
  }
});
