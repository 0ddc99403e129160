/**
 * Decode attention over the KV cache: one query per layer against N cached positions, 110M shapes
 * (12 heads of 64, 12 layers), f32 and f16 caches, 1 and 2 threads. Reports µs per token (all
 * layers) and the cache bytes read per second. With 12 layers the caches (12 × 2 × N × 3 KiB in
 * f32) exceed the last-level cache for N ≳ 600, as in real decode, where each layer's cache has
 * been evicted by the weights streamed since the previous token; `--layers 1` keeps one layer warm
 * (the kernel's compute speed).
 * `--kv-heads N` (default 12: no grouping) gives the 12 query heads N KV heads, as grouped-query
 * models (GQA) have: the cache, and the bytes read, shrink by 12/N.
 * Run: npm run bench -- attention [--positions 200,1000] [--layers 12] [--threads 1,2] [--kv-heads 12]
 */
import { parseArgs } from 'node:util';
import { f32ToF16 } from '../src/format/dtypes.js';
import { kvLength } from '../src/kv/cache.js';
import { createWasmBackend } from '../src/model/kernels/wasm/backend.js';

const HEADS = 12, HEAD_DIM = 64;

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      positions: { type: 'string', default: '200,1000' }, layers: { type: 'string', default: '12' }, threads: { type: 'string', default: '1,2' },
      'kv-heads': { type: 'string', default: String(HEADS) },
    },
  });
  const positions = values.positions!.split(',').map(Number), layers = Number(values.layers), threadList = values.threads!.split(',').map(Number);
  const kvHeads = Number(values['kv-heads']);
  if ([...positions, layers, ...threadList, kvHeads].some((n) => !Number.isInteger(n) || n < 1)) {
    process.stderr.write('--positions, --layers, --threads and --kv-heads take positive integers\n');
    return 2;
  }
  if (HEADS % kvHeads !== 0) {
    process.stderr.write(`--kv-heads must divide the ${HEADS} query heads\n`);
    return 2;
  }
  process.stdout.write('| positions | cache | threads | µs/token | cache GB/s |\n|---|---|---|---|---|\n');
  for (const threads of threadList) {
    const be = createWasmBackend({ threads, parallelMinMacs: 0 });
    for (const nPos of positions) {
      for (const half of [false, true]) {
        const n = kvLength(nPos, kvHeads * HEAD_DIM);
        const ks: (Float32Array | Uint16Array)[] = [], vs: (Float32Array | Uint16Array)[] = [];
        for (let l = 0; l < layers; l++) {
          const k = half ? be.heap.u16Managed(n) : be.heap.f32Managed(n), v = half ? be.heap.u16Managed(n) : be.heap.f32Managed(n);
          for (let i = 0; i < n; i++) {
            const a = Math.sin(i) * 0.3, b = Math.cos(i) * 0.3;
            k[i] = half ? f32ToF16(a) : a; v[i] = half ? f32ToF16(b) : b;
          }
          ks.push(k); vs.push(v);
        }
        const q = be.heap.f32Managed(HEADS * HEAD_DIM), out = be.heap.f32Managed(HEADS * HEAD_DIM);
        for (let i = 0; i < q.length; i++) q[i] = Math.sin(i * 0.7);
        const step = () => { for (let l = 0; l < layers; l++) be.attention(out, q, ks[l]!, vs[l]!, 1, nPos - 1, HEADS, kvHeads, HEAD_DIM, 0.125); };
        for (let i = 0; i < 20; i++) step();
        const reps = Math.max(5, Math.round(20000 / nPos)), times: number[] = [];
        for (let r = 0; r < 5; r++) {
          const t0 = performance.now();
          for (let i = 0; i < reps; i++) step();
          times.push((performance.now() - t0) / reps);
        }
        const ms = times.sort((a, b) => a - b)[2]!;
        const bytes = layers * 2 * nPos * kvHeads * HEAD_DIM * (half ? 2 : 4);
        process.stdout.write(`| ${nPos} | ${half ? 'f16' : 'f32'} | ${threads} | ${(ms * 1000).toFixed(0)} | ${(bytes / ms / 1e6).toFixed(1)} |\n`);
      }
    }
    await be.close();
  }
  return 0;
}

if (process.argv[1]?.endsWith('bench/attention.ts')) process.exitCode = await main(process.argv.slice(2));
