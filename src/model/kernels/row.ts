/**
 * Read one row of a weight matrix as f32 (embedding lookup, small vectors such as norms and biases).
 */
import { UnsupportedError } from '../../errors.js';
import { F16_TABLE, GGMLType, bf16ToF32, typeName } from '../../format/dtypes.js';
import { weightTypeKernels, type Weight } from './weight.js';

/** out[outOff .. outOff+nIn) = row `row` of `w` (nIn elements per row), converted to f32. */
export function readRow(out: Float32Array, outOff: number, w: Weight, row: number, nIn: number): void {
  const base = row * nIn;
  switch (w.type) {
    case GGMLType.F32: {
      const d = w.data as Float32Array;
      out.set(d.subarray(base, base + nIn), outOff);
      return;
    }
    case GGMLType.F16: {
      const d = w.data as Uint16Array;
      for (let i = 0; i < nIn; i++) out[outOff + i] = F16_TABLE[d[base + i]!]!;
      return;
    }
    case GGMLType.BF16: {
      const d = w.data as Uint16Array;
      for (let i = 0; i < nIn; i++) out[outOff + i] = bf16ToF32(d[base + i]!);
      return;
    }
    default: {
      const k = weightTypeKernels(w.type);
      if (!k) throw new UnsupportedError(`tensor ${w.name} has type ${typeName(w.type)}, which tokenloop cannot compute with yet`);
      k.row(out, outOff, w, row, nIn);
    }
  }
}

/** A whole (small) tensor as a fresh Float32Array: norm weights, biases, rope factors. */
export function toF32(w: Weight): Float32Array {
  const n = w.dims.reduce((a, b) => a * b, 1);
  const out = new Float32Array(n);
  readRow(out, 0, w, 0, n);
  return out;
}
