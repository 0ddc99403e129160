/**
 * Layout of the control block shared by the pool and its workers. It lives in the kernels' wasm
 * memory, because the claim-and-run loop is wasm code (assembly/pool.ts, which spells out the
 * same offsets). Dispatch: the main thread writes the op's arguments and the op, resets FIN, sets
 * NEXT to (generation tag, chunk 0), then NCHUNK, then bumps GEN and notifies. Every thread (the
 * main one included) then claims chunks with a compare-exchange on NEXT until none are left, and
 * adds one to FIN per finished chunk; the main thread returns when FIN reaches the chunk count. A
 * worker that is slow to wake (a loaded machine) simply claims fewer chunks, or none: the caller
 * never waits for a thread that has not started. No postMessage per op.
 *
 * NEXT is written before NCHUNK so that a worker still claiming from the previous op, which reads
 * NEXT and then NCHUNK, cannot pair the old NEXT with the new count: its compare-exchange on the
 * old NEXT fails and the new tag sends it back to wait for the generation.
 */
export const CTRL = {
  /** Int32 slots. FIN: chunks finished; NEXT: tag << 16 | next chunk; NCHUNK: chunks of this op. */
  GEN: 0, FIN: 1, OP: 2, ERR: 3, NEXT: 4, NCHUNK: 5,
  /** Bytes before the Float64 argument area. */
  ARGS_BYTE_OFFSET: 64,
  /** Number of Float64 arguments (the last one is the chunk size). */
  N_ARGS: 16,
  /** Bytes before the per-thread Int32 slots (the generation each worker last took up). */
  SEEN_BYTE_OFFSET: 192,
} as const;

/** Ops the workers understand. QUIT makes them return. */
export const OP = { QUIT: 0, MATMUL: 1, ATTENTION: 2, SWIGLU: 3, QUANTIZE: 4, MATMUL_SEGMENTS: 5 } as const;

/** Bytes of the control block for `threads` threads. */
export function ctrlBytes(threads: number): number {
  return CTRL.SEEN_BYTE_OFFSET + 4 * threads;
}

/** Generation tags are 15 bits (NEXT = tag << 16 | chunk, chunks < 65536, stays a positive int32). */
export const TAG_MASK = 0x7fff;
