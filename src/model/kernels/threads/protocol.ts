/**
 * Layout of the control block shared by the pool and its workers (a small SharedArrayBuffer).
 * Dispatch: the main thread writes the op, its arguments and the number of chunks, resets FIN,
 * sets NEXT to (generation tag, chunk 0), bumps GEN and notifies. Every thread (the main one
 * included) then claims chunks with a compare-exchange on NEXT until none are left, and adds one
 * to FIN per finished chunk; the main thread returns when FIN reaches the chunk count. A worker
 * that is slow to wake (a loaded machine) simply claims fewer chunks, or none: the caller never
 * waits for a thread that has not started. No postMessage per op.
 */
export const CTRL = {
  /** Int32 slots. FIN: chunks finished; NEXT: tag << 16 | next chunk; NCHUNK: chunks of this op. */
  GEN: 0, FIN: 1, OP: 2, ERR: 3, NEXT: 4, NCHUNK: 5,
  /** Bytes before the Float64 argument area. */
  ARGS_BYTE_OFFSET: 64,
  /** Number of Float64 arguments. */
  N_ARGS: 16,
} as const;

/** Ops the workers understand. QUIT makes them return. */
export const OP = { QUIT: 0, MATMUL: 1, ATTENTION: 2, SWIGLU: 3, QUANTIZE: 4 } as const;

/** Bytes of the control SharedArrayBuffer. */
export const CTRL_BYTES = CTRL.ARGS_BYTE_OFFSET + CTRL.N_ARGS * 8;

/** Generation tags are 15 bits (NEXT = tag << 16 | chunk, chunks < 65536, stays a positive int32). */
export const TAG_MASK = 0x7fff;

/**
 * [start, end) of chunk `c` when n items are cut into chunks of `size`. Which thread computes a
 * chunk does not matter: every row (head) is computed whole by the same code, so results do not
 * depend on the thread count or on scheduling.
 */
export function chunkRange(c: number, n: number, size: number): [number, number] {
  return [c * size, Math.min(n, (c + 1) * size)];
}
