/**
 * A worker_threads pool over the shared kernel memory. The calling thread is thread 0 and takes a
 * slice too; workers 1..n-1 wait on a shared control block (Atomics.wait/notify), so one dispatch
 * costs microseconds, not a postMessage round trip. Work is split by whole rows (matmul) or whole
 * heads (attention) with splitRange, so results are bit-identical for any thread count.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { InvalidOptionError } from '../../../errors.js';
import type { KernelExports } from '../wasm/module.js';
import type { WasmMemory, WasmModule } from '../wasm/wasm-api.js';
import { CTRL, CTRL_BYTES, OP, splitRange } from './protocol.js';
import { WORKER_SOURCE } from './worker-source.js';

/** Spin iterations before a thread sleeps (covers the gap between consecutive ops of one token). */
const SPIN = 20000;
/** A dispatch that is not finished after this long means a worker died: fail instead of hanging. */
const STALL_MS = 60000;

/** Resolve the `threads` option: default os.availableParallelism(), never more than the cores. */
export function resolveThreads(threads: number | undefined): number {
  const cores = availableParallelism();
  if (threads === undefined) return cores;
  if (!Number.isInteger(threads) || threads < 1) throw new InvalidOptionError(`threads must be a positive integer, got ${threads}`);
  return Math.min(threads, cores);
}

export class ThreadPool {
  /** Threads taking part in each op, the calling thread included. */
  readonly size: number;
  private readonly workers: Worker[] = [];
  private readonly I: Int32Array;
  private readonly F: Float64Array;
  private closed = false;
  /** An uncaught error of a worker (reported instead of hanging). */
  private failure: unknown = null;

  constructor(module: WasmModule, memory: WasmMemory, private readonly k: KernelExports, size: number) {
    this.size = size;
    const ctrl = new SharedArrayBuffer(CTRL_BYTES);
    this.I = new Int32Array(ctrl, 0, 16);
    this.F = new Float64Array(ctrl, CTRL.ARGS_BYTE_OFFSET, CTRL.N_ARGS);
    for (let i = 1; i < size; i++) {
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, memory, ctrl, index: i, nThreads: size, spin: SPIN } });
      // A parked worker must not keep the process alive; close() stops them explicitly.
      w.unref();
      w.on('error', (e) => { this.failure = e; });
      this.workers.push(w);
    }
  }

  /** Rows [r0, r1) of a matmul (see the wasm `matmul`), split across all threads. */
  matmul(type: number, out: number, w: number, x: number, xs: number, xq: number, xd: number, nIn: number, nOut: number, nTok: number, scratch: number, scratchStride: number): void {
    this.dispatch(OP.MATMUL, [type, out, w, x, xs, xq, xd, nIn, nOut, nTok, scratch, scratchStride], () => {
      const [r0, r1] = splitRange(0, nOut, this.size);
      if (r1 > r0) this.k.matmul(type, out, w, x, xs, xq, xd, nIn, nOut, nTok, r0, r1, scratch);
    });
  }

  /** Attention (see the wasm `attention`), heads split across all threads. */
  attention(out: number, q: number, k: number, v: number, nTok: number, start: number, nHead: number, nHeadKv: number, headDim: number, scale: number, scratch: number, scratchStride: number): void {
    this.dispatch(OP.ATTENTION, [out, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale, scratch, scratchStride], () => {
      const [h0, h1] = splitRange(0, nHead, this.size);
      if (h1 > h0) this.k.attention(out, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale, h0, h1, scratch);
    });
  }

  private dispatch(op: number, args: number[], own: () => void): void {
    if (this.closed) throw new Error('thread pool is closed');
    const { I, F } = this;
    for (let i = 0; i < args.length; i++) F[i] = args[i]!;
    Atomics.store(I, CTRL.DONE, 0);
    Atomics.store(I, CTRL.ERR, 0);
    Atomics.store(I, CTRL.OP, op);
    Atomics.add(I, CTRL.GEN, 1);
    Atomics.notify(I, CTRL.GEN);
    let ownError: unknown = null;
    try { own(); } catch (e) { ownError = e; }
    const nW = this.size - 1;
    let d = Atomics.load(I, CTRL.DONE);
    for (let s = 0; d !== nW && s < SPIN; s++) d = Atomics.load(I, CTRL.DONE);
    const t0 = Date.now();
    while (d !== nW) {
      Atomics.wait(I, CTRL.DONE, d, 1000);
      d = Atomics.load(I, CTRL.DONE);
      if (d !== nW && Date.now() - t0 > STALL_MS) {
        throw new Error(`thread pool: ${nW - d} worker(s) did not finish within ${STALL_MS / 1000} s${this.failure ? ` (${String(this.failure)})` : ''}`);
      }
    }
    if (ownError) throw ownError;
    if (Atomics.load(I, CTRL.ERR)) throw new Error('thread pool: a worker failed (WebAssembly trap: out-of-bounds pointer or bad arguments)');
  }

  /** Stop the workers. Idempotent; the pool cannot be used afterwards. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.I, CTRL.OP, OP.QUIT);
    Atomics.add(this.I, CTRL.GEN, 1);
    Atomics.notify(this.I, CTRL.GEN);
    await Promise.all(this.workers.map((w) => new Promise<void>((resolve) => {
      if (w.threadId < 0) { resolve(); return; }
      w.once('exit', () => resolve());
      w.ref(); // keep the loop alive until the exit event arrives
    })));
  }
}
