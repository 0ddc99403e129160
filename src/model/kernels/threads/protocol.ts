/**
 * Layout of the control block shared by the pool and its workers. It lives in the kernels' wasm
 * memory, because the claim-and-run loop is wasm code (assembly/pool.ts, which spells out the
 * same offsets). Dispatch: the main thread writes the op's arguments, then the wasm poolPublish
 * resets FIN, writes OP, NCHUNK and NTHREADS, deals the chunks out into one contiguous range per
 * thread (RANGES: tag << 48 | end << 24 | next, one i64 per 64-byte line), then bumps GEN and
 * notifies. Every thread (the main one included) claims the next chunk of its own range with a
 * compare-exchange, and when that is empty the last chunk of another thread's range, until none
 * are left; it adds one to FIN per finished chunk; the main thread returns when FIN reaches the
 * chunk count. A worker that is slow to wake (a loaded machine) simply runs fewer chunks, or
 * none: the caller never waits for a thread that has not started. No postMessage per op.
 *
 * Every range carries the generation's tag, so a worker still claiming from the previous op (or
 * taking up an old generation late) sees the new tag and goes back to wait for the generation.
 */
export const CTRL = {
  /** Int32 slots. FIN: chunks finished; NTHREADS: threads the chunks were dealt to; NCHUNK: chunks of this op. */
  GEN: 0, FIN: 1, OP: 2, ERR: 3, NTHREADS: 4, NCHUNK: 5,
  /** Bytes before the Float64 argument area. */
  ARGS_BYTE_OFFSET: 64,
  /** Number of Float64 arguments (the last one is the chunk size). */
  N_ARGS: 16,
  /** Bytes before the per-thread Int32 slots (the generation each worker last took up). */
  SEEN_BYTE_OFFSET: 192,
  /** Bytes before the per-thread chunk ranges (one 64-byte line each; SEEN fits 976 threads below it). */
  RANGES_BYTE_OFFSET: 4096,
} as const;

/** Ops the workers understand. QUIT makes them return. */
export const OP = {
  QUIT: 0, MATMUL: 1, ATTENTION: 2, SWIGLU: 3, QUANTIZE: 4, MATMUL_SEGMENTS: 5, ATTENTION_SEGMENTS: 6,
  STORE_KV: 8, ROPE_ROWS: 9, RMSNORM_ROWS: 10, ADD: 11, QUANTIZE_QUADS: 12,
} as const;

/** Bytes of the control block for `threads` threads. */
export function ctrlBytes(threads: number): number {
  return CTRL.RANGES_BYTE_OFFSET + 64 * threads;
}
