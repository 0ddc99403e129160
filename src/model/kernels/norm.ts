/**
 * Normalisations over `n` contiguous values at an offset (one token, or one head).
 * RMSNorm (Zhang & Sennrich 2019): x / sqrt(mean(x²) + eps) ⊙ w.
 * LayerNorm (Ba et al. 2016): (x − mean) / sqrt(var + eps) ⊙ w + b, population variance.
 */

/** out[oOff..] = RMSNorm(x[xOff..]; w) over n values; `w` may be null (no scale). In-place safe. */
export function rmsnorm(out: Float32Array, oOff: number, x: Float32Array, xOff: number, w: Float32Array | null, n: number, eps: number): void {
  let ss = 0;
  for (let i = 0; i < n; i++) { const v = x[xOff + i]!; ss += v * v; }
  const scale = 1 / Math.sqrt(ss / n + eps);
  if (w) for (let i = 0; i < n; i++) out[oOff + i] = x[xOff + i]! * scale * w[i]!;
  else for (let i = 0; i < n; i++) out[oOff + i] = x[xOff + i]! * scale;
}

/** out[oOff..] = LayerNorm(x[xOff..]; w, b) over n values; w and b may be null. In-place safe. */
export function layernorm(out: Float32Array, oOff: number, x: Float32Array, xOff: number, w: Float32Array | null, b: Float32Array | null, n: number, eps: number): void {
  let mean = 0;
  for (let i = 0; i < n; i++) mean += x[xOff + i]!;
  mean /= n;
  let v = 0;
  for (let i = 0; i < n; i++) { const d = x[xOff + i]! - mean; v += d * d; }
  const scale = 1 / Math.sqrt(v / n + eps);
  for (let i = 0; i < n; i++) {
    let y = (x[xOff + i]! - mean) * scale;
    if (w) y *= w[i]!;
    if (b) y += b[i]!;
    out[oOff + i] = y;
  }
}
