/**
 * Locates and compiles the kernel module (build/tokenloop-kernels.wasm and its relaxed-SIMD twin
 * build/tokenloop-kernels-relaxed.wasm, produced by scripts/build-wasm.mjs). The path resolves the same from src/ (tsx) and dist/ (built CLI):
 * both sit four levels below the package root.
 */
import { existsSync, readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import { UnsupportedError } from '../../../errors.js';
import { GGMLType } from '../../../format/dtypes.js';
import { Wasm, type WasmMemory, type WasmModule } from './wasm-api.js';

/**
 * Which kernel binary: 'relaxed' (SIMD128 + relaxed SIMD: FMA, 8-bit dot products) or 'simd128'
 * (SIMD128 only). Both compute the same functions; see scripts/build-wasm.mjs.
 */
export type KernelVariant = 'relaxed' | 'simd128';

/** Absolute path of the compiled SIMD128 kernels. */
export const WASM_PATH = fileURLToPath(new URL('../../../../build/tokenloop-kernels.wasm', import.meta.url));
/** Absolute path of the relaxed-SIMD build of the same kernels. */
export const WASM_RELAXED_PATH = fileURLToPath(new URL('../../../../build/tokenloop-kernels-relaxed.wasm', import.meta.url));

/** Or-ed into the wasm matmul's type argument for an interleaved weight (assembly/index.ts INTERLEAVED). */
export const INTERLEAVED_FLAG = 0x100;
/** Or-ed into the wasm matmul's type argument when xq holds quads (four tokens interleaved, assembly/panel.ts). */
export const QUADS_FLAG = 0x200;

/** Exports of the kernel module (pointers are byte offsets into the shared memory). */
export interface KernelExports {
  heapBase(): number;
  rowBytes(type: number, n: number): number;
  /** Bytes of one interleaving chunk of `type` with rows of n values; 0 if not interleaved. */
  chunkBytes(type: number, n: number): number;
  /** Rearrange the first 4·⌊nOut/4⌋ rows (rb bytes each) at w into interleaved groups (wide f32/f16/bf16: bands), in place (tmp: interleaveTmpBytes). */
  interleaveRows(w: number, rb: number, cb: number, nOut: number, tmp: number): void;
  /** Scratch bytes interleaveRows needs. */
  interleaveTmpBytes(rb: number, cb: number, nOut: number): number;
  /** Rows of an interleaved matrix stored in bands (wide f32/f16/bf16, assembly/interleave.ts); 0: none. */
  bandRows(cb: number, n: number, nOut: number): number;
  /** Copy row j (0..3) of the interleaved group at `group` to dst in GGUF order. */
  gatherRow(dst: number, group: number, j: number, rb: number, cb: number): void;
  /** Copy row r (any of the nOut) of the interleaved matrix at w (n values per row) to dst in GGUF order; tmp: 4·rb bytes. */
  gatherRowAt(dst: number, w: number, r: number, rb: number, cb: number, n: number, nOut: number, tmp: number): void;
  matmul(type: number, out: number, w: number, x: number, xs: number, xq: number, xd: number, nIn: number, nOut: number, nTok: number, r0: number, r1: number, scratch: number): void;
  /** matmul over nSeg weights sharing x as one matrix (segs: nSeg × i32 [w, out, rows]); rows [r0, r1) of the concatenation. */
  matmulSegments(type: number, segs: number, nSeg: number, x: number, xs: number, xq: number, xd: number, nIn: number, nTok: number, r0: number, r1: number, scratch: number): void;
  quantizeBlocks(xq: number, xd: number, x: number, nBlocks: number): void;
  /** 1 when prefill of `type` runs over quads (four tokens interleaved; wasm/assembly/panel.ts). */
  hasQuads(type: number): number;
  /** Bytes of the quads of nTok tokens of n values. */
  quadBytes(type: number, n: number, nTok: number): number;
  /** Per-thread matmul scratch bytes the quad prefill needs (two rows' panels). */
  quadScratchBytes(type: number, n: number): number;
  /** Quantize nTok tokens of f32 activations at x straight into quads at dst, quads [q0, q1); tmp: quantizeQuadsTmpBytes. */
  quantizeQuads(type: number, dst: number, x: number, n: number, nTok: number, q0: number, q1: number, tmp: number): void;
  /** Scratch bytes quantizeQuads needs (one quad's tokens quantized). */
  quantizeQuadsTmpBytes(type: number, n: number): number;
  /** Interleave quantized activations (xq, xd of nTok tokens of n values) into quads at dst. */
  packQuads(type: number, dst: number, xq: number, xd: number, n: number, nTok: number): void;
  /** quantizeBlocks with 32 i8 per block (the layout compactInt8 types read). */
  quantizeBlocksI8(xq: number, xd: number, x: number, nBlocks: number): void;
  /** 1 when matmul of `type` reads the activations as i8 (quantizeBlocksI8), 0 for i16. */
  compactInt8(type: number): number;
  dotRowQ(type: number, w: number, xq: number, xd: number, xs: number, n: number, fence: number): number;
  hasIntDot(type: number): number;
  scaleHalfX(y: number, x: number, n: number): number;
  blockSums(xs: number, x: number, n: number, nTok: number): void;
  dotRow(type: number, w: number, x: number, xs: number, n: number): number;
  dequantRow(type: number, w: number, y: number, n: number): void;
  rmsnorm(out: number, x: number, w: number, n: number, eps: number): void;
  rmsnormRows(out: number, x: number, w: number, n: number, rows: number, eps: number): void;
  ropeRows(x: number, nTok: number, nHeads: number, headDim: number, nRot: number, cos: number, sin: number, neox: number): void;
  softmax(x: number, n: number): void;
  swiglu(out: number, gate: number, up: number, n: number): void;
  add(out: number, a: number, b: number, n: number): void;
  gelu(out: number, x: number, n: number): void;
  rope(x: number, nHeads: number, headDim: number, ropeDim: number, pos: number, base: number, neox: number): void;
  /** k, v: the KV cache layout of src/kv/cache.ts; kvHalf 1: they hold f16 bits (an f16 KV cache). */
  attention(out: number, q: number, k: number, v: number, nTok: number, start: number, nHead: number, nHeadKv: number, headDim: number, scale: number, h0: number, h1: number, scores: number, kvHalf: number): void;
  attentionSegments(partials: number, q: number, k: number, v: number, start: number, nHead: number, nHeadKv: number, headDim: number, scale: number, s0: number, s1: number, scores: number, kvHalf: number): void;
  attentionSegmentCount(nPos: number): number;
  attentionScratchBytes(nh: number, headDim: number): number;
  attentionWidenBytes(nPos: number, headDim: number): number;
  attentionFold(out: number, partials: number, nSeg: number, nHead: number, headDim: number): void;
  /** Append nTok rows of heads·headDim f32 at src to a cache layer (src/kv/cache.ts kvIndex; keys 1: the keys' layout) at position pos0 (half 1: as f16 bits). */
  storeKV(dst: number, src: number, nTok: number, heads: number, headDim: number, pos0: number, half: number, keys: number): void;
  /** dst (u16) = f16 bits of n f32 at src, round to nearest even (the f16 KV cache write). */
  storeHalf(dst: number, src: number, n: number): void;
  /** Thread pool (assembly/pool.ts): publish an op whose arguments are written, its chunks dealt out to nThreads threads. */
  poolPublish(ctrl: number, op: number, nChunks: number, nThreads: number): void;
  /** Thread pool (assembly/pool.ts): the calling thread claims and runs chunks of the op just published at ctrl, then spins up to `spin` reads; returns the chunks finished. */
  poolWork(ctrl: number, spin: number): number;
  /** Thread pool: a worker's loop over the ops published at ctrl; returns when told to quit. */
  poolWorker(ctrl: number, index: number, spin: number): void;
}

const cached = new Map<KernelVariant, WasmModule>();
let relaxedOk: boolean | null = null;
let tiersSet = false;

/**
 * Compile the kernels with V8's optimizing compiler only (--no-liftoff) and all of them when the
 * module is made (--no-wasm-lazy-compilation). By default V8 runs new wasm code in its baseline
 * compiler first and recompiles it in the background once it is hot, so a short first request
 * (and the load-time warm-up, see TransformerModel.warmup) ran mostly baseline code: the first
 * 128-token prefill of the 15M synth model Q4_0 ran at 4.4k tok/s instead of 6.3k, stories260K
 * decode at 4.2k instead of 7.6k. With the optimizing tier alone but lazy, each function was still
 * compiled on its first call, and the warm-up's 8 tokens do not reach every path (the f32
 * attention a prefill of 16+ tokens takes after widening an f16 cache, the pooled ops): the first
 * real 127-token prefill of 15M Q4_0 paid 10-25 ms of compiling (30-50% of it). Compiling all of
 * it up front takes ~60 ms once per process, which the lazy compiles had cost during load anyway.
 * V8 flags are process-wide, so this applies to other WebAssembly in the process too;
 * TOKENLOOP_WASM_LIFTOFF=1 leaves V8's defaults.
 */
function optimizingTierUpFront(): void {
  if (tiersSet) return;
  tiersSet = true;
  if (process.env['TOKENLOOP_WASM_LIFTOFF'] === '1') return;
  v8.setFlagsFromString('--no-liftoff');
  v8.setFlagsFromString('--no-wasm-lazy-compilation');
}

/**
 * Whether this process can run the relaxed-SIMD build. Node 20's V8 ships relaxed SIMD behind
 * --experimental-wasm-relaxed-simd; the flag is set here at run time (V8 flags are process-wide,
 * so worker threads see it too) and the binary must then validate. Environment
 * TOKENLOOP_WASM_RELAXED=0 turns it off (the SIMD128 build is used).
 */
export function relaxedSimdAvailable(): boolean {
  if (relaxedOk !== null) return relaxedOk;
  relaxedOk = false;
  if (process.env['TOKENLOOP_WASM_RELAXED'] === '0' || !existsSync(WASM_RELAXED_PATH)) return false;
  const bytes = readFileSync(WASM_RELAXED_PATH);
  optimizingTierUpFront();
  try {
    if (!Wasm.validate(bytes)) v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
    if (Wasm.validate(bytes)) {
      const m = new Wasm.Module(bytes);
      relaxedOk = relaxedKernelsWork(m);
      if (relaxedOk) cached.set('relaxed', m);
    }
  } catch {
    relaxedOk = false;
  }
  return relaxedOk;
}

/**
 * Functional probe of the relaxed build: 5-block Q4_0 rows (four-block step plus a tail) through
 * the relaxed 8-bit dot products, one token (the decode kernel, three rows) and five tokens (the
 * prefill over quads, four rows: a full and a partial quad), must equal the exact integer-sum
 * result. Guards against engines that validate relaxed SIMD but compute it wrongly (Node 20's V8
 * miscompiles i32x4.relaxed_dot_i8x16_i7x16_add_s, which the kernels therefore avoid).
 */
function relaxedKernelsWork(m: WasmModule): boolean {
  // a small maximum (allowed: ≤ the import's) keeps V8 from reserving 4 GiB for the probe
  const memory = new Wasm.Memory({ initial: 2, maximum: 2, shared: true });
  const k = new Wasm.Instance(m, { env: { memory } }).exports as unknown as KernelExports;
  const n = 160, maxTok = 5, nb = n / 32, maxRows = 4, rb = nb * 18;
  const base = Math.ceil(k.heapBase() / 64) * 64;
  const w = base, x = w + 1024, xq = x + n * maxTok * 4, xd = xq + n * maxTok, out = xd + nb * maxTok * 8;
  const xt = out + maxTok * maxRows * 4, scratch = xt + k.quadBytes(GGMLType.Q4_0, n, maxTok);
  if (scratch + k.quadScratchBytes(GGMLType.Q4_0, n) > memory.buffer.byteLength) return false;
  const u8 = new Uint8Array(memory.buffer), f32 = new Float32Array(memory.buffer);
  for (let b = 0; b < nb * maxRows; b++) {
    u8[w + b * 18] = 0; u8[w + b * 18 + 1] = 0x3c; // f16 1.0
    for (let j = 0; j < 16; j++) u8[w + b * 18 + 2 + j] = (b * 37 + j * 11) & 0xff;
  }
  // activations already on the int8 grid of their blocks (amax 127): quantization is exact
  for (let i = 0; i < n * maxTok; i++) f32[x / 4 + i] = i % 32 === 5 ? 127 : ((i * 29) % 255) - 127;
  k.quantizeBlocksI8(xq, xd, x, nb * maxTok);
  for (const [t, rows] of [[1, 3], [maxTok, maxRows]] as const) {
    if (t === 1) k.matmul(GGMLType.Q4_0, out, w, x, 0, xq, xd, n, rows, t, 0, rows, 0);
    else {
      k.packQuads(GGMLType.Q4_0, xt, xq, xd, n, t);
      k.matmul(GGMLType.Q4_0 | QUADS_FLAG, out, w, x, 0, xt, 0, n, rows, t, 0, rows, scratch);
    }
    for (let j = 0; j < t; j++) {
      for (let r = 0; r < rows; r++) {
        let want = 0;
        for (let i = 0; i < n; i++) {
          const byte = u8[w + r * rb + Math.floor(i / 32) * 18 + 2 + (i % 16)]!;
          want += (((i % 32) < 16 ? byte & 15 : byte >> 4) - 8) * f32[x / 4 + j * n + i]!;
        }
        if (f32[out / 4 + j * rows + r] !== want) return false;
      }
    }
  }
  return true;
}

/** The default variant: 'relaxed' when relaxedSimdAvailable(), else 'simd128'. */
export function defaultKernelVariant(): KernelVariant {
  return relaxedSimdAvailable() ? 'relaxed' : 'simd128';
}

/**
 * The compiled module of `variant` (default: defaultKernelVariant(); compiled once per process).
 * Throws a clear error when it was not built or (relaxed) cannot run here.
 */
export function kernelModule(variant: KernelVariant = defaultKernelVariant()): WasmModule {
  const hit = cached.get(variant);
  if (hit) return hit;
  const path = variant === 'relaxed' ? WASM_RELAXED_PATH : WASM_PATH;
  if (!existsSync(path)) {
    throw new Error(`WebAssembly kernels are not built: ${path} is missing (run \`npm run build\` or \`node scripts/build-wasm.mjs\`)`);
  }
  if (variant === 'relaxed' && !relaxedSimdAvailable()) throw new UnsupportedError('this runtime cannot compile the relaxed-SIMD kernels (or TOKENLOOP_WASM_RELAXED=0)');
  optimizingTierUpFront();
  const m = new Wasm.Module(readFileSync(path));
  cached.set(variant, m);
  return m;
}

/** Instantiate the kernels of `variant` over `memory` (the shared heap memory). */
export function instantiateKernels(memory: WasmMemory, variant: KernelVariant = defaultKernelVariant()): KernelExports {
  const inst = new Wasm.Instance(kernelModule(variant), { env: { memory } });
  return inst.exports as unknown as KernelExports;
}
