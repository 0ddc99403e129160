// Compiles the AssemblyScript kernels (src/model/kernels/wasm/assembly) to two binaries:
//  - build/tokenloop-kernels.wasm: SIMD128 only (runs on any Node 20).
//  - build/tokenloop-kernels-relaxed.wasm: SIMD128 + relaxed SIMD (f32x4.relaxed_madd → FMA,
//    i16x8.relaxed_dot_i8x16_i7x16_s for the 4-6-bit weight types over i8 activations). Same
//    sources: the kernels branch on the compile-time constant ASC_FEATURE_RELAXED_SIMD. Node 20
//    needs --experimental-wasm-relaxed-simd to compile it; src/model/kernels/wasm/module.ts sets
//    that flag at run time and falls back to the SIMD128 binary when the module does not validate
//    or its functional probe fails.
// Run by `npm run build` (and so by `npm ci` via `prepare`). Common flags:
//  - memory imported and shared (workers instantiate the same module over the same memory),
//    maximum 65536 pages = 4 GiB, the wasm32 limit on weights + activations + KV cache.
//  - runtime "stub" and no assertions: the kernels allocate nothing; the host owns the heap.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import asc from 'assemblyscript/asc';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const builds = [
  { file: 'tokenloop-kernels.wasm', features: 'simd,threads' },
  { file: 'tokenloop-kernels-relaxed.wasm', features: 'simd,threads,relaxed-simd' },
];
for (const { file, features } of builds) {
  const out = join(root, 'build', file);
  mkdirSync(dirname(out), { recursive: true });
  const { error, stderr } = await asc.main([
    join(root, 'src/model/kernels/wasm/assembly/index.ts'),
    '--outFile', out,
    '-O3', '--noAssert', '--runtime', 'stub',
    '--importMemory', '--sharedMemory', '--initialMemory', '1', '--maximumMemory', '65536',
    '--enable', features,
  ]);
  if (error) {
    console.error(stderr.toString());
    console.error(`build-wasm: ${error.message}`);
    process.exit(1);
  }
  console.log(`build-wasm: wrote ${out}`);
}

// The K-quant quantizers of `tokenloop quantize` and `synth`: a small module of its own (scalar
// f32 code; a shared memory of its own, which worker threads quantize parts of) that model
// loading never compiles.
{
  const out = join(root, 'build', 'tokenloop-quantize.wasm');
  const { error, stderr } = await asc.main([
    join(root, 'src/model/kernels/wasm/assembly/quantize.ts'),
    '--outFile', out,
    '-O3', '--noAssert', '--runtime', 'stub',
    '--importMemory', '--sharedMemory', '--initialMemory', '1', '--maximumMemory', '65536',
    '--enable', 'threads,nontrapping-f2i,bulk-memory',
  ]);
  if (error) {
    console.error(stderr.toString());
    console.error(`build-wasm: ${error.message}`);
    process.exit(1);
  }
  console.log(`build-wasm: wrote ${out}`);
}
