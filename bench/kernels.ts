/**
 * Matmul throughput per weight type on 110M-model shapes: plain TypeScript kernels vs the
 * WebAssembly backend (SIMD128 build and, where the runtime has it, the relaxed-SIMD build) with
 * 1 thread, and the default build with 2 threads. GFLOP/s counts 2·nIn·nOut per token; GB/s counts
 * the weight bytes read (the roofline for decode is memory bandwidth). Weights are interleaved as a
 * loaded model's are (WasmBackend.interleave), so the kernels measured are the ones models run.
 * Run: node --import tsx bench/kernels.ts [--quick] [--tokens N] [--types F16,Q4_0] [--shapes 2048x768,4096x1024] [--no-js]
 * (--tokens N: N tokens per matmul, the prefill kernels; default 1, decode. --shapes: nIn x nOut
 * pairs instead of the 110M ones.)
 */
import { pathToFileURL } from 'node:url';
import { createRng } from '../src/decode/rng.js';
import { GGMLType, blockLayout, f32ToBf16, f32ToF16, typeName } from '../src/format/dtypes.js';
import { matmul as jsMatmul } from '../src/model/kernels/matmul.js';
import { quantMatmulRef } from '../src/model/kernels/quant/matmul-ref.js';
import { quantizeQ4_0, quantizeQ8_0 } from '../src/model/kernels/quant/quantize.js';
import { createWasmBackend, type WasmBackend } from '../src/model/kernels/wasm/backend.js';
import { relaxedSimdAvailable } from '../src/model/kernels/wasm/module.js';

const SHAPES: [number, number][] = [[768, 768], [768, 2048], [2048, 768], [768, 32000]];
const TYPES = [GGMLType.F32, GGMLType.F16, GGMLType.BF16, GGMLType.Q8_0, GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q5_0, GGMLType.Q5_1, GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K];

interface Row { type: string; shape: string; impl: string; us: number; gflops: number; gbs: number }

function makeWeight(type: GGMLType, nIn: number, nOut: number, seed: number, be: WasmBackend): { type: GGMLType; data: ArrayBufferView; bytes: number } {
  const rng = createRng(seed);
  const n = nIn * nOut;
  let bytes: Uint8Array;
  if (type === GGMLType.F32 || type === GGMLType.F16 || type === GGMLType.BF16) {
    const el = type === GGMLType.F32 ? 4 : 2;
    bytes = be.heap.allocate(n * el);
    if (type === GGMLType.F32) { const f = new Float32Array(bytes.buffer, bytes.byteOffset, n); for (let i = 0; i < n; i++) f[i] = rng.next() - 0.5; }
    else { const h = new Uint16Array(bytes.buffer, bytes.byteOffset, n); for (let i = 0; i < n; i++) h[i] = type === GGMLType.F16 ? f32ToF16(rng.next() - 0.5) : f32ToBf16(rng.next() - 0.5); }
    const data = type === GGMLType.F32 ? new Float32Array(bytes.buffer, bytes.byteOffset, n) : new Uint16Array(bytes.buffer, bytes.byteOffset, n);
    return { type, data, bytes: bytes.byteLength };
  }
  let src: Uint8Array;
  if (type === GGMLType.Q8_0 || type === GGMLType.Q4_0) {
    const x = new Float32Array(n); for (let i = 0; i < n; i++) x[i] = rng.next() - 0.5;
    src = type === GGMLType.Q8_0 ? quantizeQ8_0(x) : quantizeQ4_0(x);
  } else {
    // other types: random blocks with small f16 scales (every bit pattern is a valid block)
    const { blockElems, blockBytes: bb } = blockLayout(type), nb = n / blockElems;
    src = new Uint8Array(nb * bb);
    for (let i = 0; i < src.length; i++) src[i] = Math.floor(rng.next() * 256);
    const scales = type === GGMLType.Q6_K ? [208] : type === GGMLType.Q5_0 ? [0] : [0, 2];
    for (let b = 0; b < nb; b++) for (const o of scales) { const h = f32ToF16(0.01); src[b * bb + o] = h & 0xff; src[b * bb + o + 1] = h >> 8; }
  }
  bytes = be.heap.allocate(src.byteLength); bytes.set(src);
  return { type, data: bytes, bytes: bytes.byteLength };
}

function time(fn: () => void, budgetMs: number): number {
  fn();
  let iters = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < budgetMs || iters < 3) { fn(); iters++; t = performance.now(); }
  return ((t - t0) / iters) * 1000;
}

/** Runs the benchmark and prints a table; returns the rows. */
export async function main(argv: string[] = process.argv.slice(2)): Promise<Row[]> {
  const quick = argv.includes('--quick');
  const arg = (name: string): string | undefined => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
  const nTok = Number(arg('--tokens') ?? 1);
  const types = arg('--types')?.split(',').map((t) => TYPES.find((x) => typeName(x) === t)).filter((t): t is GGMLType => t !== undefined) ?? TYPES;
  const shapes = arg('--shapes')?.split(',').map((s) => s.split('x').map(Number) as [number, number]) ?? SHAPES;
  for (const [nIn, nOut] of shapes) if (!(nIn > 0 && nOut > 0 && nIn % 256 === 0)) throw new Error(`--shapes: ${nIn}x${nOut} is not nIn x nOut with nIn a multiple of 256`);
  const budget = quick ? 60 : 300;
  const backends: [string, WasmBackend][] = [['wasm 1T', createWasmBackend({ threads: 1, variant: 'simd128' })]];
  if (relaxedSimdAvailable()) backends.push(['relaxed 1T', createWasmBackend({ threads: 1, variant: 'relaxed' })]);
  backends.push([`${backends.length > 1 ? 'relaxed' : 'wasm'} 2T`, createWasmBackend({ threads: 2 })]);
  const rows: Row[] = [];
  try {
    for (const type of types) {
      for (const [nIn, nOut] of shapes) {
        const flop = 2 * nIn * nOut * nTok;
        const impls: [string, () => void][] = [];
        if (!argv.includes('--no-js') && nTok === 1) {
          const w = makeWeight(type, nIn, nOut, nIn + nOut, backends[0]![1]);
          const xj = new Float32Array(nIn).fill(0.01), oj = new Float32Array(nOut);
          const js = type === GGMLType.F32 || type === GGMLType.F16 || type === GGMLType.BF16
            ? () => jsMatmul(oj, { name: 'w', type, dims: [nIn, nOut], data: w.data as Float32Array | Uint16Array }, xj, nIn, nOut, 1)
            : () => quantMatmulRef(oj, w, xj, nIn, nOut, 1);
          if (!quick || nOut <= 2048) impls.push(['js', js]);
        }
        let bytes = 0;
        for (const [name, be] of backends) {
          const w = makeWeight(type, nIn, nOut, nIn + nOut, be);
          bytes = w.bytes;
          // rearranged like a loaded model's weights (row groups of four for F32/F16/Q8_0/Q4_0)
          be.interleave({ ...w, name: 'w', dims: [nIn, nOut] });
          const x = be.heap.f32(nIn * nTok), o = be.heap.f32(nOut * nTok);
          for (let i = 0; i < x.length; i++) x[i] = Math.sin(i) * 0.5;
          impls.push([name, () => be.matmul(o, w, x, nIn, nOut, nTok)]);
        }
        for (const [impl, fn] of impls) {
          const us = time(fn, impl === 'js' ? budget / 2 : budget);
          rows.push({ type: typeName(type), shape: `${nIn}x${nOut}`, impl, us, gflops: flop / us / 1e3, gbs: bytes / us / 1e3 });
        }
      }
    }
  } finally {
    for (const [, be] of backends) await be.close();
  }
  console.log(`tokens per matmul: ${nTok}`);
  console.log('type  shape      impl        µs/matmul  GFLOP/s  GB/s(weights)');
  for (const r of rows) {
    console.log(`${r.type.padEnd(5)} ${r.shape.padEnd(10)} ${r.impl.padEnd(10)} ${r.us.toFixed(1).padStart(10)} ${r.gflops.toFixed(2).padStart(8)} ${r.gbs.toFixed(2).padStart(8)}`);
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
