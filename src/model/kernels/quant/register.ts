/**
 * Makes the block-quantized formats computable by the forward pass: registers the reference
 * (plain TypeScript) matmul and row reader of every format with a dequantizer here. The wasm
 * backend computes the same formats with SIMD kernels; this is the 'js' path and the fallback.
 */
import { GGMLType } from '../../../format/dtypes.js';
import { registerWeightType } from '../weight.js';
import { quantMatmulRef, quantReadRow } from './matmul-ref.js';

/** Formats registered (Q8_1/Q8_K are activation-side formats, not used for weights). */
export const REGISTERED_QUANT_TYPES = [
  GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q5_0, GGMLType.Q5_1, GGMLType.Q8_0,
  GGMLType.Q2_K, GGMLType.Q3_K, GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K,
] as const;

for (const t of REGISTERED_QUANT_TYPES) registerWeightType(t, { matmul: quantMatmulRef, row: quantReadRow });
