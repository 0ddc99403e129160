/**
 * The WebAssembly SIMD backend: the same call shapes as the plain TypeScript kernels
 * (kernels/matmul.ts, norm.ts, activations.ts), computed by build/tokenloop-kernels.wasm over one
 * shared memory, matmul rows and attention heads split across a worker_threads pool.
 *
 * Arrays that already live in the backend's memory (allocated with `heap.f32` / `heap.allocate`,
 * e.g. a model file read through openModelFile({ allocate: backend.heap.allocate })) are used in
 * place; other arrays are copied in (weights once, cached per array) and results copied out.
 */
import { InvalidOptionError, UnsupportedError } from '../../../errors.js';
import { GGMLType, blockLayout, typeName } from '../../../format/dtypes.js';
import { kvSpan } from '../../../kv/cache.js';
import { ThreadPool, resolveThreads } from '../threads/pool.js';
import { ctrlBytes } from '../threads/protocol.js';
import { WasmHeap, createSharedMemory } from './heap.js';
import { INTERLEAVED_FLAG, QUADS_FLAG, defaultKernelVariant, instantiateKernels, kernelModule, type KernelExports, type KernelVariant } from './module.js';

/** Weight types the wasm matmul computes with (dequantized inside the kernel, row by row). */
export const WASM_MATMUL_TYPES: ReadonlySet<GGMLType> = new Set([
  GGMLType.F32, GGMLType.F16, GGMLType.BF16, GGMLType.Q8_0, GGMLType.Q4_0, GGMLType.Q4_1,
  GGMLType.Q5_0, GGMLType.Q5_1, GGMLType.Q2_K, GGMLType.Q3_K, GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K,
]);

/**
 * Fewest tokens for the quad prefill, by kernel build and weight type (others: 8). Each row's
 * panels are rebuilt per call and a partial quad computes padding, while the per-token kernels
 * run each token while a weight group is in cache. Measured in the 110M models (one process, the
 * threshold flipped between calls, prefill time with quads over without, one thread). Relaxed
 * build: Q8_0 1.12 / 1.38 / 1.24 / 1.16 / 1.08 / 1.04 / 1.05 at 8…14 tokens, 0.96 at 15, 0.95 at
 * 16 (two threads alike); Q4_0 1.04 / 1.33 / 1.17 / 1.11 at 8…11, 0.98–1.02 at 12–14, 0.89 at 15;
 * Q4_K 0.96 at 8, 1.20 / 1.13 / 1.03 at 9…11, 0.95 at 12; Q6_K 0.60–0.77 from 8 on. SIMD128 build
 * (no 8-bit dot products; Q4_K groups not transposed, so no fast per-token path): Q8_0 1.07–1.28
 * at 8…14, 0.98 at 15; Q4_0 0.84 at 8, 0.93–1.06 at 9…11; Q4_K 0.60–0.75 at 8…12.
 */
const QUAD_MIN_TOKENS: Record<KernelVariant, Partial<Record<GGMLType, number>>> = {
  relaxed: { [GGMLType.Q8_0]: 15, [GGMLType.Q4_0]: 12, [GGMLType.Q4_K]: 12 },
  simd128: { [GGMLType.Q8_0]: 15 },
};

/**
 * Fewest values for which an element-wise or row-wise op (swiglu, add, activation quantization and
 * packing, RMSNorm, RoPE, the KV cache store) is split across the threads: below it the dispatch
 * costs more than the second thread saves (a decode step's never are; a prefill's are).
 */
const PARALLEL_MIN_VALUES = 32768;

/** The ops splitOps sends to the thread pool or runs on the calling thread (the same signatures in both). */
type SplitOps = Pick<ThreadPool, 'swiglu' | 'add' | 'rmsnormRows' | 'ropeRows' | 'storeKV'>;

/**
 * Fewest queries for which attention over an f16 cache widens the cache to f32 first: widening
 * once costs about what one query's pass over the cache does, and saves three instructions per
 * four values in every pass after it.
 */
const WIDEN_MIN_TOKENS = 16;

/** The wasm attention's `kvHalf` for an f16 cache widened per KV head (assembly/attention.ts KV_HALF_WIDEN). */
const KV_HALF_WIDEN = 2;

/** Types whose int8 kernel serves one-token decode only (wasm/assembly/q8.ts q23KRow). */
const DECODE_ONLY_INT8 = new Set<GGMLType>([GGMLType.Q2_K, GGMLType.Q3_K]);

/** Types whose dot product needs Σx per 32-block (they store a min/offset). */
const NEEDS_SUMS = new Set<GGMLType>([GGMLType.Q4_1, GGMLType.Q5_1, GGMLType.Q4_K, GGMLType.Q5_K]);

/**
 * Below this many multiply-adds a matmul or attention runs on the calling thread only: waking a
 * worker and sharing the chunks costs a few microseconds (much more when the OS is slow to
 * schedule it), which a ~20 µs op does not repay. Measured on stories260K (width 64): with
 * 1 << 15 its decode ran slower on 2 threads than on 1.
 */
const PARALLEL_MIN_MACS = 1 << 17;

/** matmulMany's staging roles of its parts' outputs (made once, not per call). */
const OUT_ROLES = ['out0', 'out1', 'out2', 'out3'];

/** One product of matmulMany: out (nTokens × nOut) = x · wᵀ. */
export interface MatmulPart { out: Float32Array; w: MatrixWeight; nOut: number }

/** A weight matrix as the kernels see it (structurally the forward pass's `Weight`). */
export interface MatrixWeight {
  type: GGMLType;
  name?: string;
  data: ArrayBufferView;
}

export interface WasmBackendOptions {
  /** Threads (calling thread included). Default os.availableParallelism(); capped at the core count. */
  threads?: number;
  /**
   * Matmuls/attention with fewer multiply-adds run on the calling thread only. Default 131072, or
   * the environment variable TOKENLOOP_PARALLEL_MIN_MACS (0: every op goes through the pool).
   */
  parallelMinMacs?: number;
  /**
   * Block-quantized weights (Q4_0…Q6_K): quantize the activations to int8 blocks once per matmul
   * and use integer dot products (llama.cpp's method; default true). false: dequantize to f32.
   */
  int8Activations?: boolean;
  /**
   * Kernel build: 'relaxed' (FMA and 8-bit dot products; needs relaxed SIMD) or 'simd128'.
   * Default: 'relaxed' where the runtime supports it, unless TOKENLOOP_WASM_RELAXED=0.
   */
  variant?: KernelVariant;
  /**
   * Fewest tokens for which a Q8_0/Q4_0/K-quant matmul runs over token quads (panel.ts) instead of
   * the per-token kernels. Default: per kernel build and type, see QUAD_MIN_TOKENS (tests set 8 to reach
   * the quad kernels with short inputs).
   */
  quadMinTokens?: number;
}

export class WasmBackend {
  readonly name = 'wasm' as const;
  readonly heap: WasmHeap;
  readonly kernels: KernelExports;
  readonly threads: number;
  /** The kernel build in use. */
  readonly variant: KernelVariant;
  private readonly pool: ThreadPool | null;
  private readonly weightPtrs = new WeakMap<ArrayBufferView, number>();
  /** Weights whose wasm bytes were rearranged by interleaveRows (see interleave()). */
  private readonly interleaved = new WeakSet<ArrayBufferView>();
  /** Weights to interleave on their first matmul (interleaveOnFirstUse). */
  private readonly pending = new WeakMap<ArrayBufferView, MatrixWeight & { dims: readonly number[] }>();
  private readonly staging = new Map<string, { ptr: number; bytes: number }>();
  private scratch = { ptr: 0, stride: 0 };
  /** Inside reserve(): matmul and attention allocate their staging and return before computing. */
  private dry = false;
  /** Staging and scratch blocks reserve() has already touched (pointer → bytes). */
  private readonly touched = new Map<number, number>();
  /**
   * What the int8 staging buffers hold (see quantized()); quads: the quads the input was last
   * quantized into (0: none; xq and xd are then 0). Updated in place, like the result objects
   * below: a decode step makes no garbage here (young-generation pages a step's garbage cycles
   * through stay resident: about 3 MiB of a 110M Q4_0 run's peak RSS).
   */
  private readonly lastQuant = { valid: false, i8: false, nIn: 0, nTok: 0, xq: 0, xd: 0, quads: 0 };
  /** quantized()'s result, reused. */
  private readonly quantOut = { xq: 0, xd: 0 };
  /** matmulInputs()'s result, reused (read before the next matmul). */
  private readonly inputsOut = { typeFlags: 0, wp: 0, xp: 0, xs: 0, xq: 0, xd: 0 };
  /** matmulMany's per-part output pointers, reused. */
  private readonly partOut: number[] = [];
  /** An Int32Array over the whole memory (made again when the memory grows), for matmulMany's segment table. */
  private i32All: Int32Array | null = null;
  private readonly parallelMin: number;
  /** The same for element-wise ops (PARALLEL_MIN_VALUES; 0 when parallelMin is 0, as in the tests). */
  private readonly parallelMinValues: number;
  private readonly int8: boolean;
  /** quadMinTokens, when given. */
  private readonly quadMin: number | undefined;

  constructor(opts: WasmBackendOptions = {}) {
    this.threads = resolveThreads(opts.threads);
    const env = Number(process.env['TOKENLOOP_PARALLEL_MIN_MACS']);
    this.parallelMin = opts.parallelMinMacs ?? (process.env['TOKENLOOP_PARALLEL_MIN_MACS'] && Number.isInteger(env) && env >= 0 ? env : PARALLEL_MIN_MACS);
    this.parallelMinValues = this.parallelMin === 0 ? 0 : PARALLEL_MIN_VALUES;
    this.int8 = opts.int8Activations ?? true;
    if (opts.quadMinTokens !== undefined && !(Number.isInteger(opts.quadMinTokens) && opts.quadMinTokens >= 1)) {
      throw new InvalidOptionError(`wasm backend: quadMinTokens must be a positive integer (got ${opts.quadMinTokens})`);
    }
    this.quadMin = opts.quadMinTokens;
    const memory = createSharedMemory();
    this.variant = opts.variant ?? defaultKernelVariant();
    this.kernels = instantiateKernels(memory, this.variant);
    this.heap = new WasmHeap(memory, this.kernels.heapBase());
    this.pool = this.threads > 1 ? new ThreadPool(kernelModule(this.variant), memory, this.kernels, this.threads, this.heap.alloc(ctrlBytes(this.threads))) : null;
  }

  /**
   * Rearrange a matrix weight (dims [nIn, nOut]) used only through matmul into the row-interleaved
   * layout of the decode kernels (wasm/assembly/rows4.ts), once: in place when its bytes live in
   * this backend's memory (a model file read with this heap's allocator, so nothing else may read
   * those bytes as GGUF rows afterwards), else in the backend's own copy. F32, F16, BF16, Q8_0, Q4_0,
   * Q4_K and Q5_K; Q6_K in the relaxed build (packed row by row, not grouped: wasm/assembly/q8.ts
   * q6Pack); other types and shapes are left as they are. Returns whether the weight is interleaved.
   */
  interleave(w: MatrixWeight & { dims: readonly number[] }): boolean {
    if (this.interleaved.has(w.data)) return true;
    const nIn = w.dims[0] ?? 0;
    const nOut = w.dims.slice(1).reduce((a, b) => a * b, 1);
    if (!WASM_MATMUL_TYPES.has(w.type) || nOut < 4) return false;
    const cb = this.kernels.chunkBytes(w.type, nIn);
    const rb = this.kernels.rowBytes(w.type, nIn);
    if (cb === 0 || w.data.byteLength < rb * nOut) return false;
    this.kernels.interleaveRows(this.weightPtr(w.data), rb, cb, nOut, this.stage('interleave', this.kernels.interleaveTmpBytes(rb, cb, nOut)));
    this.interleaved.add(w.data);
    return true;
  }

  /**
   * Row `row` (nIn values) of a weight this backend interleaved, as f32 into out[outOff..] (the
   * embedding lookup of a tied output projection). Returns false, doing nothing, for any other
   * weight: its bytes are in GGUF order and the caller reads them itself.
   */
  readRow(out: Float32Array, outOff: number, w: MatrixWeight, row: number, nIn: number): boolean {
    if (!this.interleaved.has(w.data)) return false;
    const rb = this.kernels.rowBytes(w.type, nIn), cb = this.kernels.chunkBytes(w.type, nIn);
    const nOut = Math.floor(w.data.byteLength / rb);
    if (!Number.isInteger(row) || row < 0 || row >= nOut) throw new InvalidOptionError(`row ${row} is outside ${w.name ?? 'the weight'} (${nOut} rows)`);
    // the row in GGUF order, whichever layout holds it (the kernel module knows which: grouped,
    // banded, packed Q6_K, or a trailing row as it is)
    const src = this.stage('row.gguf', rb);
    this.kernels.gatherRowAt(src, this.weightPtr(w.data), row, rb, cb, nIn, nOut, this.stage('row.group', 4 * rb));
    const op = this.output(out, 'row', nIn, outOff);
    this.kernels.dequantRow(w.type, src, op, nIn);
    this.finish(out, op, nIn, outOff);
    return true;
  }

  /**
   * interleave(w) now when w's bytes already live in this memory (rearranged in place: part of
   * loading), else on w's first matmul (a model that is only inspected, like tokenloop info on a
   * plain buffer, never copies its weights).
   */
  interleaveWhenUsed(w: MatrixWeight & { dims: readonly number[] }): void {
    if (this.interleaved.has(w.data)) return;
    if (this.heap.owns(w.data)) this.interleave(w);
    else this.pending.set(w.data, w);
  }

  /** Whether matmul has a kernel for this weight type. */
  supports(type: GGMLType): boolean {
    return WASM_MATMUL_TYPES.has(type);
  }

  /**
   * out (nTokens × nOut) = x (nTokens × nIn) · Wᵀ; W is nOut rows of nIn values of any type in
   * WASM_MATMUL_TYPES, kept in its file format and dequantized inside the kernel.
   */
  matmul(out: Float32Array, w: MatrixWeight, x: Float32Array, nIn: number, nOut: number, nTokens: number): void {
    this.matmulPart(out, w, x, nIn, nOut, nTokens, false);
  }

  /** matmul; `again`: x is the previous matmul's input, unchanged since (its quantization is reused). */
  private matmulPart(out: Float32Array, w: MatrixWeight, x: Float32Array, nIn: number, nOut: number, nTokens: number, again: boolean): void {
    const rb = this.checkMatmul(out, w, x, nIn, nOut, nTokens);
    const op = this.output(out, 'out', nOut * nTokens);
    const a = this.matmulInputs(w, x, nIn, nTokens, rb, again);
    if (!a) return; // reserve(): the staging is all it wanted
    if (this.pool && nIn * nOut * nTokens >= this.parallelMin && nOut >= this.threads) {
      this.pool.matmul(a.typeFlags, op, a.wp, a.xp, a.xs, a.xq, a.xd, nIn, nOut, nTokens, this.scratch.ptr, this.scratch.stride, this.rowAlign(w, nIn, nOut, nTokens));
    } else {
      this.kernels.matmul(a.typeFlags, op, a.wp, a.xp, a.xs, a.xq, a.xd, nIn, nOut, nTokens, 0, nOut, this.scratch.ptr);
    }
    this.finish(out, op, nOut * nTokens);
  }

  /**
   * Several matmuls over the same input x (the query/key/value projections, gate and up): when
   * the weights share a type and layout and every part but the last has a multiple of four rows,
   * their rows are computed as one matrix in one dispatch (wasm matmulSegments): one wake-up and
   * one barrier instead of one per part, and longer weight streams per thread. At two threads
   * this took a 110M F32 layer's query/key/value products from 148 to 133 µs and gate/up from
   * 243 to 230 µs. Results equal part-by-part matmul bit for bit; otherwise it does exactly that.
   */
  matmulMany(parts: readonly MatmulPart[], x: Float32Array, nIn: number, nTokens: number): void {
    const first = parts[0];
    if (!first) return;
    const n = parts.length;
    const rb = this.checkMatmul(first.out, first.w, x, nIn, first.nOut, nTokens);
    const il = this.interleaved.has(first.w.data);
    // fused: one type and layout, every part but the last whole four-row groups
    let fusable = n > 1;
    for (let i = 1; i < n; i++) {
      const p = parts[i]!;
      this.checkMatmul(p.out, p.w, x, nIn, p.nOut, nTokens);
      if (p.w.type !== first.w.type || this.interleaved.has(p.w.data) !== il || parts[i - 1]!.nOut % 4 !== 0) fusable = false;
    }
    if (!fusable) {
      // part by part, the input quantized once (for each int8 form) and kept for the next parts
      for (let i = 0; i < n; i++) { const p = parts[i]!; this.matmulPart(p.out, p.w, x, nIn, p.nOut, nTokens, i > 0); }
      return;
    }
    const ops = this.partOut;
    for (let i = 0; i < n; i++) { const p = parts[i]!; ops[i] = this.output(p.out, n <= OUT_ROLES.length ? OUT_ROLES[i]! : `out${i}`, p.nOut * nTokens); }
    const segs = this.stage('segments', 12 * n);
    const a = this.matmulInputs(first.w, x, nIn, nTokens, rb); // rb: every part has first's type and nIn
    if (!a) return;
    let nOut = 0;
    for (let i = 0; i < n; i++) {
      const p = parts[i]!;
      const wp = this.weightPtr(p.w.data); // (may allocate, so the table view is taken after it)
      const table = this.i32();
      table[(segs >> 2) + 3 * i] = wp;
      table[(segs >> 2) + 3 * i + 1] = ops[i]!;
      table[(segs >> 2) + 3 * i + 2] = p.nOut;
      nOut += p.nOut;
    }
    if (this.pool && nIn * nOut * nTokens >= this.parallelMin && nOut >= this.threads) {
      this.pool.matmulSegments(a.typeFlags, segs, n, a.xp, a.xs, a.xq, a.xd, nIn, nOut, nTokens, this.scratch.ptr, this.scratch.stride, this.rowAlign(first.w, nIn, nOut, nTokens));
    } else {
      this.kernels.matmulSegments(a.typeFlags, segs, n, a.xp, a.xs, a.xq, a.xd, nIn, nTokens, 0, nOut, this.scratch.ptr);
    }
    for (let i = 0; i < n; i++) { const p = parts[i]!; this.finish(p.out, ops[i]!, p.nOut * nTokens); }
  }

  /** An Int32Array over the whole memory, current after any growth. */
  private i32(): Int32Array {
    const buf = this.heap.memory.buffer;
    if (this.i32All === null || this.i32All.buffer !== buf) this.i32All = new Int32Array(buf);
    return this.i32All;
  }

  /**
   * Rows per unit of a pooled matmul's chunks: whole bands (32 rows) for a one-token product with
   * a banded weight (wide f32/f16/bf16, wasm assembly/interleave.ts), so each thread streams whole bands;
   * else whole four-row groups.
   */
  private rowAlign(w: MatrixWeight, nIn: number, nOut: number, nTokens: number): number {
    if (nTokens !== 1 || !this.interleaved.has(w.data)) return 4;
    return this.kernels.bandRows(this.kernels.chunkBytes(w.type, nIn), nIn, nOut) > 0 ? 32 : 4;
  }

  /**
   * matmul's argument checks; interleaves a weight that was waiting for its first use. Returns the
   * weight's row bytes.
   */
  private checkMatmul(out: Float32Array, w: MatrixWeight, x: Float32Array, nIn: number, nOut: number, nTokens: number): number {
    if (!WASM_MATMUL_TYPES.has(w.type)) throw new UnsupportedError(`wasm backend: no matmul kernel for ${typeName(w.type)}${w.name ? ` (tensor ${w.name})` : ''}`);
    const { blockElems } = blockLayout(w.type);
    if (nIn % blockElems !== 0) throw new InvalidOptionError(`wasm backend: ${typeName(w.type)} rows need a multiple of ${blockElems} values, got ${nIn}`);
    const rb = this.kernels.rowBytes(w.type, nIn);
    if (w.data.byteLength < rb * nOut) throw new InvalidOptionError(`wasm backend: weight${w.name ? ` ${w.name}` : ''} holds ${w.data.byteLength} bytes, ${nOut}×${nIn} ${typeName(w.type)} needs ${rb * nOut}`);
    if (x.length < nIn * nTokens || out.length < nOut * nTokens) throw new InvalidOptionError('wasm backend: matmul x/out arrays are too short');
    const later = this.pending.get(w.data);
    if (later) { this.pending.delete(w.data); this.interleave(later); }
    return rb;
  }

  /**
   * What the matmul kernel needs besides the output, for weights like w (its type and layout):
   * the input's pointer and its per-type preparation (block sums, int8 quantization, f16 scaling),
   * and the scratch it will use (rb: w's row bytes, from checkMatmul). null inside reserve(), after
   * sizing the staging.
   */
  private matmulInputs(w: MatrixWeight, x: Float32Array, nIn: number, nTokens: number, rb: number, again = false): { typeFlags: number; wp: number; xp: number; xs: number; xq: number; xd: number } | null {
    const wp = this.weightPtr(w.data);
    const il = this.interleaved.has(w.data);
    const xp = this.input(x, 'x', nIn * nTokens);
    let xs = 0;
    const wantQuads = this.int8 && nTokens >= (this.quadMin ?? QUAD_MIN_TOKENS[this.variant][w.type] ?? 8) && this.kernels.hasQuads(w.type) === 1;
    if (NEEDS_SUMS.has(w.type) && !wantQuads) {
      xs = this.stage('xs', (nIn / 32) * nTokens * 4);
      if (!this.dry) this.kernels.blockSums(xs, xp, nIn, nTokens);
    }
    let xq = 0, xd = 0, quads = 0;
    // Q2_K's and Q3_K's int8 kernels are one-token decode kernels: for several tokens, dequantizing
    // each row once per tile and running the f32 tiles was faster (110M Q3_K prefill 100 vs 65 tok/s)
    if (this.int8 && this.kernels.hasIntDot(w.type) && !(DECODE_ONLY_INT8.has(w.type) && nTokens > 1)) {
      ({ xq, xd } = this.quantized(w.type, xp, nIn, nTokens, wantQuads, again));
      // Q6_K, Q2_K and Q3_K decode keep their activations' 16-value group sums in the thread's scratch (q6GroupSums)
      if ((w.type === GGMLType.Q6_K || DECODE_ONLY_INT8.has(w.type)) && nTokens === 1) this.ensureScratch(nIn);
      if (wantQuads) {
        quads = QUADS_FLAG;
        this.ensureScratch(this.kernels.quadScratchBytes(w.type, nIn));
      }
    } else if (w.type === GGMLType.F16 && nTokens === 1) {
      xq = this.stage('xq', nIn * 4);
      if (!this.dry && !this.kernels.scaleHalfX(xq, xp, nIn)) xq = 0;
    } else if (nTokens > 1) this.ensureScratch(nIn * 4);
    // interleaved rows read outside the decode kernels are copied to GGUF order after the f32 row
    // (a banded row's group first to the 4·rb bytes after it); f16 prefill converts a whole group
    // (four rows) to f32 first
    if (il) this.ensureScratch(Math.max(nIn * 4 + 5 * rb, nIn * 16));
    if (this.dry) return null;
    const a = this.inputsOut;
    a.typeFlags = (il ? w.type | INTERLEAVED_FLAG : w.type) | quads;
    a.wp = wp; a.xp = xp; a.xs = xs; a.xq = xq; a.xd = xd;
    return a;
  }

  /** out[oOff..] = RMSNorm(x[xOff..]; w) over n values (w null: no scale). In-place safe. */
  rmsnorm(out: Float32Array, oOff: number, x: Float32Array, xOff: number, w: Float32Array | null, n: number, eps: number): void {
    const xp = this.input(x, 'x', n, xOff);
    const wp = w ? this.input(w, 'w', n) : 0;
    const op = this.output(out, 'out', n, oOff);
    this.kernels.rmsnorm(op, xp, wp, n, eps);
    this.finish(out, op, n, oOff);
  }

  /** RMSNorm of `rows` rows of n values: out[r·n..] = RMSNorm(x[r·n..]; w) (w null: no scale). In-place safe. */
  rmsnormRows(out: Float32Array, x: Float32Array, w: Float32Array | null, n: number, rows: number, eps: number): void {
    const xp = this.input(x, 'x', n * rows);
    const wp = w ? this.input(w, 'w', n) : 0;
    const op = this.output(out, 'out', n * rows);
    this.splitOps(n * rows, rows > 1).rmsnormRows(op, xp, wp, n, rows, eps);
    this.finish(out, op, n * rows);
  }

  /** In-place softmax of x[off..off+n). */
  softmax(x: Float32Array, off: number, n: number): void {
    const p = this.input(x, 'x', n, off);
    this.kernels.softmax(p, n);
    this.finish(x, p, n, off);
  }

  /** out[i] = silu(gate[i]) · up[i] for i < n. */
  swiglu(out: Float32Array, gate: Float32Array, up: Float32Array, n: number): void {
    const gp = this.input(gate, 'x', n), upp = this.input(up, 'w', n);
    const op = this.output(out, 'out', n);
    this.splitOps(n).swiglu(op, gp, upp, n);
    this.finish(out, op, n);
  }

  /** out[i] = a[i] + b[i] for i < n (out may alias a or b). */
  add(out: Float32Array, a: Float32Array, b: Float32Array, n: number): void {
    const ap = this.input(a, 'x', n), bp = this.input(b, 'w', n);
    const op = this.output(out, 'out', n);
    this.splitOps(n).add(op, ap, bp, n);
    this.finish(out, op, n);
  }

  /** out[i] = GELU(x[i]) (tanh approximation) for i < n. */
  gelu(out: Float32Array, x: Float32Array, n: number): void {
    const xp = this.input(x, 'x', n);
    const op = this.output(out, 'out', n);
    this.kernels.gelu(op, xp, n);
    this.finish(out, op, n);
  }

  /**
   * RoPE in place on nHeads heads (headDim apart) at x[off..], one position: the first ropeDim
   * dims rotate by pos·base^(−2i/ropeDim), adjacent pairs or (neox) split halves.
   */
  rope(x: Float32Array, off: number, nHeads: number, headDim: number, ropeDim: number, pos: number, base: number, neox: boolean): void {
    const p = this.input(x, 'x', nHeads * headDim, off);
    this.kernels.rope(p, nHeads, headDim, ropeDim, pos, base, neox ? 1 : 0);
    this.finish(x, p, nHeads * headDim, off);
  }

  /**
   * Rotary embedding of nTok rows (nHeads·headDim values each) of x in place, from the tables
   * cos/sin (nTok × nRot/2): the same bits as the TypeScript ropeApply row by row.
   */
  ropeRows(x: Float32Array, nTok: number, nHeads: number, headDim: number, nRot: number, cos: Float32Array, sin: Float32Array, neox: boolean): void {
    const n = nTok * nHeads * headDim, nc = nTok * (nRot >> 1);
    if (nRot > headDim || (nRot & 1) !== 0) throw new InvalidOptionError(`rope: ${nRot} rotated dims do not fit heads of ${headDim}`);
    const xp = this.input(x, 'x', n), cp = this.input(cos, 'k', nc), sp = this.input(sin, 'v', nc);
    this.splitOps(n, nTok > 1).ropeRows(xp, nTok, nHeads, headDim, nRot, cp, sp, neox ? 1 : 0);
    this.finish(x, xp, n);
  }

  /**
   * Causal attention of nTok queries at positions start.. against caches k, v laid out as
   * src/kv/cache.ts says (blocks of KV_BLOCK positions, head-major inside), holding at least
   * start + nTok positions; q, out (nTok, nHead·headDim).
   * k and v are both f32, or both f16 bits (Uint16Array: an f16 KV cache).
   */
  attention(out: Float32Array, q: Float32Array, k: Float32Array | Uint16Array, v: Float32Array | Uint16Array, nTok: number, start: number,
    nHead: number, nHeadKv: number, headDim: number, scale: number): void {
    if (nHead % nHeadKv !== 0) throw new InvalidOptionError(`attention: ${nHead} heads are not a multiple of ${nHeadKv} kv heads`);
    const half = k instanceof Uint16Array;
    if (half !== v instanceof Uint16Array) throw new InvalidOptionError('attention: k and v caches must have the same element type');
    const used = kvSpan(start + nTok, nHeadKv, headDim);
    if (k.length < used || v.length < used) throw new InvalidOptionError('attention: cache buffers do not hold the positions attended to');
    const qp = this.input(q, 'x', nTok * nHead * headDim);
    const kp = this.inputAny(k, 'k', used), vp = this.inputAny(v, 'v', used);
    // prefill over an f16 cache: the kernel widens each KV head's part to f32 once for all queries,
    // in the thread's scratch after the scores (see the wasm KV_HALF_WIDEN)
    const widen = half && nTok >= WIDEN_MIN_TOKENS;
    const kvHalf = widen ? KV_HALF_WIDEN : half ? 1 : 0;
    const op = this.output(out, 'out', nTok * nHead * headDim);
    this.ensureScratch(this.kernels.attentionScratchBytes(nHead, headDim) + (widen ? this.kernels.attentionWidenBytes(start + nTok, headDim) : 0));
    const pooled = this.pool !== null && (start + nTok) * nHead * headDim * nTok >= this.parallelMin;
    const nSeg = nTok === 1 ? this.kernels.attentionSegmentCount(start + 1) : 0;
    if (pooled && nSeg >= 2) {
      // decode: the threads take runs of whole segments of the positions (all heads), folded here
      const partials = this.stage('att.part', nSeg * nHead * (headDim + 2) * 4);
      if (this.dry) return;
      this.pool!.attentionSegments(partials, qp, kp, vp, start, nHead, nHeadKv, headDim, scale, this.scratch.ptr, this.scratch.stride, kvHalf, nSeg);
      this.kernels.attentionFold(op, partials, nSeg, nHead, headDim);
      this.finish(out, op, nHead * headDim);
      return;
    }
    if (this.dry) return;
    if (pooled && nHead >= this.threads) {
      // widened: whole KV groups per chunk where there are enough of them (else some heads' KV head is widened twice)
      const perChunk = widen && nHeadKv >= this.threads ? nHead / nHeadKv : 1;
      this.pool.attention(op, qp, kp, vp, nTok, start, nHead, nHeadKv, headDim, scale, this.scratch.ptr, this.scratch.stride, kvHalf, perChunk);
    } else {
      this.kernels.attention(op, qp, kp, vp, nTok, start, nHead, nHeadKv, headDim, scale, 0, nHead, this.scratch.ptr, kvHalf);
    }
    this.finish(out, op, nTok * nHead * headDim);
  }

  /**
   * dst[dOff..dOff+n) = f16 bits of src[sOff..sOff+n), rounded to nearest even (the f16 KV cache
   * write; bit-identical to format/dtypes.ts f32ToF16).
   */
  storeHalf(dst: Uint16Array, dOff: number, src: Float32Array, sOff: number, n: number): void {
    if (dOff + n > dst.length) throw new InvalidOptionError(`wasm backend: array of ${dst.length} values is too short for ${dOff}+${n}`);
    const sp = this.input(src, 'x', n, sOff);
    const owned = this.heap.owns(dst);
    const dp = owned ? dst.byteOffset + dOff * 2 : this.stage('half.out', n * 2);
    this.kernels.storeHalf(dp, sp, n);
    if (!owned) dst.set(new Uint16Array(this.heap.memory.buffer, dp, n), dOff);
  }

  /**
   * Append nTok rows of src (heads·headDim f32 each) at position pos0 of a cache layer dst, the
   * keys (`keys`) or the values (src/kv/cache.ts kvIndex), that lives in this backend's memory:
   * f32, or f16 bits rounded as storeHalf does.
   */
  storeKV(dst: Float32Array | Uint16Array, keys: boolean, src: Float32Array, nTok: number, heads: number, headDim: number, pos0: number): void {
    if (!this.heap.owns(dst)) throw new InvalidOptionError('wasm backend: storeKV needs a cache allocated in its memory');
    if (dst.length < kvSpan(pos0 + nTok, heads, headDim)) throw new InvalidOptionError(`wasm backend: cache of ${dst.length} values cannot take positions ${pos0}..${pos0 + nTok}`);
    const sp = this.input(src, 'x', nTok * heads * headDim);
    const half = dst instanceof Uint16Array ? 1 : 0;
    this.splitOps(nTok * heads * headDim, heads > 1).storeKV(dst.byteOffset, sp, nTok, heads, headDim, pos0, half, keys ? 1 : 0);
  }

  /**
   * Allocate now what the calls `rehearse` makes will need, and touch those pages: rehearse calls
   * matmul and attention with the shapes of a coming batch, which here only size their staging
   * and scratch (no kernel runs, outputs are left alone). Fresh wasm pages fault on their first
   * write (about 11 µs per 4 KiB page on the bench VM), and a first 127-token prefill of the 110M
   * models wrote about 1000 new pages of staging: this moves that cost to the caller's setup
   * (TransformerModel.createCache), as llama.cpp allocates its compute buffers with a context.
   */
  reserve(rehearse: () => void): void {
    this.dry = true;
    try {
      rehearse();
    } finally {
      this.dry = false;
    }
    this.lastQuant.valid = false;
    const blocks = [...this.staging.values()];
    if (this.scratch.stride > 0) blocks.push({ ptr: this.scratch.ptr, bytes: this.scratch.stride * this.threads });
    for (const b of blocks) {
      if ((this.touched.get(b.ptr) ?? -1) >= b.bytes) continue;
      this.touched.set(b.ptr, b.bytes);
      new Uint8Array(this.heap.memory.buffer, b.ptr, b.bytes).fill(0);
    }
  }

  /** Stop the worker threads (the process also exits without this: workers are unref'd). */
  async close(): Promise<void> {
    await this.pool?.close();
  }

  private weightPtr(data: ArrayBufferView): number {
    if (this.heap.owns(data)) return data.byteOffset;
    let p = this.weightPtrs.get(data);
    if (p === undefined) {
      p = this.heap.alloc(data.byteLength);
      new Uint8Array(this.heap.memory.buffer, p, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      this.weightPtrs.set(data, p);
    }
    return p;
  }

  /**
   * The activations at xp (nTok × nIn f32) quantized for the int8 kernels of `type`: int8 blocks
   * (xq, xd), or with `quads` the prefill's interleaved form (xq: quads, xd: unused), quantized
   * straight into quads a quad at a time (the wasm quantizeQuads: no int8 copy of the whole
   * batch). Done once for all rows and threads. `again` (matmulMany's parts after the first: the
   * same x, unchanged): what the staging buffers hold is reused when it is in the same form.
   * Shared inputs reach the backend only through matmulMany, so no input is compared with the
   * last one quantized (a saved copy and a comparison per large input cost 4 ms of a 110M
   * 127-token prefill).
   */
  private quantized(type: number, xp: number, nIn: number, nTok: number, quads: boolean, again: boolean): { xq: number; xd: number } {
    const i8 = this.kernels.compactInt8(type) === 1;
    const nb = (nIn / 32) * nTok;
    // where this form goes: quads at xt, or int8 blocks at xq, xd (the other form's fields 0, as lastQuant records them)
    let xq = 0, xd = 0, xt = 0;
    if (quads) {
      xt = this.stage('q.xt', this.kernels.quadBytes(type, nIn, nTok));
      this.ensureScratch(this.kernels.quantizeQuadsTmpBytes(type, nIn));
    } else {
      xq = this.stage('q.xq', nb * (i8 ? 32 : 64)); xd = this.stage('q.xd', nb * 8);
    }
    const out = this.quantOut;
    out.xq = quads ? xt : xq; out.xd = xd;
    if (this.dry) return out;
    const q = this.lastQuant;
    if (again && q.valid && q.i8 === i8 && q.nIn === nIn && q.nTok === nTok && q.xq === xq && q.xd === xd && q.quads === xt) return out;
    if (!quads) this.quantizeBlocks(xq, xd, xp, nb, i8);
    else if (this.pool && nb * 32 >= this.parallelMinValues) this.pool.quantizeQuads(type, xt, xp, nIn, nTok, this.scratch.ptr, this.scratch.stride);
    else this.kernels.quantizeQuads(type, xt, xp, nIn, nTok, 0, (nTok + 3) >> 2, this.scratch.ptr);
    q.valid = true; q.i8 = i8; q.nIn = nIn; q.nTok = nTok; q.xq = xq; q.xd = xd; q.quads = xt;
    return out;
  }

  /**
   * Where an element-wise or row-wise op over `values` values runs: the pool (its chunks give the
   * same bits as one call) when there are enough values and `splits` (more than one unit to deal
   * out), else this thread's kernels. Both take the op's arguments as they are.
   */
  private splitOps(values: number, splits = true): SplitOps {
    return this.pool && values >= this.parallelMinValues && splits ? this.pool : this.kernels;
  }

  /** quantizeBlocks / quantizeBlocksI8 of nb blocks, on all threads when there are many. */
  private quantizeBlocks(xq: number, xd: number, xp: number, nb: number, i8: boolean): void {
    if (this.pool && nb * 32 >= this.parallelMinValues) this.pool.quantize(xq, xd, xp, nb, i8);
    else if (i8) this.kernels.quantizeBlocksI8(xq, xd, xp, nb);
    else this.kernels.quantizeBlocks(xq, xd, xp, nb);
  }

  /** Pointer to n f32 of `a` from element `off`: in place when `a` is ours, else a staged copy. */
  private input(a: Float32Array, role: string, n: number, off = 0): number {
    if (off + n > a.length) throw new InvalidOptionError(`wasm backend: array of ${a.length} values is too short for ${off}+${n}`);
    if (this.heap.owns(a)) return a.byteOffset + off * 4;
    const p = this.stage(role, n * 4);
    new Float32Array(this.heap.memory.buffer, p, n).set(a.subarray(off, off + n));
    return p;
  }

  /** input() for f32 or u16 (f16 bits) arrays. */
  private inputAny(a: Float32Array | Uint16Array, role: string, n: number): number {
    if (a instanceof Float32Array) return this.input(a, role, n);
    if (n > a.length) throw new InvalidOptionError(`wasm backend: array of ${a.length} values is too short for ${n}`);
    if (this.heap.owns(a)) return a.byteOffset;
    const p = this.stage(role, n * 2);
    new Uint16Array(this.heap.memory.buffer, p, n).set(a.subarray(0, n));
    return p;
  }

  private output(a: Float32Array, role: string, n: number, off = 0): number {
    if (off + n > a.length) throw new InvalidOptionError(`wasm backend: array of ${a.length} values is too short for ${off}+${n}`);
    if (this.heap.owns(a)) return a.byteOffset + off * 4;
    return this.stage(role + '.out', n * 4);
  }

  private finish(a: Float32Array, p: number, n: number, off = 0): void {
    if (this.heap.owns(a)) return;
    a.set(new Float32Array(this.heap.memory.buffer, p, n), off);
  }

  /**
   * The staging block of `role`, at least `bytes`. A block outgrown goes back to the heap (the
   * warm-up's and a first small batch's staging would otherwise stay resident unused), so a
   * role's pointer may change; what the int8 buffers held is forgotten then.
   */
  private stage(role: string, bytes: number): number {
    let s = this.staging.get(role);
    if (!s || s.bytes < bytes) {
      if (s) { this.heap.free(s.ptr, s.bytes); this.touched.delete(s.ptr); this.lastQuant.valid = false; }
      s = { ptr: this.heap.alloc(Math.max(bytes, 4096)), bytes: Math.max(bytes, 4096) };
      this.staging.set(role, s);
    }
    return s.ptr;
  }

  /** Per-thread scratch of at least `bytes` (dequantized row for prefill, attention scores). */
  private ensureScratch(bytes: number): void {
    if (this.scratch.stride >= bytes) return;
    if (this.scratch.stride > 0) { this.heap.free(this.scratch.ptr, this.scratch.stride * this.threads); this.touched.delete(this.scratch.ptr); }
    const stride = Math.ceil(Math.max(bytes, 65536) / 64) * 64;
    this.scratch = { ptr: this.heap.alloc(stride * this.threads), stride };
  }
}

/** Create the WebAssembly backend (compiles the module once per process). */
export function createWasmBackend(opts: WasmBackendOptions = {}): WasmBackend {
  return new WasmBackend(opts);
}
