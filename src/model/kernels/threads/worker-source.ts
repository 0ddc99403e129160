/**
 * Source of a pool worker (run with `eval: true`, so it needs no file path and works the same from
 * src/ and dist/). It instantiates the kernel module over the shared memory and loops: spin a
 * little on the GEN counter (low latency between back-to-back matmuls), then Atomics.wait.
 * Keep in sync with protocol.ts (slot numbers are inlined below).
 */
export const WORKER_SOURCE = String.raw`
const { workerData } = require('node:worker_threads');
const { module, memory, ctrl, index, nThreads, spin } = workerData;
let k = null;
try { k = new WebAssembly.Instance(module, { env: { memory } }).exports; } catch (e) { k = null; }
const I = new Int32Array(ctrl, 0, 16);
const F = new Float64Array(ctrl, 64, 16);
const GEN = 0, DONE = 1, OP = 2, ERR = 3;
function part(n) { return [Math.floor((index * n) / nThreads), Math.floor(((index + 1) * n) / nThreads)]; }
let seen = 0; // GEN is 0 when the pool is created: a late-starting worker still sees the first op
for (;;) {
  let g = Atomics.load(I, GEN);
  for (let s = 0; g === seen && s < spin; s++) g = Atomics.load(I, GEN);
  while (g === seen) { Atomics.wait(I, GEN, seen); g = Atomics.load(I, GEN); }
  seen = g;
  const op = Atomics.load(I, OP);
  if (op === 0) break;
  try {
    if (k === null) throw new Error('instantiation failed');
    if (op === 1) {
      const [r0, r1] = part(F[8]);
      if (r1 > r0) k.matmul(F[0], F[1], F[2], F[3], F[4], F[5], F[6], F[7], F[8], F[9], r0, r1, F[10] + index * F[11]);
    } else if (op === 2) {
      const [h0, h1] = part(F[6]);
      if (h1 > h0) k.attention(F[0], F[1], F[2], F[3], F[4], F[5], F[6], F[7], F[8], F[9], h0, h1, F[10] + index * F[11]);
    }
  } catch (e) {
    Atomics.store(I, ERR, 1);
  }
  if (Atomics.add(I, DONE, 1) + 1 === nThreads - 1) Atomics.notify(I, DONE);
}
`;
