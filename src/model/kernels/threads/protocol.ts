/**
 * Layout of the control block shared by the pool and its workers (a small SharedArrayBuffer).
 * Dispatch: the main thread writes the op and its arguments, bumps GEN and notifies; every worker
 * runs its slice and increments DONE; the last one notifies the main thread. No postMessage per op.
 */
export const CTRL = {
  /** Int32 slots. */
  GEN: 0, DONE: 1, OP: 2, ERR: 3,
  /** Bytes before the Float64 argument area. */
  ARGS_BYTE_OFFSET: 64,
  /** Number of Float64 arguments. */
  N_ARGS: 16,
} as const;

/** Ops the workers understand. QUIT makes them return. */
export const OP = { QUIT: 0, MATMUL: 1, ATTENTION: 2 } as const;

/** Bytes of the control SharedArrayBuffer. */
export const CTRL_BYTES = CTRL.ARGS_BYTE_OFFSET + CTRL.N_ARGS * 8;

/**
 * [start, end) of part `i` of `n` items split into `parts` contiguous ranges. Depends only on
 * (i, n, parts), so each row is always computed whole by one thread: results do not depend on
 * the thread count.
 */
export function splitRange(i: number, n: number, parts: number): [number, number] {
  return [Math.floor((i * n) / parts), Math.floor(((i + 1) * n) / parts)];
}
