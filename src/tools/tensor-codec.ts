/**
 * Row conversion between f32 and the GGUF storage types the tools write (F32, F16, BF16, Q8_0,
 * Q4_0). Quantizers follow ggml's reference row quantizers (ggml-quants.c
 * `quantize_row_q8_0_ref`, `quantize_row_q4_0_ref`), with every intermediate rounded to f32 as C
 * does, so our files match llama-quantize's output for the same tensor (no importance matrix).
 * (kernels/quant/quantize.ts has quantizers for tests of the kernels; they round halves up and
 * compute in f64, which differs from ggml in about 4 of every million Q8_0 values, so the file
 * writer keeps these.)
 *
 * Block layouts (ggml-common.h): Q8_0 = f16 scale d, 32 × int8 q; x = d·q.
 * Q4_0 = f16 scale d, 16 bytes; byte j holds element j (low nibble) and element j+16 (high
 * nibble); x = d·(q − 8).
 */
import { UnsupportedError } from '../errors.js';
import { bf16ToF32, blockLayout, F16_TABLE, f32ToBf16, f32ToF16, GGMLType, typeName } from '../format/dtypes.js';

const fround = Math.fround;

/** Types whose values the tools can read as f32 and re-encode. */
export const DECODABLE_TYPES: ReadonlySet<GGMLType> = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16, GGMLType.Q8_0, GGMLType.Q4_0]);
/** Types the tools can write. */
export const ENCODABLE_TYPES: ReadonlySet<GGMLType> = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16, GGMLType.Q8_0, GGMLType.Q4_0]);

/** C's roundf: halves away from zero (Math.round sends -2.5 to -2). */
function roundf(v: number): number {
  return v < 0 ? -Math.round(-v) : Math.round(v);
}

function quantizeQ8_0(src: Float32Array, out: Uint8Array): void {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const nb = src.length / 32;
  for (let b = 0; b < nb; b++) {
    const x0 = b * 32, o = b * 34;
    let amax = 0;
    for (let j = 0; j < 32; j++) { const a = Math.abs(src[x0 + j]!); if (a > amax) amax = a; }
    const d = fround(amax / 127);
    const id = d !== 0 ? fround(1 / d) : 0;
    view.setUint16(o, f32ToF16(d), true);
    for (let j = 0; j < 32; j++) view.setInt8(o + 2 + j, roundf(fround(src[x0 + j]! * id)));
  }
}

function quantizeQ4_0(src: Float32Array, out: Uint8Array): void {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const nb = src.length / 32;
  for (let b = 0; b < nb; b++) {
    const x0 = b * 32, o = b * 18;
    // The signed value of largest magnitude (the first one on ties) maps to -8.
    let amax = 0, max = 0;
    for (let j = 0; j < 32; j++) { const v = src[x0 + j]!; if (amax < Math.abs(v)) { amax = Math.abs(v); max = v; } }
    const d = fround(max / -8);
    const id = d !== 0 ? fround(1 / d) : 0;
    view.setUint16(o, f32ToF16(d), true);
    for (let j = 0; j < 16; j++) {
      // (int8_t)(x + 8.5f) truncates; the argument is ≥ 0.5 so truncation is floor.
      const q0 = Math.min(15, Math.trunc(fround(fround(src[x0 + j]! * id) + 8.5)));
      const q1 = Math.min(15, Math.trunc(fround(fround(src[x0 + 16 + j]! * id) + 8.5)));
      out[o + 2 + j] = q0 | (q1 << 4);
    }
  }
}

/**
 * Encode f32 values (whole rows; length a multiple of the type's block size) into `type`.
 * Returns a fresh byte array.
 */
export function encodeValues(type: GGMLType, src: Float32Array): Uint8Array {
  const { blockElems, blockBytes } = blockLayout(type);
  if (src.length % blockElems !== 0) throw new RangeError(`${typeName(type)}: ${src.length} values are not a whole number of blocks of ${blockElems}`);
  const out = new Uint8Array((src.length / blockElems) * blockBytes);
  switch (type) {
    case GGMLType.F32: out.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength)); break;
    case GGMLType.F16: { const h = new Uint16Array(out.buffer); for (let i = 0; i < src.length; i++) h[i] = f32ToF16(src[i]!); break; }
    case GGMLType.BF16: { const h = new Uint16Array(out.buffer); for (let i = 0; i < src.length; i++) h[i] = f32ToBf16(src[i]!); break; }
    case GGMLType.Q8_0: quantizeQ8_0(src, out); break;
    case GGMLType.Q4_0: quantizeQ4_0(src, out); break;
    default: throw new UnsupportedError(`cannot write tensors of type ${typeName(type)} (supported: ${[...ENCODABLE_TYPES].map(typeName).join(', ')})`);
  }
  return out;
}

/** Decode `n` values of `type` from `bytes` into a fresh Float32Array. */
export function decodeValues(type: GGMLType, bytes: Uint8Array, n: number): Float32Array {
  const out = new Float32Array(n);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type) {
    case GGMLType.F32: for (let i = 0; i < n; i++) out[i] = view.getFloat32(i * 4, true); break;
    case GGMLType.F16: for (let i = 0; i < n; i++) out[i] = F16_TABLE[view.getUint16(i * 2, true)]!; break;
    case GGMLType.BF16: for (let i = 0; i < n; i++) out[i] = bf16ToF32(view.getUint16(i * 2, true)); break;
    case GGMLType.Q8_0:
      for (let b = 0; b < n / 32; b++) {
        const d = F16_TABLE[view.getUint16(b * 34, true)]!;
        for (let j = 0; j < 32; j++) out[b * 32 + j] = d * view.getInt8(b * 34 + 2 + j);
      }
      break;
    case GGMLType.Q4_0:
      for (let b = 0; b < n / 32; b++) {
        const d = F16_TABLE[view.getUint16(b * 18, true)]!;
        for (let j = 0; j < 16; j++) {
          const q = bytes[b * 18 + 2 + j]!;
          out[b * 32 + j] = d * ((q & 15) - 8);
          out[b * 32 + 16 + j] = d * ((q >> 4) - 8);
        }
      }
      break;
    default: throw new UnsupportedError(`cannot read tensors of type ${typeName(type)} as f32`);
  }
  return out;
}
