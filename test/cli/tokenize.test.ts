import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO, needsShared, sharedPath } from '../helpers.js';

const skip = needsShared();
const TOK512 = sharedPath('models', 'stories260K', 'tok512.bin');
const BIN = sharedPath('models', 'stories260K', 'stories260K.bin');

function cli(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'src', 'cli', 'main.ts'), 'tokenize', ...args], { cwd: REPO, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('tokenize --json prints exactly one object with ids and pieces', { skip }, () => {
  const r = cli(['--tokenizer', TOK512, '--json', 'Hello world']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { ids: [1, 346, 306, 414, 263, 304, 341], pieces: ['<s>', ' He', 'll', 'o', ' w', 'or', 'ld'] });
  assert.equal(r.stdout.trim().split('\n').length, 1);
});

test('tokenize: --no-bos, --special, plain output and -m', { skip }, () => {
  const noBos = JSON.parse(cli(['-m', BIN, '--no-bos', '--json', 'hello']).stdout) as { ids: number[] };
  assert.deepEqual(noBos.ids, [281, 306, 414]);
  const plain = JSON.parse(cli(['--tokenizer', TOK512, '--no-bos', '--json', '</s>']).stdout) as { ids: number[] };
  assert.ok(!plain.ids.includes(2));
  const special = JSON.parse(cli(['--tokenizer', TOK512, '--no-bos', '--special', '--json', '</s>']).stdout) as { ids: number[]; pieces: string[] };
  assert.deepEqual(special, { ids: [2], pieces: ['</s>'] });
  const lines = cli(['--tokenizer', TOK512, 'hello']).stdout.trim().split('\n');
  assert.deepEqual(lines.map((l) => l.trim()), ['1 -> "<s>"', '281 -> " he"', '306 -> "ll"', '414 -> "o"']);
});

test('tokenize: -- ends options, so text may start with "-" or be empty', { skip }, () => {
  const dash = cli(['--tokenizer', TOK512, '--json', '--', '--json']);
  assert.equal(dash.code, 0, dash.stderr);
  const got = JSON.parse(dash.stdout) as { ids: number[]; pieces: string[] };
  assert.equal(got.ids[0], 1);
  assert.equal(got.pieces.slice(1).join(''), ' --json');
  const empty = cli(['--tokenizer', TOK512, '--json', '--', '']);
  assert.equal(empty.code, 0, empty.stderr);
  assert.deepEqual(JSON.parse(empty.stdout), { ids: [1], pieces: ['<s>'] });
  const emptyNoBos = cli(['--tokenizer', TOK512, '--json', '--no-bos', '--', '']);
  assert.deepEqual(JSON.parse(emptyNoBos.stdout), { ids: [], pieces: [] });
});

test('tokenize errors: one line, exit code 1', { skip }, () => {
  const missing = cli(['--tokenizer', join(REPO, 'no-such-tokenizer.bin'), 'x']);
  assert.equal(missing.code, 1);
  assert.equal(missing.stdout, '');
  assert.match(missing.stderr, /^tokenloop: error: tokenizer file not found: .*no-such-tokenizer\.bin\n$/);
  const mismatch = cli(['-m', BIN, '--tokenizer', sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf'), 'x']);
  assert.equal(mismatch.code, 1);
  assert.match(mismatch.stderr, /^tokenloop: error: .*32000 tokens.*vocabulary of 512\n$/);
  assert.equal(cli([]).code, 1, 'TEXT is required');
});
