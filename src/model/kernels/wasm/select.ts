/**
 * Backend selection for the forward pass: 'wasm' (default: SIMD kernels, worker threads) or 'js'
 * (the plain TypeScript reference kernels). TOKENLOOP_BACKEND=js|wasm overrides the default;
 * an explicit option wins over the environment. One WasmBackend is shared per thread count in a
 * process (one memory, one pool); weights not already in its memory are copied in once.
 */
import { InvalidOptionError } from '../../../errors.js';
import { matmul as jsMatmul } from '../matmul.js';
import type { Weight } from '../weight.js';
import { resolveThreads } from '../threads/pool.js';
import { createWasmBackend, type WasmBackend } from './backend.js';

export type BackendName = 'wasm' | 'js';

/** The matmul signature shared by both backends (kernels/matmul.ts). */
export type MatmulFn = (out: Float32Array, w: Weight, x: Float32Array, nIn: number, nOut: number, nTokens: number) => void;

const shared = new Map<number, WasmBackend>();

/** Resolve the backend name: option, else TOKENLOOP_BACKEND, else 'wasm'. */
export function resolveBackend(name?: string): BackendName {
  const v = name ?? process.env['TOKENLOOP_BACKEND'] ?? 'wasm';
  if (v !== 'wasm' && v !== 'js') throw new InvalidOptionError(`backend must be "wasm" or "js", got "${v}"`);
  return v;
}

/** The process-wide wasm backend for `threads` (default: all cores). */
export function sharedWasmBackend(threads?: number): WasmBackend {
  const n = resolveThreads(threads);
  let be = shared.get(n);
  if (!be) { be = createWasmBackend({ threads: n }); shared.set(n, be); }
  return be;
}

/**
 * Where a model file's bytes should go for this backend: inside the wasm memory (so weights are
 * computed on in place, never copied) or, for 'js', undefined (a plain buffer).
 */
export function modelAllocator(opts: { backend?: string; threads?: number } = {}): ((bytes: number) => Uint8Array) | undefined {
  return resolveBackend(opts.backend) === 'wasm' ? sharedWasmBackend(opts.threads).heap.allocate : undefined;
}

/**
 * Most threads that read a model file. Each reader worker leaves 2-3 MiB resident after it exits,
 * and first touches scale sublinearly (a C loop on the 2-core bench VM: 350 MB/s with one thread,
 * 530 with two, 650 with eight).
 */
const MAX_READERS = 4;

/**
 * openModelFile's options for this backend: modelAllocator's `allocate`, and with 'wasm' one
 * reader per core up to MAX_READERS, whatever `threads` says (a file of at least
 * PARALLEL_MIN_BYTES: its pages are faulted in side by side, see format/parallel-read.ts). Loading
 * is bound by those page faults, which the kernel serves on every core, and the readers exit
 * before the model computes anything, so `threads` (the compute threads) does not limit them: the
 * 1B F16 synth file (2 GB) loaded at one thread in 5.7-6.0 s with two readers against 10.5-14.0 s with one.
 */
export function modelOpenOptions(opts: { backend?: string; threads?: number } = {}): { allocate?: (bytes: number) => Uint8Array; readers: number } {
  const allocate = modelAllocator(opts);
  return allocate ? { allocate, readers: Math.min(MAX_READERS, resolveThreads(undefined)) } : { readers: 1 };
}

/**
 * The matmul to use. With 'wasm', weight types the wasm kernels lack fall back to the reference
 * kernel, so every computable type still works.
 */
export function selectMatmul(opts: { backend?: string; threads?: number } = {}): { name: BackendName; matmul: MatmulFn; wasm?: WasmBackend } {
  const name = resolveBackend(opts.backend);
  if (name === 'js') return { name, matmul: jsMatmul };
  const be = sharedWasmBackend(opts.threads);
  return { name, wasm: be, matmul: (out, w, x, nIn, nOut, nTokens) => be.supports(w.type) ? be.matmul(out, w, x, nIn, nOut, nTokens) : jsMatmul(out, w, x, nIn, nOut, nTokens) };
}
