// Compiles the AssemblyScript kernels (src/model/kernels/wasm/assembly) to build/tokenloop-kernels.wasm.
// Run by `npm run build` (and so by `npm ci` via `prepare`). Flags:
//  - SIMD128 on; relaxed-simd off (Node 20 does not enable it by default), so no FMA instructions.
//  - memory imported and shared (workers instantiate the same module over the same memory),
//    maximum 65536 pages = 4 GiB, the wasm32 limit on weights + activations + KV cache.
//  - runtime "stub" and no assertions: the kernels allocate nothing; the host owns the heap.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import asc from 'assemblyscript/asc';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'build', 'tokenloop-kernels.wasm');
mkdirSync(dirname(out), { recursive: true });
const { error, stderr } = await asc.main([
  join(root, 'src/model/kernels/wasm/assembly/index.ts'),
  '--outFile', out,
  '-O3', '--noAssert', '--runtime', 'stub',
  '--importMemory', '--sharedMemory', '--initialMemory', '1', '--maximumMemory', '65536',
  '--enable', 'simd,threads',
]);
if (error) {
  console.error(stderr.toString());
  console.error(`build-wasm: ${error.message}`);
  process.exit(1);
}
console.log(`build-wasm: wrote ${out}`);
