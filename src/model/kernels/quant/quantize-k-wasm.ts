/**
 * The K-quant quantizers compiled to WebAssembly (build/tokenloop-quantize.wasm, built from
 * ../wasm/assembly/quantize.ts by scripts/build-wasm.mjs): byte for byte what the TypeScript
 * reference in quantize-k.ts writes (and ggml's reference quantizers), but the candidate-scale
 * searches run as native f32 code instead of JavaScript doubles rounded with Math.fround.
 *
 * The module has a shared memory of its own (the inference kernels never load it). A large input
 * is cut into one contiguous run of super-blocks per core: the calling thread quantizes the first,
 * worker threads (started on the first large input, one instance of the module each over the same
 * memory) the others; every super-block is computed alone, so the bytes do not depend on the
 * split. Where the module is not built, the TypeScript reference does the work.
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InvalidOptionError } from '../../../errors.js';
import { Wasm, type WasmMemory, type WasmModule } from '../wasm/wasm-api.js';
import { quantizeQ4_K, quantizeQ6_K } from './quantize-k.js';

/** Absolute path of the compiled quantizers. */
export const QUANTIZE_WASM_PATH = fileURLToPath(new URL('../../../../build/tokenloop-quantize.wasm', import.meta.url));

interface QuantizeExports {
  heapBase(): number;
  scratchBytes(): number;
  quantizeQ4K(x: number, out: number, n: number, scratch: number): void;
  quantizeQ6K(x: number, out: number, n: number, scratch: number): void;
}

/** Fewest super-blocks an input must have before it is shared with worker threads (~5 ms of work). */
const PARALLEL_MIN_BLOCKS = 128;
/** A worker that has not finished its part after this long has died: fail instead of hanging. */
const STALL_MS = 60000;
/** Bytes per 256-value super-block, and the type codes the workers take. */
const TYPES = { Q4_K: { code: 0, bytes: 144 }, Q6_K: { code: 1, bytes: 210 } } as const;

// Control block (i32): GEN (bumped per job), the job (type code, x and out
// pointers), then per worker: its first and end super-block, and DONE (the GEN it finished, −1:
// it could not instantiate the module, so the calling thread does its part).
const GEN = 0, TYPE = 1, X = 2, OUT = 3, FIRST = 8, END = 24, DONE = 40, CTRL_INTS = 56;
const MAX_WORKERS = 15;

/** A worker's loop, as plain JavaScript (workers do not run through the TypeScript loader). */
const WORKER_SOURCE = `
const { workerData: d } = require('node:worker_threads');
const I = new Int32Array(d.ctrl);
let k = null;
try { k = new WebAssembly.Instance(d.module, { env: { memory: d.memory } }).exports; } catch { k = null; }
if (k === null) { Atomics.store(I, ${DONE} + d.index, -1); Atomics.notify(I, ${DONE} + d.index); }
let seen = 0;
while (k !== null) {
  Atomics.wait(I, ${GEN}, seen);
  seen = Atomics.load(I, ${GEN});
  const b0 = I[${FIRST} + d.index], b1 = I[${END} + d.index];
  const scratch = k.heapBase() + d.index * k.scratchBytes();
  if (b1 > b0) {
    if (I[${TYPE}] === 0) k.quantizeQ4K(I[${X}] + b0 * 1024, I[${OUT}] + b0 * 144, (b1 - b0) * 256, scratch);
    else k.quantizeQ6K(I[${X}] + b0 * 1024, I[${OUT}] + b0 * 210, (b1 - b0) * 256, scratch);
  }
  Atomics.store(I, ${DONE} + d.index, seen);
  Atomics.notify(I, ${DONE} + d.index);
}
`;

interface Quantizer {
  module: WasmModule;
  memory: WasmMemory;
  k: QuantizeExports;
  /** Worker threads (index 1..), started on the first input large enough to share. */
  workers: Worker[] | null;
  ctrl: Int32Array;
}

let state: Quantizer | null | undefined;

/** The compiled quantizers, or null when the module is not built (or cannot be instantiated here). */
function quantizer(): Quantizer | null {
  if (state !== undefined) return state;
  state = null;
  if (!existsSync(QUANTIZE_WASM_PATH)) return null;
  try {
    const module = new Wasm.Module(readFileSync(QUANTIZE_WASM_PATH));
    // 1 GiB at most (address space reserved, not memory): a pass takes at most PIECE_VALUES values
    const memory = new Wasm.Memory({ initial: 1, maximum: 16384, shared: true });
    const k = new Wasm.Instance(module, { env: { memory } }).exports as unknown as QuantizeExports;
    state = { module, memory, k, workers: null, ctrl: new Int32Array(new SharedArrayBuffer(4 * CTRL_INTS)) };
  } catch {
    state = null;
  }
  return state;
}

/** Whether the WebAssembly quantizers are in use (else the TypeScript reference is). */
export function wasmQuantizerAvailable(): boolean {
  return quantizer() !== null;
}

/** The worker threads (one per core but the calling thread's), started once. */
function workersOf(q: Quantizer): Worker[] {
  if (q.workers) return q.workers;
  q.workers = [];
  const n = Math.min(MAX_WORKERS, availableParallelism() - 1);
  for (let i = 1; i <= n; i++) {
    try {
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { module: q.module, memory: q.memory, ctrl: q.ctrl.buffer, index: i } });
      w.unref(); // never keeps the process alive
      w.on('error', () => {}); // a worker that dies leaves its DONE unset: the stall check reports it
      q.workers.push(w);
    } catch {
      break; // no more threads: fewer parts
    }
  }
  return q.workers;
}

/** Most values quantized in one pass through the module's memory (64 MiB of f32): a longer input goes piece by piece. */
const PIECE_VALUES = 1 << 24;

function run(type: keyof typeof TYPES, x: Float32Array, q: Quantizer): Uint8Array {
  if (x.length % 256 !== 0) throw new InvalidOptionError(`K-quant quantization needs a multiple of 256 values, got ${x.length}`);
  if (x.length <= PIECE_VALUES) return runPiece(type, x, q);
  const out = new Uint8Array((x.length / 256) * TYPES[type].bytes);
  for (let v = 0; v < x.length; v += PIECE_VALUES) {
    out.set(runPiece(type, x.subarray(v, Math.min(x.length, v + PIECE_VALUES)), q), (v / 256) * TYPES[type].bytes);
  }
  return out;
}

function runPiece(type: keyof typeof TYPES, x: Float32Array, q: Quantizer): Uint8Array {
  const n = x.length;
  const { code, bytes } = TYPES[type];
  const nb = n / 256;
  const workers = nb >= PARALLEL_MIN_BLOCKS ? workersOf(q) : [];
  const parts = workers.length + 1;
  const scratch = q.k.heapBase(), xp = scratch + parts * q.k.scratchBytes(), op = xp + 4 * n;
  const need = op + nb * bytes;
  const have = q.memory.buffer.byteLength;
  if (need > have) q.memory.grow(Math.ceil((need - have) / 65536));
  new Float32Array(q.memory.buffer, xp, n).set(x);
  const quantize = (b0: number, b1: number, s: number) => {
    if (b1 <= b0) return;
    if (code === 0) q.k.quantizeQ4K(xp + b0 * 1024, op + b0 * bytes, (b1 - b0) * 256, s);
    else q.k.quantizeQ6K(xp + b0 * 1024, op + b0 * bytes, (b1 - b0) * 256, s);
  };
  const first = (i: number) => Math.round((i * nb) / parts);
  if (parts === 1) quantize(0, nb, scratch);
  else {
    const I = q.ctrl;
    I[TYPE] = code; I[X] = xp; I[OUT] = op;
    for (let i = 1; i < parts; i++) { I[FIRST + i] = first(i); I[END + i] = first(i + 1); }
    const gen = (I[GEN]! + 1) | 0 || 1;
    Atomics.store(I, GEN, gen);
    Atomics.notify(I, GEN);
    quantize(0, first(1), scratch);
    for (let i = 1; i < parts; i++) {
      const t0 = Date.now();
      for (;;) {
        const d = Atomics.load(I, DONE + i);
        if (d === gen) break;
        if (d === -1) { quantize(first(i), first(i + 1), scratch); break; } // this worker never started
        if (Date.now() - t0 > STALL_MS) throw new Error(`quantize: worker thread ${i} did not finish its part within ${STALL_MS / 1000} s`);
        Atomics.wait(I, DONE + i, d, 100);
      }
    }
  }
  return new Uint8Array(q.memory.buffer, op, nb * bytes).slice();
}

/** x → Q4_K super-blocks (144 bytes per 256 values): quantize-k.ts quantizeQ4_K's bytes. */
export function quantizeQ4_KFast(x: Float32Array): Uint8Array {
  const q = quantizer();
  return q ? run('Q4_K', x, q) : quantizeQ4_K(x);
}

/** x → Q6_K super-blocks (210 bytes per 256 values): quantize-k.ts quantizeQ6_K's bytes. */
export function quantizeQ6_KFast(x: Float32Array): Uint8Array {
  const q = quantizer();
  return q ? run('Q6_K', x, q) : quantizeQ6_K(x);
}
