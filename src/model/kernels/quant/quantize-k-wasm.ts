/**
 * The K-quant quantizers compiled to WebAssembly (build/tokenloop-quantize.wasm, built from
 * ../wasm/assembly/quantize.ts by scripts/build-wasm.mjs): byte for byte what the TypeScript
 * reference in quantize-k.ts writes (and ggml's reference quantizers), but the candidate-scale
 * searches run as native f32 code instead of JavaScript doubles rounded with Math.fround. The
 * module has its own small memory, grown to the largest input seen; the inference kernels never
 * load it. Where it is not built, the TypeScript reference does the work.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvalidOptionError } from '../../../errors.js';
import { Wasm } from '../wasm/wasm-api.js';
import { quantizeQ4_K, quantizeQ6_K } from './quantize-k.js';

/** Absolute path of the compiled quantizers. */
export const QUANTIZE_WASM_PATH = fileURLToPath(new URL('../../../../build/tokenloop-quantize.wasm', import.meta.url));

interface QuantizeExports {
  /** Its own memory (not shared: the buffer is an ArrayBuffer). */
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  heapBase(): number;
  scratchBytes(): number;
  quantizeQ4K(x: number, out: number, n: number, scratch: number): void;
  quantizeQ6K(x: number, out: number, n: number, scratch: number): void;
}

let instance: QuantizeExports | null | undefined;

/** The compiled quantizers, or null when the module is not built (or cannot be instantiated here). */
function quantizer(): QuantizeExports | null {
  if (instance !== undefined) return instance;
  instance = null;
  if (!existsSync(QUANTIZE_WASM_PATH)) return null;
  try {
    const m = new Wasm.Module(readFileSync(QUANTIZE_WASM_PATH));
    instance = new Wasm.Instance(m, {}).exports as unknown as QuantizeExports;
  } catch {
    instance = null;
  }
  return instance;
}

/** Whether the WebAssembly quantizers are in use (else the TypeScript reference is). */
export function wasmQuantizerAvailable(): boolean {
  return quantizer() !== null;
}

/** Bytes per 256-value super-block. */
const BLOCK_BYTES = { Q4_K: 144, Q6_K: 210 } as const;

function run(type: keyof typeof BLOCK_BYTES, x: Float32Array, q: QuantizeExports): Uint8Array {
  const n = x.length;
  if (n % 256 !== 0) throw new InvalidOptionError(`K-quant quantization needs a multiple of 256 values, got ${n}`);
  const outBytes = (n / 256) * BLOCK_BYTES[type];
  const scratch = q.heapBase(), xp = scratch + q.scratchBytes(), op = xp + 4 * n;
  const need = op + outBytes;
  const have = q.memory.buffer.byteLength;
  if (need > have) q.memory.grow(Math.ceil((need - have) / 65536));
  new Float32Array(q.memory.buffer, xp, n).set(x);
  if (type === 'Q4_K') q.quantizeQ4K(xp, op, n, scratch);
  else q.quantizeQ6K(xp, op, n, scratch);
  return new Uint8Array(q.memory.buffer, op, outBytes).slice();
}

/** x → Q4_K super-blocks (144 bytes per 256 values): quantize-k.ts quantizeQ4_K's bytes. */
export function quantizeQ4_KFast(x: Float32Array): Uint8Array {
  const q = quantizer();
  return q ? run('Q4_K', x, q) : quantizeQ4_K(x);
}

/** x → Q6_K super-blocks (210 bytes per 256 values): quantize-k.ts quantizeQ6_K's bytes. */
export function quantizeQ6_KFast(x: Float32Array): Uint8Array {
  const q = quantizer();
  return q ? run('Q6_K', x, q) : quantizeQ6_K(x);
}
