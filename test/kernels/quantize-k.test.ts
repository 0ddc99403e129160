import { test } from 'node:test';
import assert from 'node:assert/strict';
import { F16_TABLE, GGMLType } from '../../src/format/dtypes.ts';
import { dequantizeRow } from '../../src/model/kernels/quant/dequantize.ts';
import { quantizeQ4_K, quantizeQ6_K } from '../../src/model/kernels/quant/quantize-k.ts';
import { createRng } from './fixtures.ts';

// The K-quant quantizers (quantize-k.ts) against the engine's dequantizer: every value decodes
// within the format's step, the super-block scales are what the stored sub-block scales need,
// the fields sit where GGUF puts them, and an all-zero super-block stays exactly zero.

/** Gaussian-ish values with a few outliers, scaled per super-block so the scales differ. */
function sample(seed: number, n: number): Float32Array {
  const rng = createRng(seed);
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const g = (rng.next() + rng.next() + rng.next() - 1.5) * 0.8;
    x[i] = (g + (rng.next() < 0.01 ? 6 * (rng.next() - 0.5) : 0)) * (1 + Math.floor(i / 256));
  }
  return x;
}

const half = (b: Uint8Array, o: number) => F16_TABLE[b[o]! | (b[o + 1]! << 8)]!;

/** 1024 sample values quantized by `quant` (4 super-blocks of `blockBytes`) and decoded back. */
function roundTrip(seed: number, quant: (x: Float32Array) => Uint8Array, type: GGMLType, blockBytes: number): { x: Float32Array; q: Uint8Array; y: Float32Array } {
  const x = sample(seed, 1024);
  const q = quant(x);
  assert.equal(q.length, 4 * blockBytes);
  const y = new Float32Array(x.length);
  dequantizeRow(type, q, 0, y, 0, x.length);
  return { x, q, y };
}

test('Q6_K: values decode within half a step of their sub-block scale; int8 scales and f16 d as stored', () => {
  const { x, q, y } = roundTrip(41, quantizeQ6_K, GGMLType.Q6_K, 210);
  let se = 0, sx = 0;
  for (let b = 0; b < 4; b++) {
    const d = half(q, b * 210 + 208);
    assert.ok(d !== 0);
    const scales = Int8Array.from(q.subarray(b * 210 + 192, b * 210 + 208));
    // the largest stored scale is ±128 → clamped: −128 when the extreme scale is the negative one
    assert.ok(scales.some((s) => Math.abs(s) >= 120), `super-block ${b}: scales ${scales}`);
    for (let j = 0; j < 16; j++) {
      const step = Math.abs(d * scales[j]!);
      for (let i = 0; i < 16; i++) {
        const k = b * 256 + 16 * j + i;
        // quants are clamped to [−32, 31]: inside that range the error is at most half a step
        const v = x[k]! / (d * scales[j]!);
        if (v > -32.5 && v < 31.5) assert.ok(Math.abs(y[k]! - x[k]!) <= step * 0.5 + 1e-6, `x[${k}] = ${x[k]} decoded ${y[k]} (step ${step})`);
        se += (y[k]! - x[k]!) ** 2; sx += x[k]! ** 2;
      }
    }
  }
  assert.ok(se / sx < 2e-3, `relative squared error ${se / sx}`);
});

test('Q4_K: values decode within half a step of their sub-block scale and min; 6-bit scales/mins packed as GGUF does', () => {
  const { x, q, y } = roundTrip(42, quantizeQ4_K, GGMLType.Q4_K, 144);
  let se = 0, sx = 0;
  for (let b = 0; b < 4; b++) {
    const o = b * 144, d = half(q, o), dmin = half(q, o + 2);
    assert.ok(d > 0 && dmin >= 0);
    for (let j = 0; j < 8; j++) {
      const sc = o + 4;
      const s6 = j < 4 ? q[sc + j]! & 63 : (q[sc + j + 4]! & 0xf) | ((q[sc + j - 4]! >> 6) << 4);
      const m6 = j < 4 ? q[sc + j + 4]! & 63 : (q[sc + j + 4]! >> 4) | ((q[sc + j]! >> 6) << 4);
      const step = d * s6, off = dmin * m6;
      for (let i = 0; i < 32; i++) {
        const k = b * 256 + 32 * j + i;
        const v = (x[k]! + off) / step;
        if (step > 0 && v > -0.5 && v < 15.5) assert.ok(Math.abs(y[k]! - x[k]!) <= step * 0.5 + 1e-5, `x[${k}] = ${x[k]} decoded ${y[k]} (step ${step})`);
        se += (y[k]! - x[k]!) ** 2; sx += x[k]! ** 2;
      }
    }
  }
  assert.ok(se / sx < 2e-2, `relative squared error ${se / sx}`);
  // the quants of super-block 0: byte l of each 32-byte group holds elements l (low) and l+32 (high)
  const d = half(q, 0), s0 = q[4]! & 63, m0 = q[8]! & 63, dmin = half(q, 2);
  assert.ok(Math.abs(d * s0 * (q[16]! & 0xf) - dmin * m0 - y[0]!) < 1e-6);
});

test('K-quants: an all-zero super-block stays all zero; lengths must be whole super-blocks', () => {
  const x = new Float32Array(512);
  x.fill(0.25, 256); // second super-block constant and positive
  for (const [quant, type, bytes] of [[quantizeQ6_K, GGMLType.Q6_K, 210], [quantizeQ4_K, GGMLType.Q4_K, 144]] as const) {
    const q = quant(x);
    assert.ok(q.subarray(0, bytes).every((v) => v === 0), `${type}: zero block`);
    const y = new Float32Array(512);
    dequantizeRow(type, q, 0, y, 0, 512);
    for (let i = 0; i < 256; i++) assert.ok(y[i] === 0, `${type}: ${y[i]}`); // ±0
    for (let i = 256; i < 512; i++) assert.ok(Math.abs(y[i]! - 0.25) < 0.25 / 30, `${type}: ${y[i]}`);
    assert.throws(() => quant(new Float32Array(100)), /multiple of 256/);
  }
});
