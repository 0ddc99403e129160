/** `tokenloop generate`: the decoding flags, beam search, --n, --top-logprobs and their --json fields; bad combinations. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needsShared, runCli } from '../helpers.js';

const skip = needsShared();
const json = (args: string[]) => {
  const r = runCli(['generate', '--json', ...args]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
};

test('--json: logprob, token_logprobs, top_logprobs (raw) and processed_logprobs; controls show up in chain', { skip }, () => {
  const o = json(['--seed', '4', '-n', '8', '--top-logprobs', '3', '--typical-p', '0.9', '--repetition-penalty', '1.2', '--repeat-last-n', '16',
    '--presence-penalty', '0.5', '--frequency-penalty', '0.3', '--no-repeat-ngram-size', '3', '--logit-bias', '432=-inf', '--logit-bias', '383=1.5', 'Once upon a time']);
  assert.equal(o.token_logprobs.length, o.tokens.length);
  assert.ok(Math.abs(o.token_logprobs.reduce((a: number, b: number) => a + b, 0) - o.logprob) < 1e-9);
  assert.ok(!o.tokens.includes(432), 'banned by -inf');
  assert.equal(o.top_logprobs.length, o.tokens.length);
  for (const [i, alts] of o.top_logprobs.entries()) {
    assert.equal(alts.length, 3);
    assert.deepEqual(Object.keys(alts[0]).sort(), ['id', 'logprob']);
    if (alts.some((a: { id: number }) => a.id === o.tokens[i])) {
      assert.ok(Math.abs(alts.find((a: { id: number }) => a.id === o.tokens[i]).logprob - o.token_logprobs[i]) < 1e-12);
    }
    assert.ok(o.processed_logprobs[i].top_logprobs.every((a: { id: number }) => a.id !== 432), 'the ban shows in the processed distribution');
  }
  const names = o.chain.processors.map((p: { name: string }) => p.name);
  for (const n of ['repetition-penalty', 'presence-frequency-penalty', 'logit-bias', 'no-repeat-ngram', 'typical-p', 'temperature']) assert.ok(names.includes(n), n);
  assert.equal(o.chain.processors[0].params.lastN, 16);
  // --order is honoured and reported.
  const ord = json(['--seed', '4', '-n', '2', '--order', 'temperature,top-k,top-p,min-p', 'Once']);
  assert.deepEqual(ord.chain.processors.map((p: { name: string }) => p.name), ['temperature', 'top-k', 'top-p', 'min-p']);
  assert.equal(o.top_logprobs === undefined, false);
  assert.equal(ord.top_logprobs, undefined, 'top_logprobs only when asked');
});

test('--num-beams with --n returns sequences (best first); beam search ignores the CLI sampling defaults', { skip }, () => {
  const g = json(['--temperature', '0', '-n', '40', 'Lily and Ben']);
  const b = json(['--num-beams', '4', '--n', '3', '--length-penalty', '1', '--early-stopping', 'never', '-n', '40', 'Lily and Ben']);
  assert.equal(b.sequences.length, 3);
  assert.deepEqual(b.tokens, b.sequences[0].tokens);
  assert.equal(b.text, b.sequences[0].text);
  assert.equal(b.logprob, b.sequences[0].logprob);
  for (const s of b.sequences) for (const k of ['tokens', 'text', 'logprob', 'finish_reason']) assert.ok(k in s, k);
  assert.ok(b.logprob >= g.logprob, `beam ${b.logprob} >= greedy ${g.logprob}`);
  assert.deepEqual(b.strategy, { kind: 'beam', numBeams: 4, lengthPenalty: 1, earlyStopping: 'never', numReturnSequences: 3 });
  assert.equal(b.chain.sampler.name, 'greedy', 'no temperature/top-k/top-p/min-p defaults with beams');
  const one = json(['--num-beams', '2', '--num-return-sequences', '1', '-n', '10', 'Lily']);
  assert.equal(one.sequences, undefined, 'one sequence: no sequences array');
});

test('--n 3 samples: reproducible, sequences in sample order, plain mode prints each under a header', { skip }, () => {
  const a = json(['--n', '3', '--seed', '8', '-n', '12', 'Once upon a time']);
  const b = json(['--n', '3', '--seed', '8', '-n', '12', 'Once upon a time']);
  assert.deepEqual(a.sequences, b.sequences);
  assert.deepEqual(a.sequences.map((s: { index: number }) => s.index), [0, 1, 2]);
  const best = a.sequences.reduce((x: { logprob: number }, y: { logprob: number }) => (y.logprob > x.logprob ? y : x));
  assert.deepEqual(a.tokens, best.tokens);
  assert.equal(a.usage.completion_tokens, 36);
  const plain = runCli(['generate', '--n', '2', '--seed', '8', '-n', '12', 'Once upon a time']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, /^--- sequence 0 · logprob -?[\d.]+ · length ---\n/);
  assert.match(plain.stdout, /\n--- sequence 1 · /);
  assert.equal(plain.stdout.split('\n')[1], a.sequences[0].text);
});

test('invalid flag combinations fail with one clear line', { skip }, () => {
  const cases: [string[], RegExp][] = [
    [['--num-beams', '4', '--temperature', '0.7'], /temperature cannot be combined with numBeams/],
    [['--num-beams', '4', '--top-k', '5'], /topK cannot be combined with numBeams/],
    [['--num-beams', '2', '--n', '3'], /cannot return 3 sequences from 2 beams/],
    [['--length-penalty', '2'], /lengthPenalty applies to beam search only/],
    [['--n', '2', '--temperature', '0'], /identical sequences/],
    [['--top-logprobs', '21'], /topLogprobs/],
    [['--logit-bias', '13'], /ID=BIAS/],
    [['--logit-bias', '99999=1'], /logitBias token id/],
    [['--early-stopping', 'maybe'], /true, false or never/],
    [['--order', 'top-k,bogus'], /order contains "bogus"/],
    [['--typical-p', '0'], /typicalP/],
    [['--presence-penalty', '3'], /presencePenalty/],
  ];
  for (const [args, re] of cases) {
    const r = runCli(['generate', '-n', '2', ...args, 'x']);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(' '));
    assert.ok(!/\n\s+at /.test(r.stderr), 'no stack trace');
    assert.equal(r.stdout, '');
  }
});

test('--json-schema FILE and --json-mode constrain the output; bad schema files are clear errors', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-schema-'));
  const file = join(dir, 'person.json');
  writeFileSync(file, JSON.stringify({ type: 'object', properties: { name: { type: 'string', maxLength: 8 }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false }));
  const o = json(['--json-schema', file, '--seed', '1', '-n', '40', 'Once']);
  const v = JSON.parse(o.text);
  assert.deepEqual(Object.keys(v).sort(), ['age', 'name']);
  assert.ok(Number.isInteger(v.age));
  const m = json(['--json-mode', '--seed', '2', '-n', '30', 'Once']);
  assert.equal(typeof JSON.parse(m.text), 'object');
  writeFileSync(join(dir, 'bad.json'), '{');
  for (const [args, re] of [[['--json-schema', join(dir, 'bad.json')], /not valid JSON/], [['--json-schema', join(dir, 'none.json')], /cannot read/],
    [['--json-mode', '--json-schema', file], /exclusive/]] as [string[], RegExp][]) {
    const r = runCli(['generate', ...args, 'x']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, re);
  }
});
