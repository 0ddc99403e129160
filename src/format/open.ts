/**
 * Open a model file: read it once into memory and dispatch on its magic.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { ModelFormatError } from '../errors.js';
import { GGUF_MAGIC, parseGGUF } from './gguf.js';
import { parseLlama2c } from './llama2c.js';
import { BOUNCE, PARALLEL_MIN_BYTES, readParallel, readRange } from './parallel-read.js';
import type { ModelFile } from './model-file.js';

export interface OpenOptions {
  /**
   * Where the file bytes go. Defaults to a fresh Uint8Array. A caller that computes in
   * WebAssembly passes an allocator inside its memory so the weights are never copied again.
   */
  allocate?: (bytes: number) => Uint8Array;
  /**
   * Threads that read the file (default 1). With more, a file of at least PARALLEL_MIN_BYTES read
   * into shared memory (an `allocate` inside a shared WebAssembly memory) is read by that many
   * threads side by side (parallel-read.ts): the page faults of a fresh memory are the cost of loading.
   */
  readers?: number;
}

/**
 * Open a model file for reading: a missing file, a directory or an unreadable path is a
 * ModelFormatError that names it. The caller closes the returned descriptor.
 */
export function openForReading(path: string): { fd: number; size: number } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ModelFormatError(`model file not found: ${path}`);
    if (code === 'EISDIR') throw new ModelFormatError(`expected a model file but got a directory: ${path}`);
    throw new ModelFormatError(`cannot open ${path}: ${(e as Error).message}`);
  }
  const st = fstatSync(fd);
  if (st.isDirectory()) {
    closeSync(fd);
    throw new ModelFormatError(`expected a model file but got a directory: ${path}`);
  }
  return { fd, size: st.size };
}

/**
 * Read a whole file into one buffer (chunked reads, so files > 2 GiB work; `readers`: see
 * OpenOptions; `parallelMin`: the smallest file they share, PARALLEL_MIN_BYTES).
 */
export function readWholeFile(path: string, allocate?: (n: number) => Uint8Array, readers = 1, parallelMin = PARALLEL_MIN_BYTES): Uint8Array {
  const { fd, size } = openForReading(path);
  try {
    const buf = allocate ? allocate(size) : new Uint8Array(size);
    if (readers > 1 && size >= parallelMin && buf.buffer instanceof SharedArrayBuffer) {
      readParallel(fd, path, buf, readers);
      return buf;
    }
    // into the kernels' memory through a bounce buffer (parallel-read.ts BOUNCE says why)
    readRange(fd, path, buf, 0, size, allocate && size > BOUNCE ? new Uint8Array(BOUNCE) : null);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/** Open a GGUF or llama2.c model file. */
export function openModelFile(path: string, opts: OpenOptions = {}): ModelFile {
  const t0 = performance.now();
  const buffer = readWholeFile(path, opts.allocate, opts.readers);
  if (buffer.byteLength === 0) throw new ModelFormatError(`${path}: file is empty`);
  const magic = buffer.byteLength >= 4 ? new DataView(buffer.buffer, buffer.byteOffset, 4).getUint32(0, true) : -1;
  if (magic === GGUF_MAGIC) {
    const g = parseGGUF(buffer, path);
    return { kind: 'gguf', path, version: g.version, meta: g.meta, tensors: g.tensors, bytes: buffer.byteLength, buffer, loadMs: performance.now() - t0 };
  }
  // llama2.c checkpoints have no magic; anything ending in .gguf must be GGUF.
  if (path.toLowerCase().endsWith('.gguf')) {
    throw new ModelFormatError(`${path}: not a GGUF file (bad magic 0x${(magic >>> 0).toString(16).padStart(8, '0')})`);
  }
  const l = parseLlama2c(buffer, path);
  return { kind: 'llama2c', path, version: 0, meta: l.meta, tensors: l.tensors, bytes: buffer.byteLength, buffer, loadMs: performance.now() - t0 };
}
