/**
 * Reference (plain TypeScript, scalar) dequantization of ggml block formats, one row at a time.
 * Layouts and formulas are ggml's (ggml-common.h `block_*` structs, ggml-quants.c
 * `dequantize_row_*`), all little-endian, blocks packed without padding:
 *   Q4_0  {f16 d; u8 qs[16]}                 x[j] = d·((qs[j]&15) − 8), x[j+16] = d·((qs[j]>>4) − 8)
 *   Q4_1  {f16 d, m; u8 qs[16]}              x = d·q + m (nibbles as Q4_0, no −8)
 *   Q5_0  {f16 d; u32 qh; u8 qs[16]}         fifth bit of element e is bit e of qh; x = d·(q − 16)
 *   Q5_1  {f16 d, m; u32 qh; u8 qs[16]}      x = d·q + m
 *   Q8_0  {f16 d; i8 qs[32]}                 x = d·q
 *   Q8_1  {f16 d, s; i8 qs[32]}              x = d·q (s = d·Σq is only used by dot products)
 *   Q2_K  {u8 scales[16]; u8 qs[64]; f16 d, dmin}  256 values, 16 sub-blocks of 16 with a 4-bit
 *         scale (low nibble) and min (high nibble); 2-bit quants, byte l of each 32-byte half holds
 *         element l of its four 32-value quarters (bits 0-1, 2-3, 4-5, 6-7): x = d·sc·q − dmin·m
 *   Q3_K  {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}  16 sub-blocks of 16, 6-bit scales (low
 *         4 bits in the first 8 bytes' nibbles, high 2 bits in the last 4 bytes); low 2 bits as
 *         Q2_K, the third bit of element 32k + l is bit k of hmask[l], clear meaning −4:
 *         x = d·(sc − 32)·(q − 4·(1 − h))
 *   Q4_K  {f16 d, dmin; u8 scales[12]; u8 qs[128]}  256 values, 8 sub-blocks of 32 with 6-bit
 *         scale sc and min m (get_scale_min_k4 packing): x = d·sc·q − dmin·m
 *   Q5_K  {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}  as Q4_K plus a fifth bit
 *   Q6_K  {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}  16 sub-blocks of 16: x = d·sc·(q − 32)
 *   Q8_K  {f32 d; i8 qs[256]; i16 bsums[16]}  x = d·q
 */
import { UnsupportedError } from '../../../errors.js';
import { F16_TABLE, GGMLType, blockLayout, typeName } from '../../../format/dtypes.js';

/** Block formats with a reference dequantizer here. */
export const QUANT_TYPES: ReadonlySet<GGMLType> = new Set([
  GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q5_0, GGMLType.Q5_1, GGMLType.Q8_0, GGMLType.Q8_1,
  GGMLType.Q2_K, GGMLType.Q3_K, GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K, GGMLType.Q8_K,
]);

const h = (b: Uint8Array, o: number): number => F16_TABLE[b[o]! | (b[o + 1]! << 8)]!;
const i8 = (v: number): number => (v << 24) >> 24;

/** (scale, min) of sub-block j (0..7) from the 12 packed bytes at b[o..] (ggml get_scale_min_k4). */
export function scaleMinK4(b: Uint8Array, o: number, j: number): [number, number] {
  if (j < 4) return [b[o + j]! & 63, b[o + j + 4]! & 63];
  return [(b[o + j + 4]! & 0xf) | ((b[o + j - 4]! >> 6) << 4), (b[o + j + 4]! >> 4) | ((b[o + j]! >> 6) << 4)];
}

/** The 6-bit scale of sub-block j (0..15) of a Q3_K block from its 12 packed bytes at b[o..], before the −32. */
export function scaleQ3K(b: Uint8Array, o: number, j: number): number {
  const low = j < 8 ? b[o + j]! & 15 : b[o + j - 8]! >> 4;
  return low | (((b[o + 8 + (j & 3)]! >> (2 * (j >> 2))) & 3) << 4);
}

/**
 * out[outOff .. outOff+n) = the first n values of the blocks starting at byte `off` of `src`
 * (n a multiple of the block size).
 */
export function dequantizeRow(type: GGMLType, src: Uint8Array, off: number, out: Float32Array, outOff: number, n: number): void {
  if (!QUANT_TYPES.has(type)) throw new UnsupportedError(`no dequantizer for ${typeName(type)}`);
  const { blockElems, blockBytes } = blockLayout(type);
  if (n % blockElems !== 0) throw new UnsupportedError(`${typeName(type)} rows need a multiple of ${blockElems} values, got ${n}`);
  const nb = n / blockElems;
  for (let b = 0; b < nb; b++) {
    const p = off + b * blockBytes;
    const y = outOff + b * blockElems;
    switch (type) {
      case GGMLType.Q4_0: case GGMLType.Q4_1: {
        const one = type === GGMLType.Q4_1;
        const d = h(src, p), m = one ? h(src, p + 2) : 0, q = p + (one ? 4 : 2);
        for (let j = 0; j < 16; j++) {
          const v = src[q + j]!;
          out[y + j] = one ? d * (v & 15) + m : d * ((v & 15) - 8);
          out[y + j + 16] = one ? d * (v >> 4) + m : d * ((v >> 4) - 8);
        }
        break;
      }
      case GGMLType.Q5_0: case GGMLType.Q5_1: {
        const one = type === GGMLType.Q5_1;
        const d = h(src, p), m = one ? h(src, p + 2) : 0;
        const ho = p + (one ? 4 : 2), q = ho + 4;
        const qh = (src[ho]! | (src[ho + 1]! << 8) | (src[ho + 2]! << 16) | (src[ho + 3]! << 24)) >>> 0;
        for (let j = 0; j < 16; j++) {
          const v = src[q + j]!;
          const lo = (v & 15) | (((qh >>> j) & 1) << 4);
          const hi = (v >> 4) | (((qh >>> (j + 16)) & 1) << 4);
          out[y + j] = one ? d * lo + m : d * (lo - 16);
          out[y + j + 16] = one ? d * hi + m : d * (hi - 16);
        }
        break;
      }
      case GGMLType.Q8_0: case GGMLType.Q8_1: {
        const d = h(src, p), q = p + (type === GGMLType.Q8_1 ? 4 : 2);
        for (let j = 0; j < 32; j++) out[y + j] = d * i8(src[q + j]!);
        break;
      }
      case GGMLType.Q2_K: {
        const d = h(src, p + 80), dmin = h(src, p + 82);
        for (let i = 0; i < 256; i++) {
          // element i: half i/128, quarter (i/32)%4 → bits 2·quarter of byte qs[32·half + i%32]
          const q = (src[p + 16 + 32 * (i >> 7) + (i & 31)]! >> (2 * ((i >> 5) & 3))) & 3;
          const sc = src[p + (i >> 4)]!;
          out[y + i] = d * (sc & 15) * q - dmin * (sc >> 4);
        }
        break;
      }
      case GGMLType.Q3_K: {
        const d = h(src, p + 108);
        for (let i = 0; i < 256; i++) {
          const q = (src[p + 32 + 32 * (i >> 7) + (i & 31)]! >> (2 * ((i >> 5) & 3))) & 3;
          const high = (src[p + (i & 31)]! >> (i >> 5)) & 1;
          out[y + i] = d * (scaleQ3K(src, p + 96, i >> 4) - 32) * (q - (high ? 0 : 4));
        }
        break;
      }
      case GGMLType.Q4_K: case GGMLType.Q5_K: {
        const five = type === GGMLType.Q5_K;
        const d = h(src, p), dmin = h(src, p + 2), sc = p + 4, qh = p + 16, qs = p + (five ? 48 : 16);
        for (let j = 0; j < 4; j++) {
          const [s1, m1] = scaleMinK4(src, sc, 2 * j), [s2, m2] = scaleMinK4(src, sc, 2 * j + 1);
          for (let l = 0; l < 32; l++) {
            const v = src[qs + 32 * j + l]!;
            const hb = five ? src[qh + l]! : 0;
            const qa = (v & 15) + (five && (hb >> (2 * j)) & 1 ? 16 : 0);
            const qb = (v >> 4) + (five && (hb >> (2 * j + 1)) & 1 ? 16 : 0);
            out[y + 64 * j + l] = d * s1 * qa - dmin * m1;
            out[y + 64 * j + 32 + l] = d * s2 * qb - dmin * m2;
          }
        }
        break;
      }
      case GGMLType.Q6_K: {
        const d = h(src, p + 208);
        for (let half = 0; half < 2; half++) {
          const ql = p + 64 * half, qh = p + 128 + 32 * half, sc = p + 192 + 8 * half, yy = y + 128 * half;
          for (let l = 0; l < 32; l++) {
            const is = l >> 4, H = src[qh + l]!, A = src[ql + l]!, B = src[ql + l + 32]!;
            out[yy + l] = d * i8(src[sc + is]!) * (((A & 15) | ((H & 3) << 4)) - 32);
            out[yy + l + 32] = d * i8(src[sc + is + 2]!) * (((B & 15) | (((H >> 2) & 3) << 4)) - 32);
            out[yy + l + 64] = d * i8(src[sc + is + 4]!) * (((A >> 4) | (((H >> 4) & 3) << 4)) - 32);
            out[yy + l + 96] = d * i8(src[sc + is + 6]!) * (((B >> 4) | (((H >> 6) & 3) << 4)) - 32);
          }
        }
        break;
      }
      case GGMLType.Q8_K: {
        const d = new DataView(src.buffer, src.byteOffset + p, 4).getFloat32(0, true);
        for (let j = 0; j < 256; j++) out[y + j] = d * i8(src[p + 4 + j]!);
        break;
      }
    }
  }
}

/** Bytes of one row of n values of a block type. */
export function quantRowBytes(type: GGMLType, n: number): number {
  const { blockElems, blockBytes } = blockLayout(type);
  return (n / blockElems) * blockBytes;
}
