/**
 * Row conversions from 16-bit float formats to f32 (bfloat16: the top half of an IEEE f32).
 */
const u32 = new Uint32Array(1);
const f32 = new Float32Array(u32.buffer);

/** out[0..n) = bf16 bits src[off..off+n) as f32. */
export function bf16RowToF32(out: Float32Array, src: Uint16Array, off: number, n: number): void {
  for (let i = 0; i < n; i++) {
    u32[0] = src[off + i]! << 16;
    out[i] = f32[0]!;
  }
}
