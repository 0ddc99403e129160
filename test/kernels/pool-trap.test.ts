import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType } from '../../src/format/dtypes.ts';
import { ThreadPool } from '../../src/model/kernels/threads/pool.ts';
import { ctrlBytes } from '../../src/model/kernels/threads/protocol.ts';
import { WasmHeap, createSharedMemory } from '../../src/model/kernels/wasm/heap.ts';
import { instantiateKernels, kernelModule } from '../../src/model/kernels/wasm/module.ts';

// The pool's claim-and-run loop is wasm code (assembly/pool.ts) on every thread. A chunk that traps
// (here: a weight pointer past the end of memory) must come back as an error from the dispatch on
// the calling thread, whichever thread ran it, without a hang; and the pool must go on working.
const memory = createSharedMemory();
const kernels = instantiateKernels(memory);
const heap = new WasmHeap(memory, kernels.heapBase());
const pool = new ThreadPool(kernelModule(), memory, kernels, 2, heap.alloc(ctrlBytes(2)));
after(async () => { await pool.close(); });

const nIn = 64, nOut = 64;
const w = heap.alloc(nIn * nOut * 4), x = heap.alloc(nIn * 4), out = heap.alloc(nOut * 4);
new Float32Array(memory.buffer, w, nIn * nOut).fill(0.25);
new Float32Array(memory.buffer, x, nIn).fill(2);

function matmul(weight: number): Float32Array {
  new Float32Array(memory.buffer, out, nOut).fill(-1);
  // one chunk per row group: both threads take part
  pool.matmul(GGMLType.F32, out, weight, x, 0, 0, 0, nIn, nOut, 1, 0, 0);
  return new Float32Array(memory.buffer, out, nOut).slice();
}

test('pool: a trapping chunk throws from the dispatch, and the pool keeps working', async () => {
  // let the worker start so that it takes part in the ops below
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual([...matmul(w)], new Array(nOut).fill(32));
  const outside = memory.buffer.byteLength + 65536 * 16;
  for (let i = 0; i < 20; i++) {
    assert.throws(() => matmul(outside), /out of bounds|worker failed/);
    // the next op is whole and correct: every chunk was counted, none is left running
    assert.deepEqual([...matmul(w)], new Array(nOut).fill(32));
  }
});

test('pool: an op with one trapping chunk throws, whichever thread ran that chunk', () => {
  // rows 0..31 (chunk 0) are the last bytes of memory, rows 32..63 (chunk 1) lie past its end: the
  // op fails whether the calling thread or the worker claimed chunk 1, never returning silently
  const halfOutside = memory.buffer.byteLength - 32 * nIn * 4;
  const messages = new Set<string>();
  for (let i = 0; i < 50; i++) {
    assert.throws(() => matmul(halfOutside), (e: unknown) => {
      const m = String(e);
      messages.add(/worker failed/.test(m) ? 'worker' : 'own');
      return /out of bounds|worker failed/.test(m);
    });
  }
  assert.deepEqual([...matmul(w)], new Array(nOut).fill(32));
  console.log(`pool-trap: failures seen from ${[...messages].join(' and ')} thread(s)`);
});
