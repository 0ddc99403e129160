/**
 * readWholeFile: the bytes of the file, whether read straight into a fresh array or (with an
 * allocator, as for the kernels' memory) through the bounce buffer (BOUNCE) in several reads, with a
 * last partial chunk; and a missing file is an error that names it. readParallel: several threads
 * reading chunks of a file into shared memory, and the calling thread covering for workers that fail.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWholeFile } from '../../src/format/open.ts';
import { BOUNCE, PARALLEL_CHUNK, readParallel } from '../../src/format/parallel-read.ts';
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
  for (const size of [0, 1, 4097, BOUNCE - 1, BOUNCE + 1, 5 * BOUNCE + 12345, (2 << 20) + 1]) {
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

test('readParallel: several threads fill a view of shared memory with the file bytes (chunks claimed from a counter; partial last chunk)', () => {
  const size = 37 * 4096 + 123;
  const path = join(dir, 'par.bin');
  const want = pattern(size);
  writeFileSync(path, want);
  for (const [readers, callerReads] of [[1, true], [2, true], [3, true], [2, false], [3, false]] as const) {
    const sab = new SharedArrayBuffer(size + 64);
    const dst = new Uint8Array(sab, 32, size);
    const fd = openSync(path, 'r');
    try {
      readParallel(fd, path, dst, readers, { chunk: 4096, callerReads });
    } finally {
      closeSync(fd);
    }
    assert.ok(Buffer.from(dst).equals(Buffer.from(want)), `${readers} reader(s)${callerReads ? '' : ', all chunks through workers'}`);
    const all = new Uint8Array(sab);
    assert.equal(all[31], 0, 'nothing written before the view');
    assert.equal(all[32 + size], 0, 'nothing written after it');
  }
});

test('readParallel: when the workers cannot open the file the calling thread reads it all; a file shorter than the view is an error that names it', () => {
  const size = 20 * 4096;
  const path = join(dir, 'gone.bin');
  const want = pattern(size);
  writeFileSync(path, want);
  const fd = openSync(path, 'r');
  try {
    unlinkSync(path); // the open descriptor still reads it; a worker's open(path) fails
    const dst = new Uint8Array(new SharedArrayBuffer(size));
    readParallel(fd, path, dst, 3, { chunk: 4096 });
    assert.ok(Buffer.from(dst).equals(Buffer.from(want)));
  } finally {
    closeSync(fd);
  }
  const short = join(dir, 'short.bin');
  writeFileSync(short, pattern(10 * 4096));
  const fd2 = openSync(short, 'r');
  try {
    assert.throws(() => readParallel(fd2, short, new Uint8Array(new SharedArrayBuffer(12 * 4096)), 2, { chunk: 4096 }),
      (e: unknown) => e instanceof ModelFormatError && /short\.bin: unexpected end of file/.test((e as Error).message));
  } finally {
    closeSync(fd2);
  }
  assert.throws(() => readParallel(0, short, new Uint8Array(16), 2), TypeError);
});

test('readWholeFile with several readers into shared memory (the kernels\' memory) returns the same bytes', () => {
  const size = 2 * PARALLEL_CHUNK + 4099;
  const path = join(dir, 'big.bin');
  const want = pattern(size);
  writeFileSync(path, want);
  const got = readWholeFile(path, (n) => new Uint8Array(new SharedArrayBuffer(n)), 2, PARALLEL_CHUNK);
  assert.ok(got.buffer instanceof SharedArrayBuffer);
  assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(Buffer.from(want)));
});
