/**
 * KV cache: per layer, the keys and values of every position seen so far, stored as f32 or as f16
 * (half the memory and half the bytes attention reads per token; llama.cpp's default type).
 * Buffers are sized for the context actually requested (capacity), not the model's maximum.
 *
 * Layout, per layer: blocks of KV_BLOCK positions, each block head-major: (capacity / KV_BLOCK,
 * heads, KV_BLOCK·headDim), see kvBlockOffset. The blocks of all heads follow each other, so a decode
 * step reads a layer's cache front to back as one stream. Inside one head's block (kvIndex), when
 * headDim is a multiple of 16, the values are arranged in the order the attention kernel reads
 * them, so that it streams them sequentially with fixed offsets: keys in tiles of 4 positions ×
 * 4 dims (position-minor), values in 16-dim columns (all positions of dims 0–15, then 16–31, …).
 * Other head sizes keep rows of headDim values. Buffers hold whole blocks. An f16 cache with
 * tiles/columns also pairs each aligned run of 8 values (kvHalfSlot), as the f16 weights are: the
 * wasm kernels widen a run with two instructions per four values instead of four.
 */
import { ContextOverflowError, InvalidOptionError } from '../errors.js';

/** Positions per block of the cache layout (see the file comment). */
export const KV_BLOCK = 32;

/** Offset of head h's block holding position p, in a layer's buffer of `heads` heads of headDim values. */
export function kvBlockOffset(h: number, p: number, heads: number, headDim: number): number {
  return (Math.floor(p / KV_BLOCK) * heads + h) * KV_BLOCK * headDim;
}

/**
 * Index of value i of (KV head h, position p) in a layer's keys (`keys`) or values: the layout of
 * the file comment (tiles/columns when headDim is a multiple of 16, else rows).
 */
export function kvIndex(keys: boolean, h: number, p: number, i: number, heads: number, headDim: number): number {
  const r = p % KV_BLOCK, base = kvBlockOffset(h, p, heads, headDim);
  if (headDim % 16 !== 0) return base + r * headDim + i;
  if (keys) return base + (r >> 2) * 4 * headDim + (i >> 2) * 16 + (r & 3) * 4 + (i & 3);
  return base + (i >> 4) * KV_BLOCK * 16 + r * 16 + (i & 15);
}

/**
 * Slot of an f16 cache holding the value an f32 cache keeps at index i (kvIndex): with tiles and
 * columns (headDim a multiple of 16), each aligned run of 8 values v0..v7 is stored
 * v0 v4 v1 v5 v2 v6 v3 v7, so that 32-bit lane j of the run holds v_j and v_(j+4); rows as they are.
 */
export function kvHalfSlot(i: number, headDim: number): number {
  if (headDim % 16 !== 0) return i;
  const j = i & 7;
  return (i - j) + (((j & 3) << 1) | (j >> 2));
}

/**
 * Values a layer's buffer must hold for positions 0..positions−1 of `heads` heads of headDim values
 * (up to the last head's last position; with tiles/columns, the whole block holding it).
 */
export function kvSpan(positions: number, heads: number, headDim: number): number {
  if (positions <= 0) return 0;
  const last = kvBlockOffset(heads - 1, positions - 1, heads, headDim);
  return last + (headDim % 16 === 0 ? KV_BLOCK : (positions - 1) % KV_BLOCK + 1) * headDim;
}

/** Values in a layer's buffer for `positions` positions (whole blocks) of kvDim values. */
export function kvLength(positions: number, kvDim: number): number {
  return Math.ceil(positions / KV_BLOCK) * KV_BLOCK * kvDim;
}

/** Element type of the cached keys and values. */
export type KVCacheType = 'f32' | 'f16';

/** One layer's keys or values: f32, or f16 bit patterns. */
export type KVRows = Float32Array | Uint16Array;

/** Where the per-layer buffers live (e.g. inside a WebAssembly memory, so kernels read them in place). */
export interface KVAllocator {
  f32(n: number): Float32Array;
  f16(n: number): Uint16Array;
  /** Take back an array made here (KVCache.dispose); without it the arrays are left to the garbage collector. */
  release?(a: KVRows): void;
}

/** Checked KVCacheType from an option value. */
export function parseKVCacheType(v: unknown): KVCacheType {
  if (v !== 'f32' && v !== 'f16') throw new InvalidOptionError(`KV cache type must be "f32" or "f16", got ${JSON.stringify(v)}`);
  return v;
}

export class KVCache {
  /** Keys per layer, kvLength(capacity, kvDim) values laid out as kvIndex says. */
  readonly k: KVRows[];
  /** Values per layer, laid out as k. */
  readonly v: KVRows[];
  /** Values per head and position (kvDim / heads). */
  readonly headDim: number;
  private len = 0;
  private disposed = false;

  /** Allocator of the per-layer buffers; forks use it too. */
  readonly alloc: KVAllocator | undefined;
  /** Element type of k and v. */
  readonly type: KVCacheType;

  /**
   * `from`: copy its cached positions (and take its type, allocator and heads). `alloc`: where the
   * buffers live (default: plain typed arrays). `type`: f32 (default) or f16. `heads`: KV heads
   * (kvDim = heads · headDim; default 1, the row layout).
   */
  constructor(readonly nLayers: number, readonly kvDim: number, readonly capacity: number, from?: KVCache, alloc?: KVAllocator, type?: KVCacheType,
    readonly heads: number = from?.heads ?? 1) {
    if (!Number.isInteger(heads) || heads < 1 || kvDim % heads !== 0) throw new RangeError(`KV cache: ${kvDim} values per position do not split into ${heads} heads`);
    this.headDim = kvDim / heads;
    this.k = [];
    this.v = [];
    this.alloc = alloc ?? from?.alloc;
    this.type = parseKVCacheType(type ?? from?.type ?? 'f32');
    const a = this.alloc;
    const make = this.type === 'f16' ? (n: number): KVRows => (a ? a.f16(n) : new Uint16Array(n)) : (n: number): KVRows => (a ? a.f32(n) : new Float32Array(n));
    for (let l = 0; l < nLayers; l++) {
      this.k.push(make(kvLength(capacity, kvDim)));
      this.v.push(make(kvLength(capacity, kvDim)));
    }
    if (from) this.copyFrom(from);
  }

  /** Index in k[l] (keys) or v[l] of value i of position `pos` of KV head `head` (kvIndex; f16: kvHalfSlot of it). */
  index(keys: boolean, head: number, pos: number, i: number): number {
    const o = kvIndex(keys, head, pos, i, this.heads, this.headDim);
    return this.type === 'f16' ? kvHalfSlot(o, this.headDim) : o;
  }

  /** Number of cached positions. */
  get length(): number { return this.len; }

  /** Bytes per cached value (4 for f32, 2 for f16). */
  get elementBytes(): number { return this.type === 'f16' ? 2 : 4; }

  /** Bytes holding cached positions (K and V, all layers). */
  get bytes(): number { return this.len * this.kvDim * 2 * this.nLayers * this.elementBytes; }

  /** Bytes allocated for the full capacity. */
  get capacityBytes(): number { return kvLength(this.capacity, this.kvDim) * 2 * this.nLayers * this.elementBytes; }

  /**
   * Hand the buffers back to the allocator now (a cache in a WebAssembly memory: its blocks are
   * reused by the next allocation instead of waiting for the garbage collector). The cache is
   * empty and unusable afterwards.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const release = this.alloc?.release;
    if (release) for (const a of [...this.k, ...this.v]) release(a);
    this.k.length = 0;
    this.v.length = 0;
    this.len = 0;
  }

  /** Throws unless `n` more positions fit. */
  ensureRoom(n: number): void {
    if (this.disposed) throw new InvalidOptionError('this KV cache was disposed');
    if (this.len + n > this.capacity) {
      throw new ContextOverflowError(`context is full: ${this.len} cached + ${n} new tokens exceed the context length ${this.capacity}`);
    }
  }

  /** Mark `n` more positions (already written by the model) as cached. */
  advance(n: number): void {
    this.ensureRoom(n);
    this.len += n;
  }

  /** Drop everything after the first `n` positions (e.g. to rewind to a shared prefix). */
  truncate(n: number): void {
    if (n < 0 || n > this.len) throw new RangeError(`cannot truncate a cache of length ${this.len} to ${n}`);
    this.len = n;
  }

  /** An independent copy (for beams and parallel samples sharing one prefill). */
  fork(capacity = this.capacity): KVCache {
    if (capacity < this.len) throw new RangeError(`fork capacity ${capacity} < cached length ${this.len}`);
    return new KVCache(this.nLayers, this.kvDim, capacity, this);
  }

  /** Copy the cached positions of `other` into this cache (same shape, any capacity ≥ its length), replacing its contents. */
  copyFrom(other: KVCache): void {
    if (this.disposed || other.disposed) throw new InvalidOptionError('this KV cache was disposed');
    if (other.nLayers !== this.nLayers || other.kvDim !== this.kvDim || other.heads !== this.heads || other.type !== this.type || other.len > this.capacity) {
      throw new RangeError('cache shapes differ');
    }
    // the layout does not depend on the capacity: the blocks in use are one run
    const run = kvLength(other.len, this.kvDim);
    for (let l = 0; l < this.nLayers; l++) {
      this.k[l]!.set(other.k[l]!.subarray(0, run));
      this.v[l]!.set(other.v[l]!.subarray(0, run));
    }
    this.len = other.len;
  }
}
