/**
 * GGML tensor element types: ids, block layouts and the conversions we need on the host.
 * Ids and block sizes are those of the GGUF specification (ggml.h `enum ggml_type`).
 */
export enum GGMLType {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
  I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30, TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
}

/** Elements per block and bytes per block for every known type. */
const LAYOUT: Record<number, [blockElems: number, blockBytes: number]> = {
  [GGMLType.F32]: [1, 4], [GGMLType.F16]: [1, 2], [GGMLType.BF16]: [1, 2], [GGMLType.F64]: [1, 8],
  [GGMLType.I8]: [1, 1], [GGMLType.I16]: [1, 2], [GGMLType.I32]: [1, 4], [GGMLType.I64]: [1, 8],
  [GGMLType.Q4_0]: [32, 18], [GGMLType.Q4_1]: [32, 20], [GGMLType.Q5_0]: [32, 22], [GGMLType.Q5_1]: [32, 24],
  [GGMLType.Q8_0]: [32, 34], [GGMLType.Q8_1]: [32, 36],
  [GGMLType.Q2_K]: [256, 84], [GGMLType.Q3_K]: [256, 110], [GGMLType.Q4_K]: [256, 144],
  [GGMLType.Q5_K]: [256, 176], [GGMLType.Q6_K]: [256, 210], [GGMLType.Q8_K]: [256, 292],
  [GGMLType.IQ2_XXS]: [256, 66], [GGMLType.IQ2_XS]: [256, 74], [GGMLType.IQ3_XXS]: [256, 98],
  [GGMLType.IQ1_S]: [256, 50], [GGMLType.IQ4_NL]: [32, 18], [GGMLType.IQ3_S]: [256, 110],
  [GGMLType.IQ2_S]: [256, 82], [GGMLType.IQ4_XS]: [256, 136], [GGMLType.IQ1_M]: [256, 56],
  [GGMLType.TQ1_0]: [256, 54], [GGMLType.TQ2_0]: [256, 66], [GGMLType.MXFP4]: [32, 17],
};

/**
 * Types the engine can compute with. Extended as kernels land; everything else is
 * rejected at load time with a message naming the tensor and the type.
 */
export const COMPUTE_TYPES: Set<GGMLType> = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16]);

export function typeName(t: number): string {
  return GGMLType[t] ?? `unknown type ${t}`;
}

export function isKnownType(t: number): boolean {
  return LAYOUT[t] !== undefined;
}

/** blockLayout's answers, made once (it is asked on every matmul of a decode step). */
const LAYOUTS = new Map<number, { readonly blockElems: number; readonly blockBytes: number }>();

export function blockLayout(t: GGMLType): { readonly blockElems: number; readonly blockBytes: number } {
  let o = LAYOUTS.get(t);
  if (!o) {
    const l = LAYOUT[t];
    if (!l) throw new Error(`unknown ggml type ${t}`);
    o = Object.freeze({ blockElems: l[0], blockBytes: l[1] });
    LAYOUTS.set(t, o);
  }
  return o;
}

/** Bytes needed for `n` elements of type `t` (n must be a multiple of the block size). */
export function byteSize(t: GGMLType, n: number): number {
  const { blockElems, blockBytes } = blockLayout(t);
  return Math.ceil(n / blockElems) * blockBytes;
}

// Shared scratch for bit reinterpretation.
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half (binary16) bits → number. Handles subnormals, infinities and NaN. */
export function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 5.960464477539063e-8; // 2^-24
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** Lookup table for all 65536 half values; decoding a tensor is then one load per element. */
export const F16_TABLE: Float32Array = (() => {
  const t = new Float32Array(65536);
  for (let i = 0; i < 65536; i++) t[i] = f16ToF32(i);
  return t;
})();

/** number → IEEE half bits, round to nearest even (as numpy / ggml's F32→F16). */
export function f32ToF16(v: number): number {
  f32[0] = v;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++; // may carry into the exponent: still correct
  return sign | h;
}

/** bfloat16 bits → number. */
export function bf16ToF32(b: number): number {
  u32[0] = b << 16;
  return f32[0]!;
}

/** number → bfloat16 bits, round to nearest even. */
export function f32ToBf16(v: number): number {
  f32[0] = v;
  const x = u32[0]!;
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 0x40) & 0xffff; // quiet NaN
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}
