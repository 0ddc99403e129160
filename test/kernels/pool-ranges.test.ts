import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { CTRL, OP, ctrlBytes } from '../../src/model/kernels/threads/protocol.ts';
import { ThreadPool } from '../../src/model/kernels/threads/pool.ts';
import { kernelModule } from '../../src/model/kernels/wasm/module.ts';
import { createWasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { createRng, randF32 } from './fixtures.ts';

// The pool's chunk ranges (assembly/pool.ts): each thread runs its own range front to back, then
// takes chunks from the back of the others'. Here the calling thread works alone on an op dealt
// out to three threads whose workers never come (as when the OS has not scheduled them): it must
// run its own range and then every chunk of the other two, each exactly once.
const be = createWasmBackend({ threads: 1 });
after(async () => { await be.close(); });

test('a thread that finishes its range takes the chunks of threads that never started', () => {
  const k = be.kernels;
  const threads = 3;
  const ctrl = be.heap.alloc(ctrlBytes(threads));
  new Uint8Array(be.heap.memory.buffer, ctrl, ctrlBytes(threads)).fill(0);
  const n = 16 * 37; // SwiGLU over 37 chunks of 16 values: 12, 12 and 13 chunks per range
  const rng = createRng(5);
  const gate = be.heap.f32(n), up = be.heap.f32(n), out = be.heap.f32(n), want = be.heap.f32(n);
  gate.set(randF32(rng, n, 4)); up.set(randF32(rng, n));
  k.swiglu(want.byteOffset, gate.byteOffset, up.byteOffset, n);
  for (let round = 0; round < 3; round++) {
    out.fill(NaN);
    const F = new Float64Array(be.heap.memory.buffer, ctrl + CTRL.ARGS_BYTE_OFFSET, CTRL.N_ARGS);
    F[0] = out.byteOffset; F[1] = gate.byteOffset; F[2] = up.byteOffset; F[3] = n; F[CTRL.N_ARGS - 1] = 16;
    k.poolPublish(ctrl, OP.SWIGLU, 37, threads);
    const I = new Int32Array(be.heap.memory.buffer, ctrl, 8);
    assert.equal(I[CTRL.GEN], round + 1, 'one generation per op');
    assert.equal(k.poolWork(ctrl, 0), 37, 'every chunk finished by the calling thread');
    assert.deepEqual(out, want, `round ${round}: each chunk computed once, as one call computes it`);
    // every range is used up, under this generation's tag
    const R = new BigUint64Array(be.heap.memory.buffer, ctrl + CTRL.RANGES_BYTE_OFFSET, threads * 8);
    for (let t = 0; t < threads; t++) {
      const v = R[t * 8]!;
      assert.equal(Number(v >> 48n), round + 1, `range ${t}: tag`);
      assert.equal(Number(v & 0xffffffn), Number((v >> 24n) & 0xffffffn), `range ${t}: next = end`);
    }
  }
});

test('four threads (more than this machine may have) compute a matmul and SwiGLU exactly as one thread', async () => {
  const k = be.kernels;
  const pool = new ThreadPool(kernelModule(be.variant), be.heap.memory, k, 4, be.heap.alloc(ctrlBytes(4)));
  try {
    const rng = createRng(11);
    const nIn = 64, nOut = 4 * 53; // 53 four-row groups over 4 threads × 4 chunks: uneven ranges
    const w = be.heap.f32(nIn * nOut), x = be.heap.f32(nIn), a = be.heap.f32(nOut), b = be.heap.f32(nOut);
    w.set(randF32(rng, nIn * nOut)); x.set(randF32(rng, nIn));
    const scratch = be.heap.alloc(4 * 65536);
    k.matmul(0, a.byteOffset, w.byteOffset, x.byteOffset, 0, 0, 0, nIn, nOut, 1, 0, nOut, scratch);
    const n = 16 * 41;
    const gate = be.heap.f32(n), up = be.heap.f32(n), want = be.heap.f32(n), got = be.heap.f32(n);
    gate.set(randF32(rng, n, 4)); up.set(randF32(rng, n));
    k.swiglu(want.byteOffset, gate.byteOffset, up.byteOffset, n);
    for (let round = 0; round < 20; round++) {
      b.fill(NaN); got.fill(NaN);
      pool.matmul(0, b.byteOffset, w.byteOffset, x.byteOffset, 0, 0, 0, nIn, nOut, 1, scratch, 65536);
      pool.swiglu(got.byteOffset, gate.byteOffset, up.byteOffset, n);
      assert.deepEqual(b, a, `round ${round}: matmul`);
      assert.deepEqual(got, want, `round ${round}: swiglu`);
    }
  } finally {
    await pool.close();
  }
});
