// The thread pool's claim-and-run loop (the host side is src/model/kernels/threads/pool.ts, the
// block layout is protocol.ts's CTRL). It lives here, not in JavaScript, because a JS loop that
// spins on the control block and dispatches four ops was hot enough for V8 to optimize it on a
// background thread during the first prompt, then deoptimize and optimize it again as new ops
// arrived: on a 2-core machine those compiles took a core from the two compute threads (the
// first 128-token prefill of the 15M model at 2 threads took 2× its later runs). Wasm code is
// compiled once, before it runs.
//
// Control block at `ctrl` (i32 slots): GEN (bumped per op), FIN (chunks finished), OP, ERR,
// NTHREADS, NCHUNK; f64 arguments from ctrl + 64 (the last one: the chunk size); from ctrl + 192,
// one i32 per thread: the generation it last took up; from ctrl + RANGES, one 64-byte line per
// thread holding its range of chunks as one i64: tag (15 bits) << 48 | end << 24 | next.
//
// Each op's chunks are dealt out in contiguous ranges, one per thread. A thread runs its own
// range front to back (one unbroken stream of weights, as with one chunk per thread), then takes
// chunks from the back of another thread's range until none is left. A thread that starts late
// (a worker the OS has not scheduled yet) thus costs only the chunks it has not run: the others
// take them from the far end, and it takes the rest when it arrives.
import { matmul, matmulSegments } from './index';
import { attention, attentionSegments, storeKVHeads } from './attention';
import { add, rmsnormRows, ropeRows, swiglu } from './ops';
import { quantizeBlocks, quantizeBlocksI8 } from './q8';
import { quantizeQuads } from './panel';

const GEN: usize = 0, FIN: usize = 4, OP: usize = 8, NTHREADS: usize = 16, NCHUNK: usize = 20;
const ARGS: usize = 64, SIZE_ARG: usize = 15, SEEN: usize = 192, RANGES: usize = 4096;
const TAG_MASK: i32 = 0x7fff;
const FIELD: u64 = 0xffffff;
const OP_QUIT = 0, OP_MATMUL = 1, OP_ATTENTION = 2, OP_SWIGLU = 3, OP_QUANTIZE = 4, OP_MATMUL_SEGMENTS = 5, OP_ATTENTION_SEGMENTS = 6;
const OP_STORE_KV = 8, OP_ROPE_ROWS = 9, OP_RMSNORM_ROWS = 10, OP_ADD = 11, OP_QUANTIZE_QUADS = 12;

// @ts-ignore: decorator
@inline function arg(ctrl: usize, i: usize): f64 {
  return load<f64>(ctrl + ARGS + (i << 3));
}

/** Run chunk c of the current op (thread `index`: its scratch slot). */
function runChunk(ctrl: usize, op: i32, c: i32, index: i32): void {
  const size = <i32>arg(ctrl, SIZE_ARG);
  const lo = c * size;
  if (op == OP_MATMUL) {
    const nOut = <i32>arg(ctrl, 8);
    matmul(<i32>arg(ctrl, 0), <usize>arg(ctrl, 1), <usize>arg(ctrl, 2), <usize>arg(ctrl, 3), <usize>arg(ctrl, 4),
      <usize>arg(ctrl, 5), <usize>arg(ctrl, 6), <i32>arg(ctrl, 7), nOut, <i32>arg(ctrl, 9), lo, min(nOut, lo + size),
      <usize>(arg(ctrl, 10) + <f64>index * arg(ctrl, 11)));
  } else if (op == OP_MATMUL_SEGMENTS) {
    matmulSegments(<i32>arg(ctrl, 0), <usize>arg(ctrl, 1), <i32>arg(ctrl, 2), <usize>arg(ctrl, 3), <usize>arg(ctrl, 4),
      <usize>arg(ctrl, 5), <usize>arg(ctrl, 6), <i32>arg(ctrl, 7), <i32>arg(ctrl, 9), lo, min(<i32>arg(ctrl, 8), lo + size),
      <usize>(arg(ctrl, 10) + <f64>index * arg(ctrl, 11)));
  } else if (op == OP_ATTENTION) {
    const nHead = <i32>arg(ctrl, 6);
    attention(<usize>arg(ctrl, 0), <usize>arg(ctrl, 1), <usize>arg(ctrl, 2), <usize>arg(ctrl, 3), <i32>arg(ctrl, 4),
      <i32>arg(ctrl, 5), nHead, <i32>arg(ctrl, 7), <i32>arg(ctrl, 8), <f32>arg(ctrl, 9), lo, min(nHead, lo + size),
      <usize>(arg(ctrl, 10) + <f64>index * arg(ctrl, 11)), <i32>arg(ctrl, 12));
  } else if (op == OP_ATTENTION_SEGMENTS) {
    attentionSegments(<usize>arg(ctrl, 0), <usize>arg(ctrl, 1), <usize>arg(ctrl, 2), <usize>arg(ctrl, 3), <i32>arg(ctrl, 4),
      <i32>arg(ctrl, 5), <i32>arg(ctrl, 6), <i32>arg(ctrl, 7), <f32>arg(ctrl, 8), lo, min(<i32>arg(ctrl, 12), lo + size),
      <usize>(arg(ctrl, 9) + <f64>index * arg(ctrl, 10)), <i32>arg(ctrl, 11));
  } else if (op == OP_SWIGLU) {
    const i0 = <usize>lo << 2, n = <i32>arg(ctrl, 3);
    swiglu(<usize>arg(ctrl, 0) + i0, <usize>arg(ctrl, 1) + i0, <usize>arg(ctrl, 2) + i0, min(n, lo + size) - lo);
  } else if (op == OP_QUANTIZE) {
    const n = <i32>arg(ctrl, 3), qb = <usize>arg(ctrl, 4), b0 = <usize>lo;
    const xq = <usize>arg(ctrl, 0) + qb * b0, xd = <usize>arg(ctrl, 1) + (b0 << 3), x = <usize>arg(ctrl, 2) + (b0 << 7);
    if (qb == 32) quantizeBlocksI8(xq, xd, x, min(n, lo + size) - lo);
    else quantizeBlocks(xq, xd, x, min(n, lo + size) - lo);
  } else if (op == OP_STORE_KV) {
    const heads = <i32>arg(ctrl, 3);
    storeKVHeads(<usize>arg(ctrl, 0), <usize>arg(ctrl, 1), <i32>arg(ctrl, 2), heads, <i32>arg(ctrl, 4), <i32>arg(ctrl, 5), <i32>arg(ctrl, 6), <i32>arg(ctrl, 7), lo, min(heads, lo + size));
  } else if (op == OP_ROPE_ROWS) {
    // rows [lo, hi) of x and of the cos/sin tables
    const nTok = <i32>arg(ctrl, 1), nHeads = <i32>arg(ctrl, 2), headDim = <i32>arg(ctrl, 3), nRot = <i32>arg(ctrl, 4);
    const xo = <usize>lo * <usize>(nHeads * headDim) << 2, co = <usize>lo * <usize>(nRot >> 1) << 2;
    ropeRows(<usize>arg(ctrl, 0) + xo, min(nTok, lo + size) - lo, nHeads, headDim, nRot, <usize>arg(ctrl, 5) + co, <usize>arg(ctrl, 6) + co, arg(ctrl, 7) != 0);
  } else if (op == OP_RMSNORM_ROWS) {
    const n = <i32>arg(ctrl, 3), rows = <i32>arg(ctrl, 4), o = <usize>lo * <usize>n << 2;
    rmsnormRows(<usize>arg(ctrl, 0) + o, <usize>arg(ctrl, 1) + o, <usize>arg(ctrl, 2), n, min(rows, lo + size) - lo, <f32>arg(ctrl, 5));
  } else if (op == OP_ADD) {
    const i0 = <usize>lo << 2, n = <i32>arg(ctrl, 3);
    add(<usize>arg(ctrl, 0) + i0, <usize>arg(ctrl, 1) + i0, <usize>arg(ctrl, 2) + i0, min(n, lo + size) - lo);
  } else if (op == OP_QUANTIZE_QUADS) {
    // quads [lo, hi), each thread quantizing into its own scratch slot
    const nTok = <i32>arg(ctrl, 4);
    quantizeQuads(<i32>arg(ctrl, 0), <usize>arg(ctrl, 1), <usize>arg(ctrl, 2), <i32>arg(ctrl, 3), nTok, lo, min((nTok + 3) >> 2, lo + size),
      <usize>(arg(ctrl, 5) + <f64>index * arg(ctrl, 6)));
  }
}

// @ts-ignore: decorator
@inline function rangeAt(ctrl: usize, t: i32): usize {
  return ctrl + RANGES + (<usize>t << 6);
}

/**
 * Publish an op whose arguments are in place: FIN = 0, chunks [0, nChunks) dealt out to the
 * nThreads threads' ranges, then the new generation (which makes it all visible) and a wake-up.
 */
export function poolPublish(ctrl: usize, op: i32, nChunks: i32, nThreads: i32): void {
  const gen = atomic.load<i32>(ctrl + GEN) + 1;
  const tag = <u64>(gen & TAG_MASK) << 48;
  atomic.store<i32>(ctrl + FIN, 0);
  atomic.store<i32>(ctrl + OP, op);
  atomic.store<i32>(ctrl + NCHUNK, nChunks);
  atomic.store<i32>(ctrl + NTHREADS, nThreads);
  for (let t = 0; t < nThreads; t++) {
    const lo = <u64>(<i64>nChunks * t / nThreads), hi = <u64>(<i64>nChunks * (t + 1) / nThreads);
    atomic.store<u64>(rangeAt(ctrl, t), tag | hi << 24 | lo);
  }
  atomic.store<i32>(ctrl + GEN, gen);
  atomic.notify(ctrl + GEN, nThreads);
}

/**
 * Claim and run chunks of generation `gen`'s op until none is left (or a newer op started): the
 * next chunk of this thread's own range, else the last chunk of the first other range that has
 * one. Each finished chunk adds one to FIN, the last one wakes a waiting caller.
 */
function claimChunks(ctrl: usize, gen: i32, index: i32): void {
  const tag = <u64>(gen & TAG_MASK), op = atomic.load<i32>(ctrl + OP), n = atomic.load<i32>(ctrl + NCHUNK);
  const nThreads = atomic.load<i32>(ctrl + NTHREADS);
  const own = rangeAt(ctrl, index);
  for (;;) {
    let c: i32 = -1;
    const v = atomic.load<u64>(own);
    if (v >>> 48 != tag) return;
    const next = v & FIELD, end = (v >>> 24) & FIELD;
    if (next < end) {
      if (atomic.cmpxchg<u64>(own, v, v + 1) != v) continue;
      c = <i32>next;
    } else {
      for (let k = 1; k < nThreads && c < 0; k++) {
        const r = rangeAt(ctrl, (index + k) % nThreads);
        const w = atomic.load<u64>(r);
        if (w >>> 48 != tag) return;
        const wn = w & FIELD, we = (w >>> 24) & FIELD;
        if (wn < we && atomic.cmpxchg<u64>(r, w, w - (<u64>1 << 24)) == w) c = <i32>(we - 1);
        else if (wn < we) k--; // lost a race on this range: look at it again
      }
      if (c < 0) return;
    }
    runChunk(ctrl, op, c, index);
    if (atomic.add<i32>(ctrl + FIN, 1) + 1 == n) atomic.notify(ctrl + FIN, 1);
  }
}

/**
 * The calling thread's part of the op just published: claim and run chunks, then spin up to
 * `spin` reads for FIN to reach NCHUNK. Returns FIN (the host sleeps on it when short).
 */
export function poolWork(ctrl: usize, spin: i32): i32 {
  claimChunks(ctrl, atomic.load<i32>(ctrl + GEN), 0);
  const n = atomic.load<i32>(ctrl + NCHUNK);
  let d = atomic.load<i32>(ctrl + FIN);
  for (let s = 0; d != n && s < spin; s++) d = atomic.load<i32>(ctrl + FIN);
  return d;
}

/**
 * A worker thread's loop: spin up to `spin` reads on GEN, then sleep on it; take up each new
 * generation's op and claim its chunks. Returns on OP_QUIT. The generation taken up is kept in
 * the control block, so after a trap (the host counts the trapped chunk as finished and calls
 * this again) the worker goes on with the same op's remaining chunks.
 */
export function poolWorker(ctrl: usize, index: i32, spin: i32): void {
  const seenAt = ctrl + SEEN + (<usize>index << 2);
  for (;;) {
    const seen = load<i32>(seenAt);
    let g = atomic.load<i32>(ctrl + GEN);
    for (let s = 0; g == seen && s < spin; s++) g = atomic.load<i32>(ctrl + GEN);
    while (g == seen) {
      atomic.wait<i32>(ctrl + GEN, seen, -1);
      g = atomic.load<i32>(ctrl + GEN);
    }
    store<i32>(seenAt, g);
    if (atomic.load<i32>(ctrl + OP) == OP_QUIT) return;
    claimChunks(ctrl, g, index);
  }
}
