/**
 * The one WebAssembly.Memory that holds weights, activations and the KV cache, shared (a
 * SharedArrayBuffer underneath) so that worker threads compute on the same bytes, plus an
 * allocator over it (WasmHeap). wasm32 addresses at most 4 GiB: a model plus its cache must fit in that.
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

/**
 * Allocator over a shared WebAssembly.Memory: a bump pointer, plus the holes that released blocks
 * leave, reused best fit. A wasm memory never shrinks and its pages stay resident once written, so a
 * block released and not reused is memory the process keeps for nothing: the load-time warm-up's
 * cache and scratch, the staging a larger batch outgrew (about 1.5 MiB for the 110M models).
 */
export class WasmHeap {
  readonly memory: WasmMemory;
  private top: number;
  private readonly buffers = new WeakSet<ArrayBufferLike>();
  /** Released blocks by address, never adjacent to each other or to `top` (merged when released). */
  private readonly holes: { ptr: number; bytes: number }[] = [];
  /** The blocks of managed views (f32Managed, u16Managed), released with the view or by release(). */
  private readonly managedBlocks = new WeakMap<object, { ptr: number; bytes: number }>();
  // (a throw here would be an uncaught exception in a GC callback; free() only throws on a bug)
  private readonly registry = new FinalizationRegistry<{ ptr: number; bytes: number }>((b) => { try { this.free(b.ptr, b.bytes); } catch { /* kept out of reuse */ } });
  /** End of the highest block ever handed out: the pages above it have never been written. */
  private written: number;

  /** `memory` from createSharedMemory(); `base`: first usable byte (the module's heapBase()). */
  constructor(memory: WasmMemory, base: number) {
    this.memory = memory;
    this.top = alignUp(base, 64);
    this.written = this.top;
    this.buffers.add(this.memory.buffer);
  }

  /** Bytes up to the end of the last block handed out (including the module's static area and any holes). */
  get used(): number { return this.top; }

  /** Bytes in released blocks not handed out again. */
  get holeBytes(): number { return this.holes.reduce((n, h) => n + h.bytes, 0); }

  /**
   * Reserve `bytes` (aligned to `align`, default 64 = one cache line) and return the byte offset.
   * The block reads as zeros (a fresh page, or a reused hole cleared here).
   */
  alloc(bytes: number, align = 64): number {
    if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`cannot allocate ${bytes} bytes`);
    const reused = bytes > 0 ? this.fromHoles(bytes, align) : -1; // (an empty block: no hole to cut)
    if (reused >= 0) return reused;
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
    // `top` comes down when the last block is released: what lies below the old top may hold data
    if (ptr < this.written) new Uint8Array(this.memory.buffer, ptr, Math.min(end, this.written) - ptr).fill(0);
    this.top = end;
    this.written = Math.max(this.written, end);
    return ptr;
  }

  /** The smallest hole holding an aligned block of `bytes`, split and cleared; −1 when none does. */
  private fromHoles(bytes: number, align: number): number {
    let best = -1;
    for (let i = 0; i < this.holes.length; i++) {
      const h = this.holes[i]!;
      if (alignUp(h.ptr, align) + bytes > h.ptr + h.bytes) continue;
      if (best < 0 || h.bytes < this.holes[best]!.bytes) best = i;
    }
    if (best < 0) return -1;
    const h = this.holes[best]!;
    const ptr = alignUp(h.ptr, align), end = ptr + bytes, hEnd = h.ptr + h.bytes;
    const rest: { ptr: number; bytes: number }[] = [];
    if (ptr > h.ptr) rest.push({ ptr: h.ptr, bytes: ptr - h.ptr });
    if (hEnd > end) rest.push({ ptr: end, bytes: hEnd - end });
    this.holes.splice(best, 1, ...rest);
    new Uint8Array(this.memory.buffer, ptr, bytes).fill(0);
    return ptr;
  }

  /**
   * Give back a block from alloc (its pointer and size); the caller must not touch it afterwards.
   * It is merged with the holes beside it, or with the free space above `top`.
   */
  free(ptr: number, bytes: number): void {
    if (bytes <= 0) return;
    const end = ptr + bytes;
    if (ptr < 0 || end > this.top) throw new RangeError(`wasm heap: block ${ptr}+${bytes} was not allocated`);
    // first hole at or after ptr
    let lo = 0, hi = this.holes.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.holes[mid]!.ptr < ptr) lo = mid + 1; else hi = mid; }
    const prev = this.holes[lo - 1], next = this.holes[lo];
    if ((prev && prev.ptr + prev.bytes > ptr) || (next && next.ptr < end)) throw new RangeError(`wasm heap: block ${ptr}+${bytes} released twice`);
    let start = ptr, stop = end, at = lo, remove = 0;
    if (prev && prev.ptr + prev.bytes === ptr) { start = prev.ptr; at = lo - 1; remove++; }
    if (next && next.ptr === end) { stop = next.ptr + next.bytes; remove++; }
    if (stop === this.top) { this.holes.splice(at, remove); this.top = start; return; }
    this.holes.splice(at, remove, { ptr: start, bytes: stop - start });
  }

  /**
   * A zeroed Float32Array of n values inside the memory whose block returns to the heap once the
   * array is garbage-collected (FinalizationRegistry), or at release(): for KV caches and scratch.
   * Views made over it (subarray) do not keep it alive: keep the array itself.
   */
  f32Managed = (n: number): Float32Array => this.managed(n * 4, (b, p) => new Float32Array(b, p, n));

  /** f32Managed for f16 storage: a zeroed Uint16Array of n values (an f16 KV cache). */
  u16Managed = (n: number): Uint16Array => this.managed(Math.ceil(n / 2) * 4, (b, p) => new Uint16Array(b, p, n));

  /** Return a managed array's block now (its owner is done with it; nothing may use it afterwards). No-op for other arrays. */
  release = (a: Float32Array | Uint16Array): void => {
    const b = this.managedBlocks.get(a);
    if (!b) return;
    this.managedBlocks.delete(a);
    this.registry.unregister(a);
    this.free(b.ptr, b.bytes);
  };

  /** A zeroed view made by `view` over a reused or fresh block of `bytes`, freed with the view. */
  private managed<V extends Float32Array | Uint16Array>(bytes: number, view: (buf: SharedArrayBuffer, ptr: number) => V): V {
    const written = this.written;
    const ptr = this.alloc(bytes);
    const a = view(this.buffer(), ptr);
    // alloc cleared what lies below the old watermark; the fresh part above it is already zero but
    // written now anyway: its pages fault in here, not in the first forward pass that stores into
    // a KV cache (about 11 µs per 4 KiB page on the bench VM)
    const fresh = Math.max(ptr, written);
    if (ptr + bytes > fresh) new Uint8Array(this.buffer(), fresh, ptr + bytes - fresh).fill(0);
    const block = { ptr, bytes };
    this.managedBlocks.set(a, block);
    this.registry.register(a, block, a);
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
