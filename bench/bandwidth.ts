/**
 * Memory read bandwidth, measured the way a decode step reads weights: threads stream through
 * disjoint halves of a large buffer (far larger than the caches) with 16-byte SIMD loads.
 * The reader is a tiny WebAssembly module assembled below (a 4×unrolled i32x4.add loop over a
 * shared memory), so the number is the memory system's, not the JIT's.
 */
import { Worker } from 'node:worker_threads';

/** The part of the WebAssembly JS API used here (not declared by the ES2022 lib or @types/node 20). */
const Wasm = (globalThis as unknown as { WebAssembly: {
  Memory: new (d: { initial: number; maximum: number; shared: boolean }) => { buffer: SharedArrayBuffer };
  Module: new (bytes: Uint8Array) => object;
} }).WebAssembly;

/** LEB128 encodings used in the module. */
const uleb = (n: number): number[] => { const out: number[] = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

/**
 * (func (export "sum") (param $p i32) (param $end i32) (result i32) (local v128 v128)
 *   loop: a += load(p); b += load(p+16); a += load(p+32); b += load(p+48); p += 64; br_if p < end
 *   return lane 0 of a + b)   — imports a shared memory "e"."m".
 */
export function readerModuleBytes(): Uint8Array {
  const load = (off: number, acc: number) => [0x20, acc, 0x20, 0x00, 0xfd, 0x00, 0x04, ...uleb(off), 0xfd, 0xae, 0x01, 0x21, acc];
  const code = [
    0x01, 0x02, 0x7b, // locals: 2 × v128 (indices 2, 3)
    0x03, 0x40, // loop
    ...load(0, 2), ...load(16, 3), ...load(32, 2), ...load(48, 3),
    0x20, 0x00, 0x41, 0xc0, 0x00, 0x6a, 0x21, 0x00, // p += 64
    0x20, 0x00, 0x20, 0x01, 0x49, 0x0d, 0x00, // br_if 0 (p < end)
    0x0b,
    0x20, 0x02, 0x20, 0x03, 0xfd, 0xae, 0x01, 0xfd, 0x1b, 0x00, // extract lane 0 of a + b
    0x0b,
  ];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]),
    ...section(2, [0x01, 0x01, 0x65, 0x01, 0x6d, 0x02, 0x03, 0x01, ...uleb(65536)]),
    ...section(3, [0x01, 0x00]),
    ...section(7, [0x01, 0x03, 0x73, 0x75, 0x6d, 0x00, 0x00]),
    ...section(10, [0x01, ...uleb(code.length), ...code]),
  ]);
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { memory, module, start, end, reps, ctrl } = workerData;
const sum = new WebAssembly.Instance(module, { e: { m: memory } }).exports.sum;
let sink = sum(start, end); // warm up: touches the slice once
Atomics.add(ctrl, 0, 1); Atomics.notify(ctrl, 0);
Atomics.wait(ctrl, 1, 0);
for (let r = 0; r < reps; r++) sink ^= sum(start, end);
parentPort.postMessage(sink);
`;

export interface BandwidthResult { threads: number; bytesPerSec: number }

let buffer: { mib: number; memory: { buffer: SharedArrayBuffer }; module: object } | null = null;

/**
 * The buffer measureBandwidth streams through (`mib` MiB, every page committed) and its reader
 * module: made once per process and kept. A new one per call was garbage V8 did not hurry to
 * collect (256 MiB of shared memory outside a small JavaScript heap), so a five-round compare,
 * 240 measurements, grew to 24 GB and was killed for it.
 */
export function bandwidthBuffer(mib: number): { memory: { buffer: SharedArrayBuffer }; module: object } {
  if (buffer?.mib !== mib) {
    buffer = null; // the old one (another size) is garbage before the new one exists
    const pages = (mib << 20) / 65536;
    const memory = new Wasm.Memory({ initial: pages, maximum: pages, shared: true });
    new Uint32Array(memory.buffer).fill(0x01010101); // commit every page (zero pages would read from one cached page)
    buffer = { mib, memory, module: new Wasm.Module(readerModuleBytes()) };
  }
  return buffer;
}

/** Measure read bandwidth with `threads` threads over `mib` MiB (default 256), best of `trials`. */
export async function measureBandwidth(threads: number, mib = 256, trials = 3): Promise<BandwidthResult> {
  const bytes = mib << 20;
  const { memory, module } = bandwidthBuffer(mib);
  const slice = Math.floor(bytes / threads / 64) * 64;
  const reps = 4;
  let best = 0;
  for (let t = 0; t < trials; t++) {
    const ctrl = new Int32Array(new SharedArrayBuffer(8));
    const workers = Array.from({ length: threads }, (_, i) => new Worker(WORKER_SOURCE, {
      eval: true, workerData: { memory, module, start: i * slice, end: (i + 1) * slice, reps, ctrl },
    }));
    const done = workers.map((w) => new Promise<void>((res, rej) => { w.once('message', () => res()); w.once('error', rej); }));
    while (Atomics.load(ctrl, 0) < threads) await new Promise((r) => setTimeout(r, 1));
    const t0 = performance.now();
    Atomics.store(ctrl, 1, 1); Atomics.notify(ctrl, 1);
    await Promise.all(done);
    const sec = (performance.now() - t0) / 1000;
    await Promise.all(workers.map((w) => w.terminate()));
    best = Math.max(best, (slice * threads * reps) / sec);
  }
  return { threads, bytesPerSec: best };
}

// `node --import tsx bench/bandwidth.ts [THREADS...]`
if (process.argv[1]?.endsWith('bench/bandwidth.ts')) {
  const list = process.argv.slice(2).map(Number);
  for (const n of list.length ? list : [1, 2]) {
    const r = await measureBandwidth(n);
    process.stdout.write(`${n} thread(s): ${(r.bytesPerSec / 1e9).toFixed(2)} GB/s\n`);
  }
}
