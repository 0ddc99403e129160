import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { needsShared, REPO } from '../helpers.js';

const skip = needsShared();

test('tokenloop serve prints its URL, answers, and exits cleanly on SIGTERM', { skip, timeout: 60_000 }, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src', 'cli', 'main.ts'), 'serve', '--port', '0', '--model-name', 'tiny'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${stderr}`)), 30_000);
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /at (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(stderr);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    });
    child.on('exit', () => reject(new Error(`exited early: ${stderr}`)));
  });
  const models = await (await fetch(`${url}/v1/models`)).json() as { data: { id: string }[] };
  assert.deepEqual(models.data.map((m) => m.id), ['tiny']);
  const r = await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', prompt: 'Once', max_tokens: 3 }) });
  assert.equal(r.status, 200);
  const code = await new Promise<number | null>((resolve) => { child.on('exit', (c) => resolve(c)); child.kill('SIGTERM'); });
  assert.equal(code, 0, stderr);
  assert.match(stderr, /POST \/v1\/completions · length · \d+ prompt \+ 3 completion tokens/);
  assert.match(stderr, /SIGTERM: shutting down/);
});
