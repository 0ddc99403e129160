// The row-interleaved weight layout of rows4.ts: each group of four rows stored chunk by chunk.
// interleaveRows rearranges a matrix in place once (at model load); gatherRow copies one row of a
// group back into GGUF order (for the prefill kernels, which read one row against many tokens).
// Inside a grouped f16 (or bf16) chunk the halves are also paired: each 8 halves h0..h7 are stored as
// h0 h4 h1 h5 h2 h6 h3 h7, so 32-bit lane j holds h_j (low) and h_{j+4} (high) and the decode
// kernel widens each with one instruction and a mask (rows4.ts rows4Half, rows4BF16) instead of a
// load-and-extend plus a shift per four values. Every half keeps its encoding; only the order changes.
// A grouped Q4_0 or Q8_0 block is transposed as well (4·cb bytes: the four rows' f16 scales, then
// vectors whose 32-bit lane j holds quant bytes 4k..4k+3 of row j: four for Q4_0, eight for Q8_0),
// so that the decode kernels (rows4.ts rows4Q4_0, rows4Q8_0) keep each row in its own lane and
// load the four scales at once. In the relaxed build a grouped Q4_K super-block is transposed the
// same way (the four rows' 16-byte headers, then 32 vectors of four rows' quant words: rows4Q4KT).
// Every scale and quant byte keeps its encoding. In the relaxed build a Q6_K matrix is packed
// instead, row by row without groups: each super-block's quant bits are rearranged in place so
// that the decode kernel and the prefill panels take the 6-bit values out with fewer operations
// (q8.ts q6Pack; the scales and d keep their bytes).
// Wide f32 matrices (rows of BAND_MIN_COLS values or more: more than 1024) go one step further: each band of
// eight groups (32 rows) is stored column block by column block (BAND_COLS values), and inside a
// block group by group, each group's chunks in order. A decode step then streams the band once,
// front to back, and uses each 2 KiB block of the activations for eight groups in a row (rows4.ts
// rows4F32Run continues each row's sums from block to block, so the bits are rows4F32's). With
// whole rows (2048 values: 32 KiB of weights per group between two uses of an activation line)
// the activations fell out of the L1 cache: a matrix of 768 rows of 2048 values streamed at 21 GB/s
// on one thread where one of 2048 rows of 768 values streamed at 25 (two threads: 35 against 40);
// banded, 24.4. 110M F32 decode (its FFN down projection): 4–5% faster at one and two threads,
// the same bits. Wide f16 and bf16 matrices are banded the same way since session 21 (rows4.ts
// rows4HalfRun, rows4BF16Run; prefill converts a banded group block by block, dequantBandGroup).
// Session 13 (Zen 5, the two-sum f16 kernel) measured no gain; on the Zen 4 host, with the
// one-sum kernel, the 110M F16 down projection took 1.21–1.29× as long per byte as gate/up in the
// same decode step, banded 1.01–1.02× (one thread; two threads 1.08–1.28 → 0.99–1.08; BF16
// 1.18 → 1.08): about 4% of a one-thread F16 decode step. The rows past the last whole band are
// grouped as above. groupAt returns a group in the plain grouped order (a copy, for banded rows).
import { BF16, F16, F32, Q4_0, Q4_K, Q5_K, Q6_K, Q8_0 } from './rows';
import { q6Pack, q6Unpack } from './q8';
import { dequantGroupHalf, group4x2F32Run, rows4BF16Run, rows4F32Run, rows4HalfRun } from './rows4';

/**
 * chunkBytes of a Q6_K matrix in the relaxed build: its super-blocks are packed in place (q8.ts
 * q6Pack, which the decode kernel dotQ6Kp and the prefill panels read), row by row: no groups.
 */
export const Q6_PACKED: usize = 210;

/** Rows of an interleaved matrix kept in four-row groups (the first 4·⌊nOut/4⌋; none for packed Q6_K). */
// @ts-ignore: decorator
@inline export function groupedRows(cb: usize, nOut: i32): i32 {
  return cb != 0 && cb != Q6_PACKED ? nOut & ~3 : 0;
}

/** Copy the packed Q6_K row at src (rb bytes) to dst in GGUF order. */
export function unpackRowQ6(dst: usize, src: usize, rb: usize): void {
  for (let o: usize = 0; o < rb; o += Q6_PACKED) q6Unpack(dst + o, src + o);
}

/** Values per column block of a band, rows per band, and the row length from which f32/f16/bf16 matrices are banded. */
export const BAND_COLS: i32 = 512, BAND_ROWS: i32 = 32, BAND_MIN_COLS: i32 = 1025;

/** Rows of an interleaved matrix (rows of n values, chunks of cb bytes, nOut rows) stored in bands: 0 when it is not banded. */
export function bandRows(cb: usize, n: i32, nOut: i32): i32 {
  return (cb == 64 || cb == 32) && n >= BAND_MIN_COLS ? nOut & ~(BAND_ROWS - 1) : 0;
}

/** Values per row of rb bytes for the types that can be banded (f32: chunks of 64 bytes; f16, bf16: 32), else 0. */
// @ts-ignore: decorator
@inline export function bandValues(rb: usize, cb: usize): i32 {
  return cb == 64 ? <i32>(rb >> 2) : cb == 32 ? <i32>(rb >> 1) : 0;
}

/** log2 of the bytes per value of a banded matrix with rows of rb bytes and n values (f32: 2, f16/bf16: 1). */
// @ts-ignore: decorator
@inline function valueShift(rb: usize, n: i32): usize {
  return rb == <usize>n << 2 ? 2 : 1;
}

/**
 * Where group g's chunks of column block k start, in a banded matrix at w (rb bytes per row, n
 * values): the band's blocks come one after another, each holding its eight groups' chunks of that
 * block (all blocks but the last hold BAND_COLS values).
 */
// @ts-ignore: decorator
@inline export function bandBlock(w: usize, g: i32, k: i32, rb: usize, n: i32): usize {
  const band = w + <usize>(g >> 3) * (rb << 5), vs = valueShift(rb, n);
  const cw = min(BAND_COLS, n - k * BAND_COLS);
  return band + <usize>k * (<usize>BAND_COLS << (5 + vs)) + <usize>(g & 7) * (<usize>cw << (2 + vs));
}

/**
 * Four rows (group g of a banded matrix of `type`: F32, F16 or BF16) · x, as the decode kernel
 * computes them (rows4F32, rows4Half, rows4BF16: the same steps, block by block, the sums parked
 * in acc: 64 bytes), into out. For f16, x is the activations scaled by 2^112 (rows.ts scaleHalfX).
 */
export function bandGroup(type: i32, w: usize, g: i32, rb: usize, n: i32, x: usize, acc: usize, out: usize): void {
  const nk = (n + BAND_COLS - 1) / BAND_COLS;
  for (let k = 0; k < nk; k++) bandRun(type, w, g, k, nk, rb, n, x, acc, out);
}

/** Column block k (of nk) of banded group g · x: one run of the type's decode kernel, its sums parked at acc, reduced into out at the last block. */
// @ts-ignore: decorator
@inline function bandRun(type: i32, w: usize, g: i32, k: i32, nk: i32, rb: usize, n: i32, x: usize, acc: usize, out: usize): void {
  const c0 = k * BAND_COLS, p = bandBlock(w, g, k, rb, n), xo = x + (<usize>c0 << 2), cw = min(BAND_COLS, n - c0);
  if (type == F32) rows4F32Run(p, 64, 256, xo, cw, acc, k == 0, k == nk - 1, out);
  else if (type == F16) rows4HalfRun(p, xo, cw, acc, k == 0, k == nk - 1, out);
  else rows4BF16Run(p, xo, cw, acc, k == 0, k == nk - 1, out);
}

/**
 * Banded f16 (bf: bf16) group g as f32 at y in the plain grouped order, each chunk in element order:
 * dequantGroupHalf block by block (the prefill's conversion of an unbanded group).
 */
export function dequantBandGroup(bf: bool, w: usize, g: i32, rb: usize, n: i32, y: usize): void {
  const nk = (n + BAND_COLS - 1) / BAND_COLS;
  for (let k = 0; k < nk; k++) {
    const c0 = k * BAND_COLS;
    dequantGroupHalf(bf, bandBlock(w, g, k, rb, n), y + (<usize>c0 << 4), min(BAND_COLS, n - c0) << 2);
  }
}

/** group4x2F32 for group g of a banded f32 matrix (tokens x and x + xs), block by block: its bits. acc: 128 bytes. */
export function bandGroup4x2(w: usize, g: i32, rb: usize, n: i32, x: usize, xs: usize, acc: usize, out: usize, os: usize): void {
  const nk = (n + BAND_COLS - 1) / BAND_COLS;
  for (let k = 0; k < nk; k++) {
    const c0 = k * BAND_COLS;
    group4x2F32Run(bandBlock(w, g, k, rb, n), x + (<usize>c0 << 2), xs, min(BAND_COLS, n - c0), acc, k == 0, k == nk - 1, out, os);
  }
}

/**
 * Whole bands [b0, b1) of a banded matrix of `type` (as bandGroup) · x into out (f32 per row), in
 * storage order: block by block, the eight groups of each. acc: 512 bytes.
 */
export function bandRowsDot(type: i32, w: usize, b0: i32, b1: i32, rb: usize, n: i32, x: usize, acc: usize, out: usize): void {
  const nk = (n + BAND_COLS - 1) / BAND_COLS;
  for (let b = b0; b < b1; b++) {
    for (let k = 0; k < nk; k++) {
      for (let j = 0; j < 8; j++) bandRun(type, w, (b << 3) + j, k, nk, rb, n, x, acc + (<usize>j << 6), out + (<usize>((b << 3) + j) << 4));
    }
  }
}

/**
 * Group g (rows 4g..4g+3) of an interleaved matrix in the plain grouped order: in place, or for a
 * banded group a copy in dst (4·rb bytes).
 */
export function groupAt(dst: usize, w: usize, g: i32, rb: usize, cb: usize, n: i32, nOut: i32): usize {
  if (g * 4 >= bandRows(cb, n, nOut)) return w + <usize>g * (rb << 2);
  const nk = (n + BAND_COLS - 1) / BAND_COLS, vs = valueShift(rb, n);
  for (let k = 0; k < nk; k++) {
    const cw = min(BAND_COLS, n - k * BAND_COLS);
    memory.copy(dst + (<usize>(k * BAND_COLS) << (2 + vs)), bandBlock(w, g, k, rb, n), <usize>cw << (2 + vs));
  }
  return dst;
}

/**
 * Copy row r (any of the nOut) of an interleaved matrix into dst in GGUF order: a row of a group
 * gathered from it, a packed Q6_K row unpacked, a trailing row (past the groups) copied as it is.
 * tmp: 4·rb bytes for a banded row's group.
 */
export function gatherRowAt(dst: usize, w: usize, r: i32, rb: usize, cb: usize, n: i32, nOut: i32, tmp: usize): void {
  if (cb == Q6_PACKED) { unpackRowQ6(dst, w + <usize>r * rb, rb); return; }
  if (r >= groupedRows(cb, nOut)) { memory.copy(dst, w + <usize>r * rb, rb); return; }
  gatherRow(dst, groupAt(tmp, w, r >> 2, rb, cb, n, nOut), r & 3, rb, cb);
}


/**
 * Bytes of one interleaving chunk for `type` with rows of n values: one quant block (Q8_0: 34,
 * Q4_0: 18, Q4_K/Q5_K: one 144/176-byte super-block) or 16 values (f32: 64, f16 and bf16: 32). 0: the type or row length is not interleaved.
 */
export function chunkBytes(type: i32, n: i32): usize {
  if (type == Q8_0 && (n & 31) == 0) return 34;
  if (type == Q4_0 && (n & 31) == 0) return 18;
  if (type == Q4_K && (n & 255) == 0) return 144;
  if (type == Q5_K && (n & 255) == 0) return 176;
  if (ASC_FEATURE_RELAXED_SIMD && type == Q6_K && (n & 255) == 0) return Q6_PACKED;
  if (type == F32 && (n & 15) == 0) return 64;
  if ((type == F16 || type == BF16) && (n & 15) == 0) return 32;
  return 0;
}

/** Copy one chunk of cb bytes (a chunkBytes value) from src to dst (non-overlapping). */
// @ts-ignore: decorator
@inline function copyChunk(dst: usize, src: usize, cb: usize): void {
  if (cb == 64) {
    v128.store(dst, v128.load(src)); v128.store(dst, v128.load(src, 16), 16);
    v128.store(dst, v128.load(src, 32), 32); v128.store(dst, v128.load(src, 48), 48);
  } else if (cb == 32) {
    v128.store(dst, v128.load(src)); v128.store(dst, v128.load(src, 16), 16);
  } else if (cb == 144 || cb == 176) {
    for (let o: usize = 0; o < cb; o += 16) v128.store(dst + o, v128.load(src + o));
  } else if (cb == 34) {
    v128.store(dst, v128.load(src)); v128.store(dst, v128.load(src, 16), 16);
    store<u16>(dst, load<u16>(src, 32), 32);
  } else {
    v128.store(dst, v128.load(src)); store<u16>(dst, load<u16>(src, 16), 16);
  }
}

/**
 * Rearrange rows [0, 4·⌊nOut/4⌋) of the matrix at w (rows of rb bytes, chunks of cb) into the
 * interleaved layout, in place; the last nOut mod 4 rows stay as they are. tmp: 4·rb scratch
 * bytes, BAND_ROWS·rb for a banded matrix (interleaveTmpBytes).
 */
export function interleaveRows(w: usize, rb: usize, cb: usize, nOut: i32, tmp: usize): void {
  if (cb == Q6_PACKED) {
    // Q6_K: every row's super-blocks packed in place (q8.ts q6Pack); rows are not grouped
    const end = w + <usize>nOut * rb;
    for (let p = w; p < end; p += Q6_PACKED) q6Pack(p);
    return;
  }
  groupRows(w, rb, cb, nOut, tmp);
  const n = bandValues(rb, cb), nb = bandRows(cb, n, nOut), vs = valueShift(rb, n);
  // bands: from eight groups one after another to column blocks (see the file comment)
  for (let r = 0; r < nb; r += BAND_ROWS) {
    const base = w + <usize>r * rb, nk = (n + BAND_COLS - 1) / BAND_COLS;
    memory.copy(tmp, base, rb << 5);
    for (let k = 0; k < nk; k++) {
      const cw = min(BAND_COLS, n - k * BAND_COLS);
      for (let j = 0; j < 8; j++) memory.copy(bandBlock(w, (r >> 2) + j, k, rb, n), tmp + <usize>j * (rb << 2) + (<usize>(k * BAND_COLS) << (2 + vs)), <usize>cw << (2 + vs));
    }
  }
}

/** Scratch bytes interleaveRows needs for rows of rb bytes. */
export function interleaveTmpBytes(rb: usize, cb: usize, nOut: i32): usize {
  return bandRows(cb, bandValues(rb, cb), nOut) > 0 ? rb * <usize>BAND_ROWS : rb << 2;
}

/** interleaveRows' first step: every four rows into one group (chunk by chunk). */
function groupRows(w: usize, rb: usize, cb: usize, nOut: i32, tmp: usize): void {
  const nc = rb / cb;
  for (let g = 0; g + 4 <= nOut; g += 4) {
    const base = w + <usize>g * rb;
    memory.copy(tmp, base, rb << 2);
    if (transposed(cb)) {
      const hb = headBytes(cb);
      for (let c: usize = 0; c < nc; c++) {
        const d = base + (c << 2) * cb;
        for (let j: usize = 0; j < 4; j++) {
          const src = tmp + j * rb + c * cb;
          if (hb == 2) store<u16>(d + (j << 1), load<u16>(src));
          else v128.store(d + (j << 4), v128.load(src));
          for (let k: usize = 0; k < (cb - hb) >> 2; k++) store<u32>(d + (hb << 2) + (k << 4) + (j << 2), load<u32>(src + hb + (k << 2)));
        }
      }
      continue;
    }
    for (let c: usize = 0; c < nc; c++) {
      const d = base + (c << 2) * cb;
      copyChunk(d, tmp + c * cb, cb);
      copyChunk(d + cb, tmp + rb + c * cb, cb);
      copyChunk(d + 2 * cb, tmp + 2 * rb + c * cb, cb);
      copyChunk(d + 3 * cb, tmp + 3 * rb + c * cb, cb);
    }
    if (cb == 32) for (let o: usize = 0; o < rb << 2; o += 16) v128.store(base + o, pairHalves(v128.load(base + o)));
  }
}

/** h0..h7 → h0 h4 h1 h5 h2 h6 h3 h7 (the f16/bf16 chunk order inside a group, see above). */
// @ts-ignore: decorator
@inline function pairHalves(v: v128): v128 {
  return v128.shuffle<u16>(v, v, 0, 4, 1, 5, 2, 6, 3, 7);
}

/** The inverse of pairHalves: back to GGUF order. */
// @ts-ignore: decorator
@inline export function unpairHalves(v: v128): v128 {
  return v128.shuffle<u16>(v, v, 0, 2, 4, 6, 1, 3, 5, 7);
}

/** Copy row j (0..3) of the interleaved group starting at `group` into dst in GGUF order. */
export function gatherRow(dst: usize, group: usize, j: i32, rb: usize, cb: usize): void {
  const nc = rb / cb;
  if (transposed(cb) && cb == 144) {
    // Q4_K: the row's header, then its quant bytes 16 at a time (four lanes gathered per vector);
    // below, Q4_0 and Q8_0 (2-byte headers)
    for (let c: usize = 0; c < nc; c++) {
      const q = group + (c << 2) * cb, d = dst + c * cb;
      v128.store(d, v128.load(q + (<usize>j << 4)));
      for (let h: usize = 0; h < 8; h++) v128.store(d + 16 + (h << 4), kQuants(q, j, h >> 1, h & 1));
    }
    return;
  }
  if (transposed(cb)) {
    for (let c: usize = 0; c < nc; c++) {
      const q = group + (c << 2) * cb, d = dst + c * cb;
      store<u16>(d, load<u16>(q + (<usize>j << 1)));
      for (let k: usize = 0; k < (cb - 2) >> 2; k++) store<u32>(d + 2 + (k << 2), load<u32>(q + 8 + (k << 4) + (<usize>j << 2)));
    }
    return;
  }
  const src = group + <usize>j * cb;
  if (cb == 32) {
    for (let c: usize = 0; c < nc; c++) {
      const s = src + (c << 2) * cb, d = dst + c * cb;
      v128.store(d, unpairHalves(v128.load(s))); v128.store(d, unpairHalves(v128.load(s, 16)), 16);
    }
    return;
  }
  for (let c: usize = 0; c < nc; c++) copyChunk(dst + c * cb, src + (c << 2) * cb, cb);
}

/**
 * Whether groups of chunks of cb bytes are transposed block by block (Q4_0: 18, Q8_0: 34; Q4_K:
 * 144 in the relaxed build, whose decode kernel rows4Q4KT reads it; see above).
 */
// @ts-ignore: decorator
@inline export function transposed(cb: usize): bool {
  return cb == 18 || cb == 34 || (ASC_FEATURE_RELAXED_SIMD && cb == 144);
}

/** Bytes of a transposed block's per-row header (kept whole, rows one after another): Q4_0/Q8_0 the f16 scale, Q4_K d, dmin and the 12 scale bytes. */
// @ts-ignore: decorator
@inline export function headBytes(cb: usize): usize {
  return cb == 144 ? 16 : 2;
}

/**
 * Quant bytes 32p + 16h .. 32p + 16h + 15 of row j (GGUF order) of the transposed Q4_K
 * super-block at q (p: the pair of 32-value sub-blocks, h: which half of its 32 bytes).
 */
// @ts-ignore: decorator
@inline export function kQuants(q: usize, j: i32, p: usize, h: usize): v128 {
  const a = q + 64 + (p << 7) + (h << 6) + (<usize>j << 2);
  let v = v128.load32_zero(a);
  v = v128.load32_lane(a + 16, v, 1);
  v = v128.load32_lane(a + 32, v, 2);
  return v128.load32_lane(a + 48, v, 3);
}

/**
 * Quant bytes 16h..16h + 15 of row j (GGUF order) of the transposed block at q (see above): lane k
 * of the result is lane j of vector 4h + k.
 */
// @ts-ignore: decorator
@inline export function groupQuants(q: usize, j: i32, h: usize): v128 {
  const p = q + 8 + (h << 6) + (<usize>j << 2);
  let v = v128.load32_zero(p);
  v = v128.load32_lane(p + 16, v, 1);
  v = v128.load32_lane(p + 32, v, 2);
  return v128.load32_lane(p + 48, v, 3);
}

/** Where row r starts: its first chunk inside an interleaved group (r < n4), else its GGUF-order row. */
// @ts-ignore: decorator
@inline export function rowIn(w: usize, r: i32, rb: usize, cb: usize, n4: i32): usize {
  return r < n4 ? w + <usize>(r & ~3) * rb + <usize>(r & 3) * cb : w + <usize>r * rb;
}

/** Bytes between consecutive chunks of row r: 4·cb inside an interleaved group, else `plain`. */
// @ts-ignore: decorator
@inline export function blockStride(r: i32, cb: usize, n4: i32, plain: usize): usize {
  return r < n4 ? cb << 2 : plain;
}
