/**
 * A weight matrix as the kernels see it: the stored element type, GGUF dims (innermost first) and a
 * typed view over the file bytes. F32 is a Float32Array view, F16/BF16 a Uint16Array view of the raw
 * bits (converted inside the kernels); nothing is expanded to f32 for the whole model.
 */
import { UnsupportedError } from '../../errors.js';
import { GGMLType, typeName } from '../../format/dtypes.js';
import type { TensorInfo } from '../../format/model-file.js';

/** A matrix {nIn, nOut} (nOut rows of nIn elements) or a vector {n}. */
export interface Weight {
  name: string;
  type: GGMLType;
  /** GGUF dims, innermost first. */
  dims: number[];
  /** F32: Float32Array; F16/BF16: Uint16Array (raw bits); other types: the raw bytes. */
  data: Float32Array | Uint16Array | Uint8Array;
}

/**
 * Kernels for a weight type beyond F32/F16/BF16 (quantized formats register here, see
 * registerWeightType). `matmul` has the contract of kernels/matmul.ts; `row` dequantizes one row.
 */
export interface WeightTypeKernels {
  matmul(out: Float32Array, w: Weight, x: Float32Array, nIn: number, nOut: number, nTokens: number): void;
  row(out: Float32Array, outOff: number, w: Weight, row: number, nIn: number): void;
}

const extraTypes = new Map<GGMLType, WeightTypeKernels>();

/** Make another tensor type computable (used by the quantized-format kernels). */
export function registerWeightType(type: GGMLType, k: WeightTypeKernels): void {
  extraTypes.set(type, k);
}

/** Kernels registered for `type`, if any. */
export function weightTypeKernels(type: GGMLType): WeightTypeKernels | undefined {
  return extraTypes.get(type);
}

/** Whether the engine can compute with tensors of this type. */
export function isComputable(type: GGMLType): boolean {
  return type === GGMLType.F32 || type === GGMLType.F16 || type === GGMLType.BF16 || extraTypes.has(type);
}

/** Wrap a file tensor as a Weight without copying (copies only if the view is misaligned). */
export function weightFromTensor(t: TensorInfo): Weight {
  const n = t.dims.reduce((a, b) => a * b, 1);
  const bytes = t.data;
  switch (t.type) {
    case GGMLType.F32: {
      const src = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
      return { name: t.name, type: t.type, dims: t.dims, data: new Float32Array(src.buffer, src.byteOffset, n) };
    }
    case GGMLType.F16:
    case GGMLType.BF16: {
      const src = bytes.byteOffset % 2 === 0 ? bytes : bytes.slice();
      return { name: t.name, type: t.type, dims: t.dims, data: new Uint16Array(src.buffer, src.byteOffset, n) };
    }
    default:
      if (!extraTypes.has(t.type)) {
        throw new UnsupportedError(`tensor ${t.name} has type ${typeName(t.type)}, which tokenloop cannot compute with yet (supported: F32, F16, BF16${extraTypes.size ? ', ' + [...extraTypes.keys()].map(typeName).join(', ') : ''})`);
      }
      return { name: t.name, type: t.type, dims: t.dims, data: bytes };
  }
}
