/**
 * Row conversion between f32 and the GGUF storage types the tools write (F32, F16, BF16, Q8_0,
 * Q4_0, Q4_K, Q6_K). The block codecs are the engine's own (kernels/quant): quantizers bit-exact with ggml's
 * reference row quantizers, so our files match llama-quantize's output for the same tensor (no
 * importance matrix; the K-quants through their WebAssembly build, quantize-k-wasm.ts), and the
 * kernels' reference dequantizer.
 *
 * Block layouts (ggml-common.h): Q8_0 = f16 scale d, 32 × int8 q; x = d·q.
 * Q4_0 = f16 scale d, 16 bytes; byte j holds element j (low nibble) and element j+16 (high
 * nibble); x = d·(q − 8).
 */
import { endianness } from 'node:os';
import { UnsupportedError } from '../errors.js';
import { bf16ToF32, blockLayout, F16_TABLE, f32ToBf16, f32ToF16, GGMLType, typeName } from '../format/dtypes.js';
import { dequantizeRow } from '../model/kernels/quant/dequantize.js';
import { quantizeQ4_0, quantizeQ5_0, quantizeQ8_0 } from '../model/kernels/quant/quantize.js';
import { quantizeQ4_KFast, quantizeQ6_KFast } from '../model/kernels/quant/quantize-k-wasm.js';

const LITTLE_ENDIAN = endianness() === 'LE';

/** Types whose values the tools can read as f32 and re-encode. */
export const DECODABLE_TYPES: ReadonlySet<GGMLType> = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16, GGMLType.Q8_0, GGMLType.Q4_0, GGMLType.Q5_0, GGMLType.Q4_K, GGMLType.Q6_K]);
/** Types the tools can write (Q5_0 only as the fallback of Q4_K, as llama.cpp does). */
export const ENCODABLE_TYPES: ReadonlySet<GGMLType> = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16, GGMLType.Q8_0, GGMLType.Q4_0, GGMLType.Q5_0, GGMLType.Q4_K, GGMLType.Q6_K]);

/**
 * Encode f32 values (whole rows; length a multiple of the type's block size) into `type`.
 * Returns a fresh byte array.
 */
export function encodeValues(type: GGMLType, src: Float32Array): Uint8Array {
  const { blockElems, blockBytes } = blockLayout(type);
  if (src.length % blockElems !== 0) throw new RangeError(`${typeName(type)}: ${src.length} values are not a whole number of blocks of ${blockElems}`);
  if (type === GGMLType.Q8_0) return quantizeQ8_0(src);
  if (type === GGMLType.Q4_0) return quantizeQ4_0(src);
  if (type === GGMLType.Q5_0) return quantizeQ5_0(src);
  if (type === GGMLType.Q4_K) return quantizeQ4_KFast(src);
  if (type === GGMLType.Q6_K) return quantizeQ6_KFast(src);
  const out = new Uint8Array((src.length / blockElems) * blockBytes);
  switch (type) {
    case GGMLType.F32: out.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength)); break;
    case GGMLType.F16: { const h = new Uint16Array(out.buffer); for (let i = 0; i < src.length; i++) h[i] = f32ToF16(src[i]!); break; }
    case GGMLType.BF16: { const h = new Uint16Array(out.buffer); for (let i = 0; i < src.length; i++) h[i] = f32ToBf16(src[i]!); break; }
    default: throw new UnsupportedError(`cannot write tensors of type ${typeName(type)} (supported: ${[...ENCODABLE_TYPES].map(typeName).join(', ')})`);
  }
  return out;
}

/** Decode `n` values of `type` from `bytes` into a fresh Float32Array. */
export function decodeValues(type: GGMLType, bytes: Uint8Array, n: number): Float32Array {
  // a little-endian host reads aligned f32/f16 through typed views (a DataView read per value was
  // a tenth of a 110M F32 → Q4_K quantize)
  const aligned = LITTLE_ENDIAN && bytes.byteOffset % 4 === 0;
  if (type === GGMLType.F32 && aligned) return new Float32Array(bytes.buffer, bytes.byteOffset, n).slice();
  const out = new Float32Array(n);
  if (type === GGMLType.F16 && aligned) {
    const h = new Uint16Array(bytes.buffer, bytes.byteOffset, n);
    for (let i = 0; i < n; i++) out[i] = F16_TABLE[h[i]!]!;
    return out;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type) {
    case GGMLType.F32: for (let i = 0; i < n; i++) out[i] = view.getFloat32(i * 4, true); break;
    case GGMLType.F16: for (let i = 0; i < n; i++) out[i] = F16_TABLE[view.getUint16(i * 2, true)]!; break;
    case GGMLType.BF16: for (let i = 0; i < n; i++) out[i] = bf16ToF32(view.getUint16(i * 2, true)); break;
    case GGMLType.Q8_0:
    case GGMLType.Q4_0:
    case GGMLType.Q5_0:
    case GGMLType.Q4_K:
    case GGMLType.Q6_K: dequantizeRow(type, bytes, 0, out, 0, n); break;
    default: throw new UnsupportedError(`cannot read tensors of type ${typeName(type)} as f32`);
  }
  return out;
}
