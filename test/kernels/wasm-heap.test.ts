import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KVCache } from '../../src/kv/cache.ts';
import { WasmHeap, createSharedMemory } from '../../src/model/kernels/wasm/heap.ts';

const base = 1024;
const fresh = () => new WasmHeap(createSharedMemory(), base);

test('wasm heap: a released block is reused (best fit, split, cleared) instead of growing the memory', () => {
  const heap = fresh();
  const a = heap.alloc(4096), b = heap.alloc(10000), c = heap.alloc(4096);
  assert.deepEqual([a, b, c], [1024, 1024 + 4096, 1024 + 4096 + 10048]);
  new Uint8Array(heap.memory.buffer, b, 10000).fill(7);
  const top = heap.used;
  heap.free(b, 10000);
  assert.equal(heap.holeBytes, 10000);
  // the hole takes a smaller block at its (aligned) start; the rest stays a hole
  const d = heap.alloc(3000);
  assert.equal(d, b);
  assert.ok(new Uint8Array(heap.memory.buffer, d, 3000).every((x) => x === 0), 'a reused block reads as zeros');
  assert.equal(heap.used, top, 'nothing taken from above the top');
  assert.equal(heap.holeBytes, 10000 - 3000);
  // best fit: a second, smaller hole is preferred for a block that fits both
  heap.free(a, 4096);
  const e = heap.alloc(2000);
  assert.equal(e, a);
  // a block no hole holds comes from the top
  assert.equal(heap.alloc(20000), top);
});

test('wasm heap: neighbouring holes merge; a hole at the top lowers it; double or foreign releases throw', () => {
  const heap = fresh();
  const a = heap.alloc(4096), b = heap.alloc(4096), c = heap.alloc(4096), d = heap.alloc(4096);
  heap.free(a, 4096);
  heap.free(c, 4096);
  heap.free(b, 4096); // joins a and c
  assert.equal(heap.holeBytes, 3 * 4096);
  assert.equal(heap.alloc(3 * 4096), a, 'the merged hole holds a block of all three');
  heap.free(d, 4096);
  assert.equal(heap.used, d, 'releasing the last block lowers the top');
  const e = heap.alloc(4096); // keeps the top above a's block
  heap.free(a, 3 * 4096);
  assert.throws(() => heap.free(a + 64, 64), /released twice/, 'inside a hole');
  heap.free(e, 4096);
  assert.throws(() => heap.free(a, 4096), /not allocated/, 'above the lowered top');
  assert.throws(() => heap.free(heap.used + 4096, 64), /not allocated/);
  assert.equal(heap.used, base, 'everything released: the top is back at the start');
  assert.equal(heap.holeBytes, 0);
});

test('wasm heap: memory below a lowered top is cleared when handed out again', () => {
  const heap = fresh();
  const a = heap.alloc(8192);
  new Uint8Array(heap.memory.buffer, a, 8192).fill(9);
  heap.free(a, 8192);
  const b = heap.alloc(16384);
  assert.equal(b, a);
  assert.ok(new Uint8Array(heap.memory.buffer, b, 16384).every((x) => x === 0));
});

test('wasm heap: release() returns a managed array at once, once; subarrays of it are not managed', () => {
  const heap = fresh();
  const a = heap.f32Managed(1000);
  a.fill(1);
  const top = heap.used;
  heap.release(a.subarray(10)); // not a managed array: ignored
  assert.equal(heap.holeBytes, 0);
  heap.release(a);
  heap.release(a); // a second release is a no-op, not a double free
  assert.equal(heap.used, top - 4000);
  const b = heap.u16Managed(2000);
  assert.equal(b.byteOffset, a.byteOffset);
  assert.ok(b.every((x) => x === 0));
});

test('KVCache.dispose hands its buffers back to the allocator and leaves the cache unusable', () => {
  const heap = fresh();
  const alloc = { f32: heap.f32Managed, f16: heap.u16Managed, release: heap.release };
  const cache = new KVCache(3, 64, 40, undefined, alloc, 'f16', 2);
  const top = heap.used;
  assert.ok(top > base + 6 * 40 * 64 * 2 - 1);
  cache.dispose();
  assert.equal(heap.used, base, 'all six layer buffers released');
  assert.equal(cache.k.length, 0);
  assert.throws(() => cache.ensureRoom(1), /disposed/);
  assert.throws(() => new KVCache(3, 64, 40, undefined, alloc, 'f16', 2).copyFrom(cache), /disposed/);
  cache.dispose(); // twice: no-op
});
