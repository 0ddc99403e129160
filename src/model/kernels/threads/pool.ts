/**
 * A worker_threads pool over the shared kernel memory. The calling thread is thread 0 and works
 * too; workers 1..n-1 wait on a control block in that memory (see protocol.ts), so one dispatch
 * costs microseconds, not a postMessage round trip. Claiming and running chunks, and the waits in
 * between, are the kernel module's own code (assembly/pool.ts) on every thread. Work is cut into
 * chunks of whole rows (matmul) or whole heads (attention), dealt out in one contiguous range per
 * thread; a thread that has finished its own range takes chunks from the back of another's, so a
 * worker the OS has not scheduled (a loaded machine) delays nothing: the calling thread takes its
 * chunks. Every row is computed by the same code whoever claims it, so results are bit-identical
 * for any thread count.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { InvalidOptionError } from '../../../errors.js';
import type { KernelExports } from '../wasm/module.js';
import type { WasmMemory, WasmModule } from '../wasm/wasm-api.js';
import { CTRL, OP, ctrlBytes } from './protocol.js';
import { WORKER_SOURCE } from './worker-source.js';

/**
 * Reads of the control block a thread spins through before it sleeps: about 1 ms here. A prefill's
 * serial steps between two pooled ops (RoPE, the cache store, widening an f16 cache) take a few
 * tenths of a millisecond per layer, and so do a decode loop's steps between tokens (sampling):
 * with a 0.1 ms spin the worker fell asleep in those gaps, and on the bench VM a sleeping vCPU
 * took long enough to wake that the next op ran mostly on the calling thread (a 127-token 110M
 * Q4_0 prefill's attention took as long at two threads as at one). Separate processes
 * alternating the two (eight each): 110M Q4_0 prefill at two threads, median 536 → 560 tok/s;
 * 110M F32 decode (six each), 45.7 → 56 tok/s, in a slow phase of the host.
 */
const SPIN = 3000000;
/** A dispatch that is not finished after this long means a worker died: fail instead of hanging. */
const STALL_MS = 60000;
/** Chunks per thread of SwiGLU and activation quantization (tens of microseconds each). */
const CHUNKS_PER_THREAD = 1;
/**
 * Chunks per thread of a one-token matmul. Each thread runs its own range of chunks front to back
 * (one unbroken stream of weights) and then takes chunks from the back of a slower thread's range
 * (assembly/pool.ts), so finer chunks only cost a claim each and let a thread that started late or
 * runs slow hand over its last part. 110M F32 decode at 2 threads, one process alternating settings
 * every 16 steps (30 and 40 pairs): 4 chunks 1.7% and 2.4% faster than 1, 2 chunks +0.5%, 8 −0.3%.
 * (With one shared chunk counter, before the ranges, four chunks per thread were 12–25% slower:
 * the threads' chunks interleaved, so every chunk restarted both streams.)
 */
const DECODE_CHUNKS_PER_THREAD = 4;
/**
 * Chunks per thread of a multi-token matmul (prefill). These run for milliseconds and are bound by
 * arithmetic, not by streaming, so finer chunks cost nothing and let the other thread take over
 * the work of one that runs slow (a busy or descheduled core): 110M synth prefill matmuls, all
 * seven shapes × 12 layers at 128 tokens, 2 threads, median of 10: Q8_0 408 → 390 ms, Q4_0 253 → 242 ms.
 */
const PREFILL_CHUNKS_PER_THREAD = 8;

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

  /**
   * `ctrl`: ctrlBytes(size) bytes of `memory`, 64-byte aligned, reserved for this pool (zeroed:
   * generation 0, which no op uses, so a late-starting worker still sees the first op).
   */
  constructor(module: WasmModule, memory: WasmMemory, private readonly k: KernelExports, size: number, private readonly ctrl: number) {
    this.size = size;
    new Uint8Array(memory.buffer, ctrl, ctrlBytes(size)).fill(0);
    this.I = new Int32Array(memory.buffer, ctrl, 8);
    this.F = new Float64Array(memory.buffer, ctrl + CTRL.ARGS_BYTE_OFFSET, CTRL.N_ARGS);
    for (let i = 1; i < size; i++) {
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, memory, ctrl, index: i, spin: SPIN } });
      // A parked worker must not keep the process alive; close() stops them explicitly.
      w.unref();
      w.on('error', (e) => { this.failure = e; });
      this.workers.push(w);
    }
  }

  /** A matmul (see the wasm `matmul`), its rows claimed in chunks by all threads. */
  matmul(type: number, out: number, w: number, x: number, xs: number, xq: number, xd: number, nIn: number, nOut: number, nTok: number, scratch: number, scratchStride: number, align = 4): void {
    this.dispatchRows(OP.MATMUL, nOut, nTok, align, type, out, w, x, xs, xq, xd, nIn, nOut, nTok, scratch, scratchStride);
  }

  /**
   * matmulSegments (see the wasm kernel): nOut rows over several weights sharing x, cut into
   * chunks as one matrix (every segment but the last a multiple of four rows, so chunks stay whole groups).
   */
  matmulSegments(type: number, segs: number, nSeg: number, x: number, xs: number, xq: number, xd: number, nIn: number, nOut: number, nTok: number, scratch: number, scratchStride: number, align = 4): void {
    this.dispatchRows(OP.MATMUL_SEGMENTS, nOut, nTok, align, type, segs, nSeg, x, xs, xq, xd, nIn, nOut, nTok, scratch, scratchStride);
  }

  /**
   * A matmul-like op over nOut rows: chunks of whole `align`-row units (four-row groups, the
   * interleaved layout's unit, see wasm/assembly/rows4.ts; 32-row bands of a wide f32/f16/bf16 weight).
   */
  private dispatchRows(op: number, nOut: number, nTok: number, align: number,
    a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number): void {
    this.dispatch(op, nOut, align, nTok > 1 ? PREFILL_CHUNKS_PER_THREAD : DECODE_CHUNKS_PER_THREAD, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11);
  }

  /**
   * Attention (see the wasm `attention`), its heads claimed in chunks of `headsPerChunk` by all
   * threads (a widened f16 prefill: one KV head's query heads, so each KV head is widened once).
   */
  attention(out: number, q: number, k: number, v: number, nTok: number, start: number, nHead: number, nHeadKv: number, headDim: number, scale: number, scratch: number, scratchStride: number, kvHalf: number, headsPerChunk = 1): void {
    // one head (group) per chunk: a prefill's attention follows serial work (RoPE, the cache store)
    // long enough for the workers to fall asleep, and a worker woken late then still finds heads to take
    this.dispatch(OP.ATTENTION, nHead, headsPerChunk, nHead, out, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale, scratch, scratchStride, kvHalf);
  }

  /**
   * One decode query's attention by segments of its positions (see the wasm `attentionSegments`),
   * one segment per chunk: each thread runs a stretch of whole segments, all heads, so it reads one
   * stretch of the cache front to back.
   */
  attentionSegments(partials: number, q: number, k: number, v: number, start: number, nHead: number, nHeadKv: number, headDim: number, scale: number, scratch: number, scratchStride: number, kvHalf: number, nSeg: number): void {
    this.dispatch(OP.ATTENTION_SEGMENTS, nSeg, 1, nSeg, partials, q, k, v, start, nHead, nHeadKv, headDim, scale, scratch, scratchStride, kvHalf, nSeg);
  }

  /** swiglu (see the wasm kernel) over n values, cut into chunks of whole vectors: the same bits as one call. */
  swiglu(out: number, gate: number, up: number, n: number): void {
    this.dispatch(OP.SWIGLU, n, 16, CHUNKS_PER_THREAD, out, gate, up, n);
  }

  /** quantizeBlocks (i8: quantizeBlocksI8) of nBlocks 32-value blocks, cut into chunks of blocks. */
  quantize(xq: number, xd: number, x: number, nBlocks: number, i8: boolean): void {
    this.dispatch(OP.QUANTIZE, nBlocks, 1, CHUNKS_PER_THREAD, xq, xd, x, nBlocks, i8 ? 32 : 64);
  }

  /*
   * A prefill's smaller steps, each cut into chunks of whole units that no other chunk writes
   * (quads, heads, rows, vectors): the same bits as one call. Run serially they took about 4% of
   * a two-thread 110M prefill.
   */

  /**
   * quantizeQuads (see the wasm kernel) of nTok tokens, cut into chunks of quads; each thread
   * quantizes a quad's tokens in its scratch slot (scratch + index · scratchStride).
   */
  quantizeQuads(type: number, dst: number, x: number, n: number, nTok: number, scratch: number, scratchStride: number): void {
    this.dispatch(OP.QUANTIZE_QUADS, (nTok + 3) >> 2, 1, CHUNKS_PER_THREAD, type, dst, x, n, nTok, scratch, scratchStride);
  }

  /** storeKV (see the wasm kernel), cut into chunks of heads (each head's cache blocks are its own). */
  storeKV(dst: number, src: number, nTok: number, heads: number, headDim: number, pos0: number, half: number, keys: number): void {
    this.dispatch(OP.STORE_KV, heads, 1, CHUNKS_PER_THREAD, dst, src, nTok, heads, headDim, pos0, half, keys);
  }

  /** ropeRows (see the wasm kernel), cut into chunks of tokens. */
  ropeRows(x: number, nTok: number, nHeads: number, headDim: number, nRot: number, cos: number, sin: number, neox: number): void {
    this.dispatch(OP.ROPE_ROWS, nTok, 1, CHUNKS_PER_THREAD, x, nTok, nHeads, headDim, nRot, cos, sin, neox);
  }

  /** rmsnormRows (see the wasm kernel), cut into chunks of rows. */
  rmsnormRows(out: number, x: number, w: number, n: number, rows: number, eps: number): void {
    this.dispatch(OP.RMSNORM_ROWS, rows, 1, CHUNKS_PER_THREAD, out, x, w, n, rows, eps);
  }

  /** add (see the wasm kernel) over n values, cut into chunks of whole vectors. */
  add(out: number, a: number, b: number, n: number): void {
    this.dispatch(OP.ADD, n, 16, CHUNKS_PER_THREAD, out, a, b, n);
  }

  /**
   * Run op over chunks of [0, n) on all threads (the calling thread uses scratch slot 0): about
   * `perThread` chunks per thread, their sizes multiples of `align`. Chunk c covers
   * [c·size, min(n, (c + 1)·size)); which thread computes it does not matter, every row (head)
   * is computed whole by the same code, so results do not depend on the thread count.
   */
  private dispatch(op: number, n: number, align: number, perThread: number,
    a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0, a11 = 0, a12 = 0): void {
    if (this.closed) throw new Error('thread pool is closed');
    const { I, F } = this;
    const size = Math.max(1, Math.ceil(n / (this.size * perThread) / align)) * align;
    const nChunks = Math.ceil(n / size);
    // the op's arguments as positional parameters, not an array: a decode step dispatches ~100
    // ops, and their argument arrays were most of what it allocated at two threads
    F[0] = a0; F[1] = a1; F[2] = a2; F[3] = a3; F[4] = a4; F[5] = a5; F[6] = a6;
    F[7] = a7; F[8] = a8; F[9] = a9; F[10] = a10; F[11] = a11; F[12] = a12;
    F[CTRL.N_ARGS - 1] = size;
    Atomics.store(I, CTRL.ERR, 0);
    this.k.poolPublish(this.ctrl, op, nChunks, this.size);
    // this thread's chunks and a short spin for the others' (wasm: poolWork); a trap in one of
    // ours unwinds to here: count that chunk as finished and go on with the rest
    let ownError: unknown = null;
    let d: number;
    for (;;) {
      try { d = this.k.poolWork(this.ctrl, SPIN); break; } catch (e) {
        ownError ??= e;
        Atomics.add(I, CTRL.FIN, 1);
      }
    }
    const t0 = Date.now();
    while (d !== nChunks) {
      Atomics.wait(I, CTRL.FIN, d, 1000);
      d = Atomics.load(I, CTRL.FIN);
      if (d !== nChunks && Date.now() - t0 > STALL_MS) {
        throw new Error(`thread pool: ${nChunks - d} chunk(s) not finished within ${STALL_MS / 1000} s${this.failure ? ` (${String(this.failure)})` : ''}`);
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
