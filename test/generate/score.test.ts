/** scoreText(): teacher-forced log-probabilities against run.c's reference logits, perplexity, errors. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ContextOverflowError, InvalidOptionError } from '../../src/errors.js';
import { generateText } from '../../src/generate/generate.js';
import { loadLanguageModel, type LanguageModel } from '../../src/generate/language-model.js';
import { scoreText } from '../../src/generate/score.js';
import { needsShared, sharedPath } from '../helpers.js';

const skip = needsShared();
let lmCache: LanguageModel | undefined;
const lm = () => (lmCache ??= loadLanguageModel({ model: sharedPath('models', 'stories260K', 'stories260K.bin') }));
interface Step { pos: number; input: number; next: number; logits: number[] }
interface RefCase { prompt: string; prompt_tokens: number[]; greedy_tokens: number[]; steps: Step[] }
const ref: RefCase[] = skip ? [] : JSON.parse(readFileSync(sharedPath('reference', 'stories260K-greedy.json'), 'utf8'));

/** log-softmax of the reference logits at `id`, in float64. */
function refLogprob(logits: number[], id: number): number {
  const m = Math.max(...logits);
  return logits[id]! - m - Math.log(logits.reduce((s, l) => s + Math.exp(l - m), 0));
}

test('scoring the reference greedy continuation matches the log-probabilities of the reference logits (1e-4)', { skip }, () => {
  for (const r of ref) {
    const res = scoreText(lm(), r.greedy_tokens, { context: r.prompt_tokens, chunkSize: 50 });
    assert.equal(res.scored.length, r.greedy_tokens.length);
    assert.equal(res.contextLength, r.prompt_tokens.length);
    let worst = 0;
    res.scored.forEach((s, i) => {
      const step = r.steps[r.prompt_tokens.length - 1 + i]!;
      assert.equal(step.next, s.id);
      worst = Math.max(worst, Math.abs(s.logprob - refLogprob(step.logits, s.id)));
    });
    assert.ok(worst < 1e-4, `${JSON.stringify(r.prompt)}: max error ${worst}`);
    const sum = res.scored.reduce((a, s) => a + s.logprob, 0);
    assert.ok(Math.abs(res.logprob - sum) < 1e-9);
    assert.ok(Math.abs(res.perplexity - Math.exp(-sum / res.scored.length)) < 1e-9);
  }
});

test('score agrees with the logprobs generate() reports; text input with a context; top alternatives', { skip }, async () => {
  const g = await generateText(lm(), 'Once upon a time', { temperature: 0, maxTokens: 20 });
  const s = scoreText(lm(), g.tokens, { context: g.promptTokens, topLogprobs: 3 });
  s.scored.forEach((t, i) => {
    assert.ok(Math.abs(t.logprob - g.tokenLogprobs[i]!) < 1e-5);
    assert.equal(t.top!.length, 3);
    assert.equal(t.top![0]!.id, t.id, 'greedy tokens are the top alternative');
  });
  const whole = scoreText(lm(), 'Once upon a time, there was');
  assert.equal(whole.contextLength, 1, 'without a context everything after BOS is scored');
  assert.equal(whole.scored.length, whole.tokens.length - 1);
  const ctx = scoreText(lm(), ', there was', { context: 'Once upon a time' });
  assert.equal(ctx.tokens.length, whole.tokens.length);
  assert.deepEqual(ctx.scored, whole.scored.slice(ctx.contextLength - 1));
  // A likely text scores better than a scrambled one.
  const bad = scoreText(lm(), 'time a upon there Once was,');
  assert.ok(bad.perplexity > whole.perplexity * 2);
});

test('score errors', { skip }, () => {
  assert.throws(() => scoreText(lm(), '', { addBos: true }), InvalidOptionError);
  assert.throws(() => scoreText(lm(), [1, 9999]), /outside the vocabulary/);
  assert.throws(() => scoreText(lm(), 'x', { topLogprobs: 50 }), /topLogprobs/);
  assert.throws(() => scoreText(lm(), 'Once upon a time '.repeat(200)), ContextOverflowError);
});
