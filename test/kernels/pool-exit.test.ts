import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO } from '../helpers.ts';

// A process that creates a 2-thread pool, uses it and then simply ends (no close()) must exit;
// so must one that closes it explicitly.
function runScript(body: string): { status: number | null; out: string } {
  const backend = pathToFileURL(join(REPO, 'src/model/kernels/wasm/backend.ts')).href;
  const src = `import { createWasmBackend } from '${backend}';
const be = createWasmBackend({ threads: 2, parallelMinMacs: 0 });
const w = { type: 0, data: new Float32Array(64 * 8).fill(1) };
const out = new Float32Array(8);
be.matmul(out, w, new Float32Array(64).fill(0.5), 64, 8, 1);
console.log('sum', out[0]);
${body}`;
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-pool-'));
  try {
    const file = join(dir, 'script.mjs');
    writeFileSync(file, src);
    const r = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: REPO, timeout: 20000, encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a process with an idle thread pool exits on its own', () => {
  const r = runScript('');
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /sum 32/);
});

test('close() stops the workers and the process exits', () => {
  const r = runScript(`await be.close(); await be.close(); console.log('closed');
try { be.matmul(out, w, new Float32Array(64), 64, 8, 1); } catch (e) { console.log('after close:', e.message); }`);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /closed/);
  assert.match(r.out, /after close: thread pool is closed/);
});
