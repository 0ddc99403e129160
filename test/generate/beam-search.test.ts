/**
 * Beam search: the bookkeeping (scores, finished pool, stopping rules, candidate ranking) on hand-made
 * numbers, and the search on stories260K (1 beam = greedy, 4 beams never worse than greedy on the
 * reference prompts, one prefill, bans, stop strings, sessions).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BeamHypotheses, beamScore, topBeamCandidates } from '../../src/decode/beam.js';
import { candidatesFromLogits } from '../../src/decode/candidates.js';
import { logSumExp } from '../../src/decode/logprobs.js';
import { createSamplingChain } from '../../src/decode/options.js';
import { beamSearch } from '../../src/generate/beam-search.js';
import { createSession, generateText } from '../../src/generate/generate.js';
import { loadLanguageModel, type LanguageModel } from '../../src/generate/language-model.js';
import { prepare } from '../../src/generate/prepare.js';
import { needsShared, sharedPath } from '../helpers.js';

const skip = needsShared();
let lmCache: LanguageModel | undefined;
const lm = () => (lmCache ??= loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') }));
interface RefCase { prompt: string; prompt_tokens: number[]; greedy_tokens: number[] }
const ref: RefCase[] = skip ? [] : JSON.parse(readFileSync(sharedPath('reference', 'stories260K-greedy.json'), 'utf8'));

test('beam score is Σ logprob / length^lengthPenalty', () => {
  assert.equal(beamScore(-6, 3, 1), -2);
  assert.equal(beamScore(-6, 3, 0), -6);
  assert.equal(beamScore(-8, 4, 2), -0.5);
  assert.equal(beamScore(-8, 4, -1), -32);
});

test('the finished pool keeps the numBeams best; isDone follows earlyStopping true / false / never', () => {
  const h = new BeamHypotheses<string>(2, 1, false, 10);
  h.add(-4, 2, 'a'); // -2
  assert.equal(h.isDone(-1, 2), false, 'fewer than numBeams finished');
  h.add(-9, 3, 'b'); // -3
  h.add(-1, 1, 'c'); // -1 replaces b
  assert.deepEqual(h.sorted().map((x) => x.item), ['c', 'a']);
  h.add(-100, 2, 'd');
  assert.equal(h.size, 2);
  // false: done when the best open sum at the current length cannot beat the worst (-2).
  assert.equal(h.isDone(-5, 2), true); // -2.5 <= -2
  assert.equal(h.isDone(-3, 2), false); // -1.5 > -2
  const t = new BeamHypotheses<string>(1, 1, true, 10);
  t.add(-50, 1, 'x');
  assert.equal(t.isDone(0, 1), true, 'true: done once numBeams are finished');
  // never (lengthPenalty > 0): the open beam could still grow to maxLength 10: -5/10 = -0.5 > -2.
  const nv = new BeamHypotheses<string>(1, 1, 'never', 10);
  nv.add(-4, 2, 'x');
  assert.equal(nv.isDone(-5, 2), false);
  assert.equal(nv.isDone(-30, 2), true);
});

test('candidate ranking: best cumulative log-prob first over all beams, banned tokens never', () => {
  const a = candidatesFromLogits([0, Math.log(3), -Infinity]);
  const b = candidatesFromLogits([Math.log(9), 0, 0]);
  const steps = [
    { sum: -1, cands: a, lse: logSumExp(a.logits, a.size) },
    { sum: -2, cands: b, lse: logSumExp(b.logits, b.size) },
  ];
  const top = topBeamCandidates(steps, 4);
  const expect = [
    { beam: 0, token: 1, sum: -1 + Math.log(0.75) },
    { beam: 1, token: 0, sum: -2 + Math.log(9 / 11) },
    { beam: 0, token: 0, sum: -1 + Math.log(0.25) },
    { beam: 1, token: 1, sum: -2 + Math.log(1 / 11) },
  ];
  assert.deepEqual(top.map((c) => [c.beam, c.token]), expect.map((c) => [c.beam, c.token]));
  top.forEach((c, i) => assert.ok(Math.abs(c.sum - expect[i]!.sum) < 1e-6));
  assert.ok(topBeamCandidates(steps, 10).every((c) => !(c.beam === 0 && c.token === 2)));
});

test('beam search with one beam equals greedy (through generate and through the beam loop itself)', { skip }, async () => {
  for (const r of ref.slice(0, 3)) {
    const budget = 60;
    const greedy = await generateText(lm(), r.prompt, { temperature: 0, maxTokens: budget });
    const one = await generateText(lm(), r.prompt, { numBeams: 1, temperature: 0, maxTokens: budget });
    assert.deepEqual(one.tokens, greedy.tokens);
    const pre = prepare(lm(), r.prompt, { maxTokens: budget });
    const chain = createSamplingChain({ temperature: 0 }, lm().model.config.nVocab);
    const done = await beamSearch(lm(), pre, chain, { kind: 'beam', numBeams: 1, lengthPenalty: 1, earlyStopping: false, numReturnSequences: 1 },
      { maxTokens: budget, stop: [], eog: lm().endOfGeneration, sessionCache: false });
    assert.deepEqual(done.tokens, greedy.tokens, `beam loop, 1 beam, ${JSON.stringify(r.prompt)}`);
    assert.ok(Math.abs(done.logprob - greedy.logprob) < 1e-9);
  }
});

test('4 beams: the best sequence is at least as likely as greedy on every reference prompt; one prefill', { skip }, async () => {
  for (const r of ref) {
    const budget = 257 - r.prompt_tokens.length; // the reference's length budget (run.c: 256 steps)
    const greedy = await generateText(lm(), r.prompt, { temperature: 0, maxTokens: budget });
    assert.deepEqual(greedy.tokens, r.greedy_tokens);
    const beam = await generateText(lm(), r.prompt, { numBeams: 4, numReturnSequences: 4, maxTokens: budget });
    assert.ok(beam.logprob >= greedy.logprob, `${JSON.stringify(r.prompt)}: beam ${beam.logprob} < greedy ${greedy.logprob}`);
    assert.equal(beam.timings.prefillTokens, r.prompt_tokens.length, 'the prompt is prefilled once for all beams');
    const seqs = beam.sequences!;
    assert.equal(seqs.length, 4);
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i - 1]!.score! >= seqs[i]!.score!, 'sequences come best score first');
    for (const s of seqs) {
      assert.ok(Math.abs(s.tokenLogprobs.reduce((a, b) => a + b, 0) - s.logprob) < 1e-9);
      // No processors: the beam score is the raw sum over length^1.
      assert.ok(Math.abs(s.score! - s.logprob / s.tokens.length) < 1e-9);
      assert.ok(s.tokens.length <= budget);
    }
    assert.deepEqual(beam.strategy, { kind: 'beam', numBeams: 4, lengthPenalty: 1, earlyStopping: false, numReturnSequences: 4 });
  }
});

test('beam search: bans hold in every beam, stop strings end hypotheses, early stopping, sessions untouched', { skip }, async () => {
  const base = await generateText(lm(), 'Once upon a time', { numBeams: 3, maxTokens: 30 });
  const banned = base.tokens[3]!;
  const b = await generateText(lm(), 'Once upon a time', { numBeams: 3, numReturnSequences: 3, maxTokens: 30, logitBias: { [banned]: -Infinity } });
  for (const s of b.sequences!) assert.ok(!s.tokens.includes(banned));
  const stop = base.text.slice(10, 16);
  const st = await generateText(lm(), 'Once upon a time', { numBeams: 3, maxTokens: 30, stop: [stop] });
  assert.equal(st.finishReason, 'stop');
  assert.deepEqual(st.stop, { kind: 'stop-string', text: stop });
  assert.ok(!st.text.includes(stop));
  // Early stopping true ends no later than false; 'never' no earlier.
  const forwards = async (earlyStopping: boolean | 'never') =>
    (await generateText(lm(), 'One day, a big bear', { numBeams: 4, maxTokens: 200, earlyStopping })).timings.decodeTokens;
  const [t, f, nv] = [await forwards(true), await forwards(false), await forwards('never')];
  assert.ok(t <= f && f <= nv, `${t} <= ${f} <= ${nv}`);
  const s = createSession();
  const d = await generateText(lm(), 'Once upon a time', { numBeams: 2, maxTokens: 10, session: s });
  assert.deepEqual(s.tokens, d.promptTokens);
  assert.equal(s.cache!.length, d.promptTokens.length);
  const again = await generateText(lm(), 'Once upon a time', { numBeams: 2, maxTokens: 10, session: s });
  assert.deepEqual(again.tokens, d.tokens);
  assert.equal(again.timings.prefillTokens, 1, 'the session prefix is reused');
});

test('beam search: maxTokens 0 and an aborted signal end cleanly', { skip }, async () => {
  const z = await generateText(lm(), 'Once upon a time', { numBeams: 3, maxTokens: 0 });
  assert.deepEqual(z.tokens, []);
  assert.deepEqual(z.stop, { kind: 'max-tokens', limit: 0 });
  const ac = new AbortController();
  ac.abort();
  const a = await generateText(lm(), 'Once upon a time', { numBeams: 3, maxTokens: 50, signal: ac.signal });
  assert.equal(a.finishReason, 'abort');
  assert.deepEqual(a.tokens, []);
  const ctx = await generateText(lm(), 'Once upon a time', { numBeams: 2, contextLength: 12, stopAtEndOfGeneration: false });
  assert.deepEqual(ctx.stop, { kind: 'context', limit: 12 });
  assert.equal(ctx.promptTokens.length + ctx.tokens.length, 13, 'same context rule as sampling');
});
