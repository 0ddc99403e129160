/** Test helpers: where ../shared lives, and a loud skip when it is absent (CI always has it). */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SHARED = process.env['TOKENLOOP_SHARED'] ?? resolve(REPO, '..', 'shared');
export const HAVE_SHARED = existsSync(SHARED);
export const sharedPath = (...p: string[]) => join(SHARED, ...p);

/** Pass as the `skip` option of a test that needs ../shared. */
export function needsShared(): string | false {
  if (HAVE_SHARED) return false;
  const msg = `!!! ../shared not found at ${SHARED}: SKIPPING tests that need the shared models/reference data !!!`;
  console.warn(msg);
  return msg;
}

/** Run the CLI from source (`tokenloop ARGS...`) and capture its output. */
export function runCli(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'src', 'cli', 'main.ts'), ...args], {
    cwd: REPO, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
