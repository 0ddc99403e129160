/** CLI-wide behaviour: help, unknown commands, closed pipes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO, needsShared, runCli } from '../helpers.js';

test('help lists every command; an unknown command exits 1', () => {
  const h = runCli(['--help']);
  assert.equal(h.code, 0);
  for (const c of ['generate', 'tokenize', 'template', 'chat', 'eval', 'info', 'score', 'quantize', 'synth']) assert.match(h.stdout, new RegExp(`\\n  ${c} `), c);
  const u = runCli(['frobnicate']);
  assert.equal(u.code, 1);
  assert.match(u.stderr, /unknown command 'frobnicate'/);
});

test('a reader that closes the pipe early (| head) does not crash the CLI', { skip: needsShared() }, () => {
  const main = join(REPO, 'src', 'cli', 'main.ts');
  const r = spawnSync('bash', ['-c', `"${process.execPath}" --import tsx "${main}" generate --temperature 0 -n 250 "Once" | head -c 10; echo " rc=\${PIPESTATUS[0]}"`], { cwd: REPO, encoding: 'utf8' });
  assert.match(r.stdout, /^ upon a ti rc=0\n$/, r.stdout + r.stderr);
  assert.ok(!/EPIPE|Error/.test(r.stderr), r.stderr);
});
