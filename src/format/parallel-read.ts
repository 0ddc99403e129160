/**
 * Read a file into shared memory with several threads: the calling thread and `readers − 1`
 * short-lived workers claim chunks of the file from a shared counter and copy them in through
 * their own bounce buffers. What this buys is first touches: every page of a fresh WebAssembly
 * memory is faulted in by the thread that first writes it, and on the measured VM a fresh 4 KiB
 * page cost about 11 µs, so reading a 439 MB model (≈107k pages) took 1.15 s with one thread and
 * 0.70 s with two. (Copying out of the page cache gains from a second thread as well.)
 *
 * Robust to a reader that cannot help: a worker that fails to open the file or to read a chunk
 * marks it and stops, and the calling thread reads what is left itself; a chunk that no thread
 * finishes within STALL_MS is an error, never a hang.
 */
import { readSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { ModelFormatError } from '../errors.js';

/** Bytes per claimed chunk (a multiple of the 4 KiB page). */
export const PARALLEL_CHUNK = 16 << 20;
/**
 * Smallest file read by more than one thread. A reader worker leaves 2-3 MiB resident after it
 * exits (its malloc arena and V8's pages: even a worker that runs no code leaves about that), which
 * a small file does not repay: for the 110M synth files at two threads, 71 MiB Q4_0 loaded no
 * faster with two readers (275-365 ms against 280-300) and 112 MiB Q8_0 about 40 ms faster
 * (384 against 423 ms), while peak RSS rose by ~3 MiB; 210 MiB F16 loaded 200 ms faster (490 against 700 ms).
 */
export const PARALLEL_MIN_BYTES = 128 << 20;
/**
 * Bytes per read when the destination is the kernels' memory: the file goes through a buffer of
 * this size and is copied in from JavaScript. Pages the kernel's read() filled directly were slow
 * on their first touch from user space on the measured VM (no fault counted, about 6 µs per 4 KiB
 * page: the first pass over a freshly read 98 MB matrix ran at 0.7 GB/s, a second at 17), so
 * interleaving a 110M F32 model at load took 610 ms; through this buffer the same load is ~450 ms
 * shorter, for one extra copy of 256 KiB at a time (no second copy of the file). Its pages stay
 * resident until the buffer is collected, after the load: at 2 MiB that was 2 MiB of a 110M Q4_0
 * run's peak (per reader); 256 KiB read the 71 MiB file as fast (220-300 ms either way).
 */
export const BOUNCE = 256 << 10;
/** A chunk claimed but not finished for this long (no progress at all) fails the read. */
const STALL_MS = 60000;

// Control block (i32): NEXT chunk to claim, DONE chunks (finished or failed), then one status per
// chunk: 0 pending, 1 read, 2 failed (to be read again by the calling thread).
const NEXT = 0, DONE = 1, STATUS = 2;
const READ = 1, FAILED = 2;

/** A worker's loop, as plain JavaScript (workers do not run through the TypeScript loader). */
const WORKER_SOURCE = `
const { workerData: d } = require('node:worker_threads');
const fs = require('node:fs');
const ctl = new Int32Array(d.ctrl);
const dst = new Uint8Array(d.buffer, d.byteOffset, d.size);
const finish = (c, s) => { Atomics.store(ctl, ${STATUS} + c, s); Atomics.add(ctl, ${DONE}, 1); Atomics.notify(ctl, ${DONE}); };
let fd = -1;
try { fd = fs.openSync(d.path, 'r'); } catch { fd = -1; }
if (fd >= 0) {
  const bounce = new Uint8Array(${BOUNCE});
  for (;;) {
    const c = Atomics.add(ctl, ${NEXT}, 1);
    if (c >= d.nChunks) break;
    try {
      const end = Math.min(d.size, (c + 1) * d.chunk);
      for (let pos = c * d.chunk; pos < end;) {
        const n = fs.readSync(fd, bounce, 0, Math.min(${BOUNCE}, end - pos), pos);
        if (n <= 0) throw new Error('short read');
        dst.set(bounce.subarray(0, n), pos);
        pos += n;
      }
      finish(c, ${READ});
    } catch {
      finish(c, ${FAILED});
      break;
    }
  }
  fs.closeSync(fd);
}
`;

/**
 * Copy bytes [start, end) of the open file `fd` into dst (same offsets): through `bounce`, or
 * with none straight into dst (reads of at most 256 MiB, so files > 2 GiB work).
 */
export function readRange(fd: number, path: string, dst: Uint8Array, start: number, end: number, bounce: Uint8Array | null): void {
  const most = bounce ? bounce.byteLength : 1 << 28;
  for (let pos = start; pos < end;) {
    const want = Math.min(most, end - pos);
    const n = bounce ? readSync(fd, bounce, 0, want, pos) : readSync(fd, dst, pos, want, pos);
    if (n <= 0) throw new ModelFormatError(`${path}: unexpected end of file while reading`);
    if (bounce) dst.set(bounce.subarray(0, n), pos);
    pos += n;
  }
}

/**
 * Fill dst (dst.byteLength bytes, a view of a SharedArrayBuffer) with the file's first
 * dst.byteLength bytes: the calling thread reads through `fd`, `readers − 1` workers open `path`.
 * `chunk`: bytes per claimed chunk; `callerReads: false` leaves every chunk to the workers (tests:
 * each part of the file then comes through a worker).
 */
export function readParallel(fd: number, path: string, dst: Uint8Array, readers: number,
  { chunk = PARALLEL_CHUNK, callerReads = true }: { chunk?: number; callerReads?: boolean } = {}): void {
  if (!(dst.buffer instanceof SharedArrayBuffer)) throw new TypeError('readParallel needs a view of a SharedArrayBuffer');
  const size = dst.byteLength;
  const nChunks = Math.ceil(size / chunk);
  const ctl = new Int32Array(new SharedArrayBuffer(4 * (STATUS + nChunks)));
  const workers: Worker[] = [];
  for (let i = 1; i < Math.min(readers, nChunks); i++) {
    try {
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { ctrl: ctl.buffer, buffer: dst.buffer, byteOffset: dst.byteOffset, size, path, chunk, nChunks } });
      w.unref(); // never keeps the process alive; it exits when no chunk is left
      w.on('error', () => {}); // a worker that dies leaves its chunk pending: the stall check reports it
      workers.push(w);
    } catch {
      break; // no more threads: the calling thread reads the rest
    }
  }
  const bounce = new Uint8Array(Math.min(BOUNCE, size));
  const own = (c: number) => readRange(fd, path, dst, c * chunk, Math.min(size, (c + 1) * chunk), bounce);
  try {
    while (callerReads) {
      const c = Atomics.add(ctl, NEXT, 1);
      if (c >= nChunks) break;
      own(c);
      Atomics.store(ctl, STATUS + c, READ);
      Atomics.add(ctl, DONE, 1);
    }
  } catch (e) {
    // the read fails (a short file): no worker may go on writing into memory the caller gives up
    Atomics.store(ctl, NEXT, nChunks);
    for (const w of workers) void w.terminate();
    throw e;
  }
  // wait for the workers' chunks; read again any that one of them failed
  let done = Atomics.load(ctl, DONE), last = done, since = Date.now();
  while (done < nChunks) {
    Atomics.wait(ctl, DONE, done, 100);
    done = Atomics.load(ctl, DONE);
    if (done !== last) { last = done; since = Date.now(); } else if (Date.now() - since > STALL_MS) {
      for (const w of workers) void w.terminate();
      throw new ModelFormatError(`${path}: reading the file stalled (${nChunks - done} of ${nChunks} chunks unfinished after ${STALL_MS / 1000} s)`);
    }
  }
  for (let c = 0; c < nChunks; c++) if (Atomics.load(ctl, STATUS + c) === FAILED) own(c);
}
