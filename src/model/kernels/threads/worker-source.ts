/**
 * Source of a pool worker (run with `eval: true`, so it needs no file path and works the same from
 * src/ and dist/). It instantiates the kernel module over the shared memory and runs the module's
 * own worker loop (assembly/pool.ts poolWorker: spin a little on GEN, then sleep on it; claim and
 * run chunks of each new op) until the pool quits. A trap inside a chunk unwinds to here: the
 * chunk is counted as finished with ERR set, and the loop goes on with the same op. A worker
 * whose instantiation fails ends: it never claims a chunk, so the other threads compute them all.
 * Keep in sync with protocol.ts (slot numbers are inlined below).
 */
export const WORKER_SOURCE = String.raw`
const { workerData } = require('node:worker_threads');
const { module, memory, ctrl, index, spin } = workerData;
let k = null;
try { k = new WebAssembly.Instance(module, { env: { memory } }).exports; } catch (e) { k = null; }
const I = new Int32Array(memory.buffer, ctrl, 8);
const FIN = 1, ERR = 3, NCHUNK = 5;
while (k !== null) {
  try {
    k.poolWorker(ctrl, index, spin);
    break;
  } catch (e) {
    Atomics.store(I, ERR, 1);
    if (Atomics.add(I, FIN, 1) + 1 === Atomics.load(I, NCHUNK)) Atomics.notify(I, FIN);
  }
}
`;
