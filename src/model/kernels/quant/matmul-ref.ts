/**
 * Reference matmul and row read for block-quantized weights (plain TypeScript): each row is
 * dequantized into a reused f32 scratch row, then dotted with every token (double-precision sums).
 * These have the contract of WeightTypeKernels in kernels/weight.ts, for the 'js' backend.
 */
import { dequantizeRow, quantRowBytes } from './dequantize.js';
import type { GGMLType } from '../../../format/dtypes.js';

let scratch = new Float32Array(0);

/** A block-quantized matrix: nOut rows of nIn values of `type`, raw bytes. */
export interface QuantWeight { type: GGMLType; data: ArrayBufferView }

function bytesOf(w: QuantWeight): Uint8Array {
  return w.data instanceof Uint8Array ? w.data : new Uint8Array(w.data.buffer, w.data.byteOffset, w.data.byteLength);
}

/** out (nTokens × nOut) = x (nTokens × nIn) · Wᵀ. */
export function quantMatmulRef(out: Float32Array, w: QuantWeight, x: Float32Array, nIn: number, nOut: number, nTokens: number): void {
  if (scratch.length < nIn) scratch = new Float32Array(nIn);
  const row = scratch, src = bytesOf(w), rb = quantRowBytes(w.type, nIn);
  for (let o = 0; o < nOut; o++) {
    dequantizeRow(w.type, src, o * rb, row, 0, nIn);
    for (let t = 0; t < nTokens; t++) {
      let s = 0;
      const xo = t * nIn;
      for (let i = 0; i < nIn; i++) s += row[i]! * x[xo + i]!;
      out[t * nOut + o] = s;
    }
  }
}

/** out[outOff ..] = row `row` of W dequantized (embedding lookup). */
export function quantReadRow(out: Float32Array, outOff: number, w: QuantWeight, row: number, nIn: number): void {
  dequantizeRow(w.type, bytesOf(w), row * quantRowBytes(w.type, nIn), out, outOff, nIn);
}
