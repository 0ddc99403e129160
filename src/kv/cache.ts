/**
 * KV cache: per layer, the keys and values of every position seen so far.
 * Buffers are sized for the context actually requested (capacity), not the model's maximum.
 */
import { ContextOverflowError } from '../errors.js';

export class KVCache {
  /** Keys per layer: (capacity, kvDim) row-major. */
  readonly k: Float32Array[];
  /** Values per layer: (capacity, kvDim) row-major. */
  readonly v: Float32Array[];
  private len = 0;

  /** Allocator of the per-layer buffers (e.g. inside a WebAssembly memory); forks use it too. */
  readonly alloc: ((n: number) => Float32Array) | undefined;

  /**
   * `from`: copy its cached positions. `alloc`: where the buffers live (default: plain
   * Float32Arrays; a compute backend passes one inside its memory so kernels read them in place).
   */
  constructor(readonly nLayers: number, readonly kvDim: number, readonly capacity: number, from?: KVCache, alloc?: (n: number) => Float32Array) {
    this.k = [];
    this.v = [];
    this.alloc = alloc ?? from?.alloc;
    const make = this.alloc ?? ((n: number) => new Float32Array(n));
    for (let l = 0; l < nLayers; l++) {
      this.k.push(make(capacity * kvDim));
      this.v.push(make(capacity * kvDim));
    }
    if (from) {
      const used = from.len * kvDim;
      for (let l = 0; l < nLayers; l++) {
        this.k[l]!.set(from.k[l]!.subarray(0, used));
        this.v[l]!.set(from.v[l]!.subarray(0, used));
      }
      this.len = from.len;
    }
  }

  /** Number of cached positions. */
  get length(): number { return this.len; }

  /** Bytes holding cached positions (K and V, all layers). */
  get bytes(): number { return this.len * this.kvDim * 2 * this.nLayers * 4; }

  /** Bytes allocated for the full capacity. */
  get capacityBytes(): number { return this.capacity * this.kvDim * 2 * this.nLayers * 4; }

  /** Throws unless `n` more positions fit. */
  ensureRoom(n: number): void {
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

  /** Copy the cached positions of `other` into this cache (same shape), replacing its contents. */
  copyFrom(other: KVCache): void {
    if (other.nLayers !== this.nLayers || other.kvDim !== this.kvDim || other.len > this.capacity) throw new RangeError('cache shapes differ');
    const used = other.len * this.kvDim;
    for (let l = 0; l < this.nLayers; l++) {
      this.k[l]!.set(other.k[l]!.subarray(0, used));
      this.v[l]!.set(other.v[l]!.subarray(0, used));
    }
    this.len = other.len;
  }
}
