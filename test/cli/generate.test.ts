/** The `tokenloop generate` CLI contract. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { needsShared, runCli, sharedPath } from '../helpers.js';

const skip = needsShared();
const BIN = sharedPath('models', 'stories260K', 'stories260K.bin');
const GGUF = sharedPath('models', 'stories260K', 'stories260K.gguf');

test('generate --json: contract fields, greedy equals the reference, logs stay off stdout', { skip }, () => {
  const ref = JSON.parse(readFileSync(sharedPath('reference', 'stories260K-greedy.json'), 'utf8'))[3] as { prompt: string; prompt_tokens: number[]; greedy_tokens: number[] };
  const r = runCli(['generate', '--json', '--temperature', '0', '-n', '300', ref.prompt]);
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.deepEqual(o.prompt_tokens, ref.prompt_tokens);
  assert.deepEqual(o.tokens, ref.greedy_tokens);
  assert.equal(o.finish_reason, 'stop');
  assert.equal(typeof o.text, 'string');
  assert.ok(o.prefill_tokens_per_s > 0 && o.decode_tokens_per_s > 0);
  assert.equal(o.model_bytes, 1056540, 'the model file size is reported');
  assert.ok(o.timings.load_ms > 0);
  assert.equal(r.stdout.trim().split('\n').length, 1);
});

test('generate plain mode streams the continuation only; -m and --tokenizer; --stop', { skip }, () => {
  const r = runCli(['generate', '-m', BIN, '--tokenizer', sharedPath('models', 'stories260K', 'tok512.bin'), '--temperature', '0', '-n', '20', 'Once upon a time']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.startsWith(', there was a little girl'), r.stdout);
  assert.match(r.stderr, /decode [\d.]+ tok\/s/);
  const s = runCli(['generate', '--temperature', '0', '-n', '40', '--stop', 'girl', '--stop', 'zzz', 'Once upon a time']);
  assert.equal(s.stdout, ', there was a little ');
});

test('generate: seeds reproduce, -- allows a prompt starting with "-" and an empty prompt', { skip }, () => {
  const a = JSON.parse(runCli(['generate', '--json', '--seed', '9', '-n', '12', '-m', GGUF, 'Lily']).stdout);
  const b = JSON.parse(runCli(['generate', '--json', '--seed', '9', '-n', '12', '-m', GGUF, 'Lily']).stdout);
  assert.deepEqual(a.tokens, b.tokens);
  assert.equal(a.seed, 9);
  const dash = runCli(['generate', '--json', '-n', '2', '--', '-x']);
  assert.equal(dash.code, 0, dash.stderr);
  assert.equal(JSON.parse(dash.stdout).prompt_tokens[0], 1);
  const empty = runCli(['generate', '--json', '-n', '2', '--', '']);
  assert.deepEqual(JSON.parse(empty.stdout).prompt_tokens, [1]);
});

test('generate: bad input gives one line, exit code 1, no stack trace', { skip }, () => {
  const cases: [string[], RegExp, Record<string, string>?][] = [
    [['generate', '--temperature', '-1', 'x'], /temperature/],
    [['generate', '--top-p', '1.5', 'x'], /topP/],
    [['generate', '--top-k', '-2', 'x'], /topK/],
    [['generate', '--top-k', 'abc', 'x'], /integer/],
    [['generate', '-m', '/nonexistent/model.gguf', 'x'], /not found/],
    [['generate', '-n', '1', 'Once upon a time '.repeat(200)], /prompt has \d+ tokens but the context holds 512/],
    [['generate', 'x'], /not found/, { TOKENLOOP_MODEL: '/nonexistent/dir' }],
  ];
  for (const [args, re, env] of cases) {
    const r = runCli(args, env);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.ok(!/\n\s+at /.test(r.stderr), `no stack trace: ${r.stderr}`);
    assert.equal(r.stdout, '');
  }
});

test('generate: --threads and --backend give the same greedy tokens; -c bounds the context', { skip }, () => {
  const run = (...extra: string[]) => {
    const r = runCli(['generate', '--json', '--temperature', '0', '-n', '40', ...extra, 'Once upon a time']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).tokens as number[];
  };
  const base = run('--backend', 'js');
  assert.deepEqual(run('-t', '1'), base);
  assert.deepEqual(run('--threads', '2', '--backend', 'wasm'), base);
  const c = JSON.parse(runCli(['generate', '--json', '--temperature', '0', '-n', '40', '-c', '12', 'Once upon a time']).stdout);
  assert.equal(c.finish_reason, 'length');
  assert.equal(c.prompt_tokens.length + c.tokens.length, 13);
  for (const [args, re] of [[['-t', '0'], /thread count/], [['--backend', 'gpu'], /"wasm" or "js"/], [['-c', '100000'], /exceeds the model's context length 512/]] as const) {
    const r = runCli(['generate', ...args, 'x']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, re);
  }
});

test('generate --kv-type f16: half the cache bytes, the same greedy text on the default model; bad values are named', { skip }, () => {
  const a = JSON.parse(runCli(['generate', '--json', '--temperature', '0', '-n', '24', 'Once upon a time']).stdout);
  const r = runCli(['generate', '--json', '--kv-type', 'f16', '--temperature', '0', '-n', '24', 'Once upon a time']);
  assert.equal(r.code, 0, r.stderr);
  const b = JSON.parse(r.stdout);
  assert.equal(b.cache.length, a.cache.length);
  assert.equal(b.cache.bytes * 2, a.cache.bytes);
  assert.equal(b.text, a.text);
  const bad = runCli(['generate', '--kv-type', 'q4', 'x']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--kv-type.*expected "f32" or "f16", got "q4"/);
});

test('generate --batch-size: a prompt run in batches gives the same greedy text; bad values are named', { skip }, () => {
  const prompt = 'Once upon a time there was a little girl named Lily who loved to play outside in the park';
  const a = JSON.parse(runCli(['generate', '--json', '--temperature', '0', '-n', '16', prompt]).stdout);
  const r = runCli(['generate', '--json', '--batch-size', '3', '--temperature', '0', '-n', '16', prompt]);
  assert.equal(r.code, 0, r.stderr);
  const b = JSON.parse(r.stdout);
  assert.equal(b.text, a.text);
  assert.equal(b.cache.length, a.cache.length);
  const bad = runCli(['generate', '--batch-size', '0', 'x']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--batch-size.*expected a batch size >= 1, got "0"/);
});
