// Runs every test/**/*.test.ts file with Node's built-in test runner (TypeScript via tsx).
// Node 20's runner does not expand globs itself, so we collect the files here.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...collect(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}
const filter = process.argv.slice(2);
const files = collect('test').filter((f) => filter.length === 0 || filter.some((s) => f.includes(s)));
if (files.length === 0) { console.error('no test files found'); process.exit(1); }
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
