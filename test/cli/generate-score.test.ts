/** `tokenloop score`: teacher-forced log-probabilities from the CLI (JSON and plain), errors. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { needsShared, runCli, sharedPath } from '../helpers.js';

const skip = needsShared();

test('score --json --tokens: per-token logprobs of the reference continuation match run.c logits', { skip }, () => {
  const r0 = JSON.parse(readFileSync(sharedPath('reference', 'stories260K-greedy.json'), 'utf8'))[3] as
    { prompt_tokens: number[]; greedy_tokens: number[]; steps: { next: number; logits: number[] }[] };
  const ids = [...r0.prompt_tokens, ...r0.greedy_tokens.slice(0, 20)];
  const r = runCli(['score', '--json', '--tokens', ids.join(',')]);
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.equal(o.scored.length, ids.length - 1);
  o.scored.forEach((s: { id: number; logprob: number }, i: number) => {
    const l = r0.steps[i]!.logits;
    const m = Math.max(...l);
    const want = l[s.id]! - m - Math.log(l.reduce((a, x) => a + Math.exp(x - m), 0));
    assert.ok(Math.abs(s.logprob - want) < 1e-4, `position ${i}`);
  });
  assert.ok(Math.abs(o.perplexity - Math.exp(-o.logprob / o.scored.length)) < 1e-9);
});

test('score text with --context, plain output, --top-logprobs; errors', { skip }, () => {
  const j = runCli(['score', '--json', '--context', 'Once upon a time', '--top-logprobs', '2', ', there was']);
  assert.equal(j.code, 0, j.stderr);
  const o = JSON.parse(j.stdout);
  assert.equal(o.context_length, 5);
  assert.deepEqual(o.scored.map((s: { text: string }) => s.text).join(''), ', there was');
  assert.equal(o.scored[0].top_logprobs.length, 2);
  const p = runCli(['score', 'Once upon a time']);
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stdout, /4 tokens scored · logprob -[\d.]+ · mean -[\d.]+ · perplexity [\d.]+\n$/);
  for (const [args, re] of [[['score'], /either TEXT or --tokens/], [['score', '--tokens', '1,9999'], /out of range/], [['score', '--top-logprobs', '30', 'x'], /topLogprobs/]] as [string[], RegExp][]) {
    const r = runCli(args);
    assert.equal(r.code, 1, args.join(' '));
    assert.match(r.stderr, re);
  }
});
