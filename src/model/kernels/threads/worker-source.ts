/**
 * Source of a pool worker (run with `eval: true`, so it needs no file path and works the same from
 * src/ and dist/). It instantiates the kernel module over the shared memory and loops: spin a
 * little on the GEN counter (low latency between back-to-back ops), then Atomics.wait; on a new
 * generation it claims chunks of the op (see protocol.ts) until none are left.
 * Keep in sync with protocol.ts (slot numbers and the argument order are inlined below).
 */
export const WORKER_SOURCE = String.raw`
const { workerData } = require('node:worker_threads');
const { module, memory, ctrl, index, spin } = workerData;
let k = null;
try { k = new WebAssembly.Instance(module, { env: { memory } }).exports; } catch (e) { k = null; }
const I = new Int32Array(ctrl, 0, 16);
const F = new Float64Array(ctrl, 64, 16);
const GEN = 0, FIN = 1, OP = 2, ERR = 3, NEXT = 4, NCHUNK = 5, TAG_MASK = 0x7fff;
let seen = 0; // GEN is 0 when the pool is created: a late-starting worker still sees the first op
for (;;) {
  let g = Atomics.load(I, GEN);
  for (let s = 0; g === seen && s < spin; s++) g = Atomics.load(I, GEN);
  while (g === seen) { Atomics.wait(I, GEN, seen); g = Atomics.load(I, GEN); }
  seen = g;
  if (Atomics.load(I, OP) === 0) break;
  const tag = g & TAG_MASK;
  for (;;) {
    const v = Atomics.load(I, NEXT);
    if ((v >>> 16) !== tag) break; // a newer op started: this one is done
    const c = v & 0xffff, n = Atomics.load(I, NCHUNK);
    if (c >= n) break;
    if (Atomics.compareExchange(I, NEXT, v, v + 1) !== v) continue;
    // claimed chunk c of the current op: its arguments are stable until FIN reaches n
    try {
      if (k === null) throw new Error('instantiation failed');
      const op = Atomics.load(I, OP), size = F[15];
      if (op === 1) {
        const r0 = c * size, r1 = Math.min(F[8], r0 + size);
        k.matmul(F[0], F[1], F[2], F[3], F[4], F[5], F[6], F[7], F[8], F[9], r0, r1, F[10] + index * F[11]);
      } else if (op === 2) {
        const h0 = c * size, h1 = Math.min(F[6], h0 + size);
        k.attention(F[0], F[1], F[2], F[3], F[4], F[5], F[6], F[7], F[8], F[9], h0, h1, F[10] + index * F[11], F[12]);
      } else if (op === 3) {
        const i0 = c * size, i1 = Math.min(F[3], i0 + size);
        k.swiglu(F[0] + 4 * i0, F[1] + 4 * i0, F[2] + 4 * i0, i1 - i0);
      } else if (op === 4) {
        const b0 = c * size, b1 = Math.min(F[3], b0 + size);
        if (F[4] === 32) k.quantizeBlocksI8(F[0] + 32 * b0, F[1] + 8 * b0, F[2] + 128 * b0, b1 - b0);
        else k.quantizeBlocks(F[0] + 64 * b0, F[1] + 8 * b0, F[2] + 128 * b0, b1 - b0);
      }
    } catch (e) {
      Atomics.store(I, ERR, 1);
    }
    if (Atomics.add(I, FIN, 1) + 1 === n) Atomics.notify(I, FIN);
  }
}
`;
