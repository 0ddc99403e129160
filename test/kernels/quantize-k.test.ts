import { createHash } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { F16_TABLE, GGMLType } from '../../src/format/dtypes.ts';
import { dequantizeRow } from '../../src/model/kernels/quant/dequantize.ts';
import { quantizeQ4_K, quantizeQ6_K } from '../../src/model/kernels/quant/quantize-k.ts';
import { QUANTIZE_WASM_PATH, quantizeQ4_KFast, quantizeQ6_KFast, wasmQuantizerAvailable } from '../../src/model/kernels/quant/quantize-k-wasm.ts';
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

// ggml parity and the WebAssembly build (quantize-k-wasm.ts, what `quantize` and `synth` use).

/**
 * The inputs the ggml hashes below were made from: an LCG (s = s·1103515245 + 12345 mod 2^32,
 * u = s / 2^32), mode 0: (u − 0.5)·(3 every 7th value, else 1); mode 1: multiples of 1/16 in
 * [−2, 2) (many exact ties), every 7th super-block all zero, every 5th positive only.
 */
function lcgInput(n: number, mode: 0 | 1): Float32Array {
  const x = new Float32Array(n);
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const u = s / 4294967296;
    if (mode === 0) x[i] = (u - 0.5) * (i % 7 === 0 ? 3 : 1);
    else {
      const b = Math.floor(i / 256);
      let v = (Math.trunc(u * 64) - 32) / 16;
      if (b % 7 === 0) v = 0; else if (b % 5 === 0) v = Math.abs(v);
      x[i] = v;
    }
  }
  return x;
}

/**
 * SHA-256 of ggml's quantize_row_q4_K_ref / quantize_row_q6_K_ref output for lcgInput(65536, mode):
 * ggml-quants.c of the llama.cpp release node-llama-cpp 3.21.1 bundles, compiled with gcc -O2
 * -ffp-contract=off and run on these inputs.
 */
const GGML_SHA256: Record<'Q4_K' | 'Q6_K', [string, string]> = {
  Q4_K: ['ef80975120001ef3265147491ec5b62e0b72daafba27d956ceeda17f0fe5e88e', 'b5e96b40348c20df762793db14238011beb84450142304eae9912d66cf3687a7'],
  Q6_K: ['6a21096e7c38e3d731ad9ed89045a245a34b6aaa8a5a1e72e64a8ce2c0a9bb08', '5c8acf821e1384812bd5f2a980177e612fbe4f8b501527f50035a7d0963ed1f7'],
};

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

// (65536 values are 256 super-blocks: on a machine with several cores the WebAssembly build shares
// them with its worker threads, so this covers the split as well)
test('K-quants: the TypeScript reference and the WebAssembly build write exactly ggml\'s bytes', () => {
  assert.ok(wasmQuantizerAvailable(), `the WebAssembly quantizers are not in use (${QUANTIZE_WASM_PATH} missing or not instantiable)`);
  for (const mode of [0, 1] as const) {
    const x = lcgInput(65536, mode);
    assert.equal(sha256(quantizeQ4_K(x)), GGML_SHA256.Q4_K[mode], `Q4_K reference, mode ${mode}`);
    assert.equal(sha256(quantizeQ4_KFast(x)), GGML_SHA256.Q4_K[mode], `Q4_K wasm, mode ${mode}`);
    assert.equal(sha256(quantizeQ6_K(x)), GGML_SHA256.Q6_K[mode], `Q6_K reference, mode ${mode}`);
    assert.equal(sha256(quantizeQ6_KFast(x)), GGML_SHA256.Q6_K[mode], `Q6_K wasm, mode ${mode}`);
  }
});

test('K-quants: the WebAssembly build equals the reference on awkward inputs (constant, one-signed, tiny, huge, zero sub-blocks)', () => {
  const n = 256 * 12;
  const x = sample(7, n);
  const sb = (b: number, j: number, len: number, v: (i: number) => number) => { for (let i = 0; i < len; i++) x[256 * b + j + i] = v(i); };
  sb(0, 0, 256, () => 0.25); // one value everywhere (max = min per sub-block)
  sb(1, 0, 256, (i) => 1 + (i % 13) / 7); // positive only (min > 0)
  sb(2, 0, 256, (i) => -1 - (i % 11) / 5); // negative only
  sb(3, 0, 256, (i) => (i % 9) * 1e-41); // subnormal
  sb(4, 0, 256, (i) => ((i % 17) - 8) * 3e4); // large
  sb(5, 32, 32, () => 0); sb(5, 128, 16, () => 0); // zero sub-blocks inside a block
  sb(6, 0, 256, (i) => (i % 2 ? 1 : -1) * (i % 31) / 8); // grid values: ties
  sb(7, 0, 256, () => 0); // all zero
  sb(8, 0, 256, (i) => (i === 77 ? 5 : 0.001 * (i % 5))); // one outlier
  assert.deepEqual(quantizeQ4_KFast(x), quantizeQ4_K(x), 'Q4_K awkward blocks');
  assert.deepEqual(quantizeQ6_KFast(x), quantizeQ6_K(x), 'Q6_K awkward blocks');
  for (let i = 0; i < 1000; i++) {
    const len = 256 * (1 + (i % 3));
    const r = sample(100 + i, len);
    assert.deepEqual(quantizeQ4_KFast(r), quantizeQ4_K(r), `Q4_K random input ${i}`);
    assert.deepEqual(quantizeQ6_KFast(r), quantizeQ6_K(r), `Q6_K random input ${i}`);
  }
  assert.throws(() => quantizeQ4_KFast(new Float32Array(300)), /multiple of 256/);
});

test('K-quants: an input longer than one pass of the WebAssembly memory (2^24 values) is quantized piece by piece, the same bytes', () => {
  const n = (1 << 24) + 512;
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = Math.sin(i * 0.37) * (1 + (i >> 8) % 5);
  const whole = quantizeQ6_KFast(x);
  assert.equal(whole.length, (n / 256) * 210);
  const head = quantizeQ6_KFast(x.subarray(0, 1 << 24)), tail = quantizeQ6_KFast(x.subarray(1 << 24));
  assert.ok(Buffer.from(whole.subarray(0, head.length)).equals(head), 'first piece');
  assert.ok(Buffer.from(whole.subarray(head.length)).equals(tail), 'second piece');
  assert.deepEqual(tail, quantizeQ6_K(x.subarray(1 << 24)), 'the reference agrees on the tail');
});
