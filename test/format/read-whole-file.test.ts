/**
 * readWholeFile: the bytes of the file, whether read straight into a fresh array or (with an
 * allocator, as for the kernels' memory) through the 2 MiB bounce buffer in several reads, with a
 * last partial chunk; and a missing file is an error that names it.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWholeFile } from '../../src/format/open.ts';
import { ModelFormatError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'tokenloop-read-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function pattern(n: number): Uint8Array {
  const b = new Uint8Array(n);
  let s = 12345;
  for (let i = 0; i < n; i++) { s = (s * 1103515245 + 12345) >>> 0; b[i] = s >>> 24; }
  return b;
}

test('readWholeFile returns the file bytes, direct and through the bounce buffer (several chunks, a partial last one)', () => {
  for (const size of [0, 1, 4097, (2 << 20) - 1, (2 << 20) + 1, 5 * (2 << 20) + 12345]) {
    const path = join(dir, `f${size}.bin`);
    const want = pattern(size);
    writeFileSync(path, want);
    assert.deepEqual(readWholeFile(path), want, `${size} bytes, direct`);
    let allocated = 0;
    const arena = new Uint8Array(size + 64);
    const got = readWholeFile(path, (n) => { allocated = n; return arena.subarray(32, 32 + n); });
    assert.equal(allocated, size);
    assert.equal(got.byteOffset, 32, 'the allocator\'s array is returned, not a copy');
    assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(Buffer.from(want)), `${size} bytes, through an allocator`);
    assert.equal(arena[31], 0, 'nothing written before the allocation');
    assert.equal(arena[32 + size], 0, 'nothing written after it');
  }
});

test('readWholeFile of a missing file names it', () => {
  assert.throws(() => readWholeFile(join(dir, 'missing.gguf'), (n) => new Uint8Array(n)), (e: unknown) => e instanceof ModelFormatError && /missing\.gguf/.test((e as Error).message));
});
