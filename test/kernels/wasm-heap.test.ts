import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WasmHeap, createSharedMemory } from '../../src/model/kernels/wasm/heap.ts';

// Managed blocks (KV caches, forward scratch) are zero when handed out. A fresh block is left as
// the grow left it, untouched, so its pages are not committed until used; a reused block is cleared.

test('heap: a managed block is zero, fresh or reused after garbage was written to it', () => {
  const heap = new WasmHeap(createSharedMemory(), 1024);
  const a = heap.f32Managed(1000);
  assert.ok(a.every((v) => v === 0));
  a.fill(7.5);
  heap.free(a.byteOffset, 4000); // what the FinalizationRegistry does once `a` is collected
  const b = heap.f32Managed(1000);
  assert.equal(b.byteOffset, a.byteOffset, 'the freed block is reused');
  assert.ok(b.every((v) => v === 0), 'a reused block is cleared');
  const h = heap.u16Managed(999);
  h.fill(0xffff);
  heap.free(h.byteOffset, 2000);
  const h2 = heap.u16Managed(999);
  assert.equal(h2.byteOffset, h.byteOffset);
  assert.ok(h2.every((v) => v === 0));
});

test('heap: a fresh managed block does not commit its pages (a long-context KV cache costs RSS only as it fills)', () => {
  const heap = new WasmHeap(createSharedMemory(), 1024);
  const bytes = 256 << 20;
  const rss0 = process.memoryUsage().rss;
  const big = heap.u16Managed(bytes / 2);
  const grew = process.memoryUsage().rss - rss0;
  assert.equal(big.length, bytes / 2);
  assert.ok(grew < bytes / 4, `RSS grew by ${(grew / 2 ** 20).toFixed(0)} MiB for an untouched 256 MiB block`);
  big[big.length - 1] = 1; // still writable at its end
  assert.equal(big[big.length - 1], 1);
});
