import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGGUF } from '../../src/format/gguf.ts';
import { readFileSync } from 'node:fs';
import { needsShared, REPO, sharedPath } from '../helpers.ts';

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: REPO, encoding: 'utf8' });

test('tokenloop synth and quantize on the command line: files, summaries and one-line errors', { skip: needsShared() }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tl-cli-'));
  try {
    const a = join(dir, 'a.gguf'), b = join(dir, 'b.gguf');
    const s = cli('synth', '--dim', '32', '--layers', '1', '--heads', '2', '--hidden', '64', '--seed', '9', '--ctx', '64', a);
    assert.equal(s.status, 0, s.stderr);
    assert.match(s.stdout, /wrote .*a\.gguf: 1\.0M weights, vocab 32000, F32/);
    const q = cli('quantize', '-q', a, b, 'q4_0');
    assert.equal(q.status, 0, q.stderr);
    assert.match(q.stdout, /Q4_0 \(file_type 2\).*tensors: /);
    assert.equal(parseGGUF(new Uint8Array(readFileSync(b))).meta.get('general.file_type'), 2);
    const bad = cli('quantize', a, join(dir, 'c.gguf'), 'Q9');
    assert.equal(bad.status, 1);
    assert.equal(bad.stderr, 'tokenloop: error: unknown type "Q9"; supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K\n');
    const notGguf = cli('quantize', sharedPath('models', 'stories260K', 'tok512.bin'), join(dir, 'c.gguf'), 'Q8_0');
    assert.equal(notGguf.status, 1);
    assert.match(notGguf.stderr, /^tokenloop: error: .*tok512\.bin: not a GGUF file \(bad magic 0x[0-9a-f]{8}\)\n$/);
    const badNum = cli('synth', '--dim', 'x', '--layers', '1', '--heads', '2', '--hidden', '64', join(dir, 'd.gguf'));
    assert.equal(badNum.status, 1);
    assert.match(badNum.stderr, /--dim must be a non-negative integer, got "x"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
