/**
 * Locates and compiles the kernel module (build/tokenloop-kernels.wasm, produced by
 * scripts/build-wasm.mjs). The path resolves the same from src/ (tsx) and dist/ (built CLI):
 * both sit four levels below the package root.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Wasm, type WasmMemory, type WasmModule } from './wasm-api.js';

/** Absolute path of the compiled kernels. */
export const WASM_PATH = fileURLToPath(new URL('../../../../build/tokenloop-kernels.wasm', import.meta.url));

/** Exports of the kernel module (pointers are byte offsets into the shared memory). */
export interface KernelExports {
  heapBase(): number;
  rowBytes(type: number, n: number): number;
  matmul(type: number, out: number, w: number, x: number, xs: number, xq: number, xd: number, nIn: number, nOut: number, nTok: number, r0: number, r1: number, scratch: number): void;
  quantizeBlocks(xq: number, xd: number, x: number, nBlocks: number): void;
  dotRowQ(type: number, w: number, xq: number, xd: number, xs: number, n: number, fence: number): number;
  hasIntDot(type: number): number;
  scaleHalfX(y: number, x: number, n: number): number;
  blockSums(xs: number, x: number, n: number, nTok: number): void;
  dotRow(type: number, w: number, x: number, xs: number, n: number): number;
  dequantRow(type: number, w: number, y: number, n: number): void;
  rmsnorm(out: number, x: number, w: number, n: number, eps: number): void;
  softmax(x: number, n: number): void;
  swiglu(out: number, gate: number, up: number, n: number): void;
  add(out: number, a: number, b: number, n: number): void;
  gelu(out: number, x: number, n: number): void;
  rope(x: number, nHeads: number, headDim: number, ropeDim: number, pos: number, base: number, neox: number): void;
  attention(out: number, q: number, k: number, v: number, nTok: number, start: number, nHead: number, nHeadKv: number, headDim: number, scale: number, h0: number, h1: number, scores: number): void;
}

let cached: WasmModule | null = null;

/** The compiled module (compiled once per process). Throws a clear error when it was not built. */
export function kernelModule(): WasmModule {
  if (cached) return cached;
  if (!existsSync(WASM_PATH)) {
    throw new Error(`WebAssembly kernels are not built: ${WASM_PATH} is missing (run \`npm run build\` or \`node scripts/build-wasm.mjs\`)`);
  }
  cached = new Wasm.Module(readFileSync(WASM_PATH));
  return cached;
}

/** Instantiate the kernels over `memory` (the shared heap memory). */
export function instantiateKernels(memory: WasmMemory): KernelExports {
  const inst = new Wasm.Instance(kernelModule(), { env: { memory } });
  return inst.exports as unknown as KernelExports;
}
