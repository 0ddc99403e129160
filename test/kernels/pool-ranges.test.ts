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

test('four threads run a prefill\'s small steps (quantizeQuads, storeKV, RoPE, RMSNorm, add) exactly as one call', async () => {
  const k = be.kernels;
  const pool = new ThreadPool(kernelModule(be.variant), be.heap.memory, k, 4, be.heap.alloc(ctrlBytes(4)));
  try {
    const rng = createRng(23);
    const bytesOf = (a: Float32Array | Uint16Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice();
    // 13 tokens of 7 heads of 32 (odd counts: uneven chunks, a partial last quad), at an odd
    // position (f16 keys share paired runs with the previous position)
    const nTok = 13, heads = 7, hd = 32, n = heads * hd, pos0 = 5, cap = 64;
    const src = be.heap.f32(nTok * n);
    src.set(randF32(rng, nTok * n));
    for (const half of [0, 1]) {
      for (const keys of [0, 1]) {
        const mk = () => (half ? be.heap.u16Managed(cap * n) : be.heap.f32(cap * n));
        const a = mk(), b = mk();
        const fillA = randF32(rng, cap * n);
        if (a instanceof Float32Array && b instanceof Float32Array) { a.set(fillA); b.set(fillA); } else {
          for (let i = 0; i < cap * n; i++) { (a as Uint16Array)[i] = i * 7919 & 0x3bff; (b as Uint16Array)[i] = i * 7919 & 0x3bff; }
        }
        k.storeKV(a.byteOffset, src.byteOffset, nTok, heads, hd, pos0, half, keys);
        pool.storeKV(b.byteOffset, src.byteOffset, nTok, heads, hd, pos0, half, keys);
        assert.deepEqual(bytesOf(b), bytesOf(a), `storeKV half=${half} keys=${keys}`);
      }
    }
    const nRot = 24, cos = be.heap.f32(nTok * nRot / 2), sin = be.heap.f32(nTok * nRot / 2);
    cos.set(randF32(rng, cos.length)); sin.set(randF32(rng, sin.length));
    for (const neox of [0, 1]) {
      const a = be.heap.f32(nTok * n), b = be.heap.f32(nTok * n);
      a.set(src); b.set(src);
      k.ropeRows(a.byteOffset, nTok, heads, hd, nRot, cos.byteOffset, sin.byteOffset, neox);
      pool.ropeRows(b.byteOffset, nTok, heads, hd, nRot, cos.byteOffset, sin.byteOffset, neox);
      assert.deepEqual(b, a, `ropeRows neox=${neox}`);
    }
    const w = be.heap.f32(n), ra = be.heap.f32(nTok * n), rb = be.heap.f32(nTok * n);
    w.set(randF32(rng, n));
    k.rmsnormRows(ra.byteOffset, src.byteOffset, w.byteOffset, n, nTok, 1e-5);
    pool.rmsnormRows(rb.byteOffset, src.byteOffset, w.byteOffset, n, nTok, 1e-5);
    assert.deepEqual(rb, ra, 'rmsnormRows');
    const m = nTok * n - 3, y = be.heap.f32(m), sa = be.heap.f32(m), sb = be.heap.f32(m);
    y.set(randF32(rng, m));
    k.add(sa.byteOffset, src.byteOffset, y.byteOffset, m);
    pool.add(sb.byteOffset, src.byteOffset, y.byteOffset, m);
    assert.deepEqual(sb, sa, 'add');
    // quantizeQuads of 13 tokens of 2 blocks (both activation forms: Q8_0 i16, Q4_0 i8 in the
    // relaxed build): four threads, each in its own scratch slot, write the bytes of one call, and
    // both those of quantizing the whole batch (quantizeBlocks) and packing it (packQuads)
    const nIn = 64, nb = (nIn / 32) * nTok;
    const x = be.heap.f32(nIn * nTok);
    x.set(randF32(rng, nIn * nTok));
    for (const [type, i8] of [[8, false], [2, k.compactInt8(2) === 1]] as const) {
      const xq = be.heap.alloc(nb * 64), xd = be.heap.alloc(nb * 8);
      if (i8) k.quantizeBlocksI8(xq, xd, x.byteOffset, nb); else k.quantizeBlocks(xq, xd, x.byteOffset, nb);
      const bytes = k.quadBytes(type, nIn, nTok), tmp = k.quantizeQuadsTmpBytes(type, nIn);
      const [qr, qa, qb] = [0, 1, 2].map(() => be.heap.alloc(bytes)) as [number, number, number];
      for (const p of [qr, qa, qb]) new Uint8Array(be.heap.memory.buffer, p, bytes).fill(0xa5);
      const scratch = be.heap.alloc(4 * tmp);
      k.packQuads(type, qr, xq, xd, nIn, nTok);
      k.quantizeQuads(type, qa, x.byteOffset, nIn, nTok, 0, (nTok + 3) >> 2, scratch);
      pool.quantizeQuads(type, qb, x.byteOffset, nIn, nTok, scratch, tmp);
      const view = (p: number) => new Uint8Array(be.heap.memory.buffer, p, bytes);
      assert.deepEqual(view(qa), view(qr), `quantizeQuads type ${type}: differs from quantizeBlocks + packQuads`);
      assert.deepEqual(view(qb), view(qa), `quantizeQuads type ${type}: four threads differ from one call`);
    }
  } finally {
    await pool.close();
  }
});
