/**
 * What one idle Node worker thread adds to a process's resident memory: a fresh process starts a
 * worker that loads nothing and parks in Atomics.wait (as a tokenloop pool worker does between
 * ops), and reports its RSS after minus before. A two-thread tokenloop process has one such worker
 * (the calling thread is thread 0); compare.ts reports this beside its memory column, since it is
 * the runtime's cost of a thread (its own V8 heap, malloc arena and stack), not the engine's.
 */
import { spawnSync } from 'node:child_process';

// CommonJS (an eval'd worker takes its parent's module type; the pool's workers use require)
const SCRIPT = `
const { Worker } = require('node:worker_threads');
(async () => {
const sab = new SharedArrayBuffer(8), I = new Int32Array(sab);
const settle = () => new Promise((r) => setTimeout(r, 200));
await settle();
const before = process.memoryUsage().rss;
const w = new Worker("const I = new Int32Array(require('node:worker_threads').workerData); Atomics.store(I, 1, 1); Atomics.notify(I, 1); Atomics.wait(I, 0, 0);", { eval: true, workerData: sab });
while (Atomics.load(I, 1) === 0) await new Promise((r) => setTimeout(r, 5));
await settle();
const after = process.memoryUsage().rss;
Atomics.store(I, 0, 1); Atomics.notify(I, 0); await w.terminate();
process.stdout.write(String(after - before));
})();
`;

/** Median over `runs` fresh processes of the RSS one idle worker thread adds, in bytes. */
export function idleWorkerBytes(runs = 5): number {
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, ['-e', SCRIPT], { encoding: 'utf8', timeout: 30000 });
    const v = Number(r.stdout);
    if (r.status !== 0 || !Number.isFinite(v)) throw new Error(`idle worker probe failed (status ${r.status}): ${r.stderr.trim()}`);
    xs.push(v);
  }
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)]!;
}
