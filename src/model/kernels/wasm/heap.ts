/**
 * The one WebAssembly.Memory that holds weights, activations and the KV cache, shared (a
 * SharedArrayBuffer underneath) so that worker threads compute on the same bytes, plus a bump
 * allocator over it. wasm32 addresses at most 4 GiB: a model plus its cache must fit in that.
 */
import { UnsupportedError } from '../../../errors.js';
import { Wasm, type WasmMemory } from './wasm-api.js';

/** WebAssembly page size in bytes. */
const PAGE = 65536;
/** wasm32 limit: 65536 pages = 4 GiB. */
export const MAX_PAGES = 65536;
export const MAX_BYTES = MAX_PAGES * PAGE;

/** A shared memory that can grow to the wasm32 maximum (4 GiB). */
export function createSharedMemory(): WasmMemory {
  return new Wasm.Memory({ initial: 1, maximum: MAX_PAGES, shared: true });
}

/** Bump allocator over a shared WebAssembly.Memory. Allocations are never freed individually. */
export class WasmHeap {
  readonly memory: WasmMemory;
  private top: number;
  private readonly buffers = new WeakSet<ArrayBufferLike>();
  /** Freed blocks by exact size (KV caches and scratch of one model come back in the same sizes). */
  private readonly freeBlocks = new Map<number, number[]>();
  private readonly registry = new FinalizationRegistry<{ ptr: number; bytes: number }>((b) => this.free(b.ptr, b.bytes));

  /** `memory` from createSharedMemory(); `base`: first usable byte (the module's heapBase()). */
  constructor(memory: WasmMemory, base: number) {
    this.memory = memory;
    this.top = alignUp(base, 64);
    this.buffers.add(this.memory.buffer);
  }

  /** Bytes handed out so far (including the module's static area). */
  get used(): number { return this.top; }

  /** Reserve `bytes` (aligned to `align`, default 64 = one cache line) and return the byte offset. */
  alloc(bytes: number, align = 64): number {
    if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`cannot allocate ${bytes} bytes`);
    const ptr = alignUp(this.top, align);
    const end = ptr + bytes;
    if (end > MAX_BYTES) {
      throw new UnsupportedError(`WebAssembly memory is limited to 4 GiB (wasm32): cannot allocate ${mib(bytes)} more with ${mib(this.top)} in use; use backend 'js' for larger models`);
    }
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      this.memory.grow(Math.ceil((end - have) / PAGE));
      this.buffers.add(this.memory.buffer);
    }
    this.top = end;
    return ptr;
  }

  /** Return a block from alloc (same size) for reuse; the caller must not touch it afterwards. */
  free(ptr: number, bytes: number): void {
    let list = this.freeBlocks.get(bytes);
    if (!list) { list = []; this.freeBlocks.set(bytes, list); }
    list.push(ptr);
  }

  /**
   * A zeroed Float32Array of n values inside the memory whose block is reused once the array is
   * garbage-collected (FinalizationRegistry): for KV caches and scratch created many times.
   */
  f32Managed = (n: number): Float32Array => this.managed(n * 4, (b, p) => new Float32Array(b, p, n));

  /** f32Managed for f16 storage: a zeroed Uint16Array of n values (an f16 KV cache). */
  u16Managed = (n: number): Uint16Array => this.managed(Math.ceil(n / 2) * 4, (b, p) => new Uint16Array(b, p, n));

  /** A zeroed view made by `view` over a reused or fresh block of `bytes`, freed with the view. */
  private managed<V extends Float32Array | Uint16Array>(bytes: number, view: (buf: SharedArrayBuffer, ptr: number) => V): V {
    const ptr = this.freeBlocks.get(bytes)?.pop() ?? this.alloc(bytes);
    const a = view(this.buffer(), ptr);
    a.fill(0);
    this.registry.register(a, { ptr, bytes });
    return a;
  }

  /** A fresh Uint8Array of `bytes` inside the memory (e.g. openModelFile's `allocate`: weights land here, never copied). */
  allocate = (bytes: number): Uint8Array => {
    const p = this.alloc(bytes);
    return new Uint8Array(this.buffer(), p, bytes);
  };

  /** A fresh zeroed Float32Array of n values inside the memory. */
  f32(n: number): Float32Array {
    const p = this.alloc(n * 4);
    return new Float32Array(this.buffer(), p, n);
  }

  /**
   * The memory's current buffer object, remembered as ours. V8 may hand out a new
   * SharedArrayBuffer object for the same memory (not only after grow), so every view this heap
   * creates is made on a buffer object recorded here; otherwise owns() could miss it and the
   * backend would fall back to copies or the JS kernels (seen: different numerics on a model's
   * first call when a second backend existed in the process).
   */
  private buffer(): SharedArrayBuffer {
    const b = this.memory.buffer;
    this.buffers.add(b);
    return b;
  }

  /** Whether `view` lies inside this memory (so its byteOffset is a wasm pointer). */
  owns(view: ArrayBufferView): boolean {
    if (this.buffers.has(view.buffer)) return true;
    if (view.buffer === this.memory.buffer) { this.buffers.add(view.buffer); return true; }
    return false;
  }
}

function alignUp(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}

function mib(n: number): string {
  return `${(n / 1048576).toFixed(1)} MiB`;
}
