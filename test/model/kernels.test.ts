/**
 * The plain TypeScript kernels (the reference for the WebAssembly ones), against direct formulas.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType, f32ToF16, f32ToBf16 } from '../../src/format/dtypes.js';
import { matmul } from '../../src/model/kernels/matmul.js';
import { rmsnorm, layernorm } from '../../src/model/kernels/norm.js';
import { gelu, geluF16, softmax } from '../../src/model/kernels/activations.js';
import { plainRope, ropeApply, ropeCosSin } from '../../src/model/kernels/rope.js';
import { attention } from '../../src/model/kernels/attention.js';
import { normalRng } from './synthetic.js';

const rnd = normalRng(3);
const randArr = (n: number) => Float32Array.from({ length: n }, () => rnd());

test('matmul F32/F16/BF16 equals Σ W[o][i]·x[t][i] for a batch', () => {
  const nIn = 13, nOut = 7, nT = 3;
  const w = randArr(nIn * nOut), x = randArr(nIn * nT);
  for (const type of [GGMLType.F32, GGMLType.F16, GGMLType.BF16]) {
    const bits = Uint16Array.from(w, (v) => (type === GGMLType.F16 ? f32ToF16(v) : f32ToBf16(v)));
    const data = type === GGMLType.F32 ? w : bits;
    const out = new Float32Array(nOut * nT);
    matmul(out, { name: 'w', type, dims: [nIn, nOut], data }, x, nIn, nOut, nT);
    const tol = type === GGMLType.F32 ? 1e-5 : type === GGMLType.F16 ? 1e-2 : 6e-2;
    for (let t = 0; t < nT; t++) for (let o = 0; o < nOut; o++) {
      let s = 0;
      for (let i = 0; i < nIn; i++) s += w[o * nIn + i]! * x[t * nIn + i]!;
      assert.ok(Math.abs(out[t * nOut + o]! - s) < tol, `${GGMLType[type]} [${t},${o}]`);
    }
  }
});

test('rmsnorm and layernorm', () => {
  const x = Float32Array.from([1, 2, 3, 4]), w = Float32Array.from([1, 2, 1, 0.5]), b = Float32Array.from([0, 1, 0, 0]);
  const o = new Float32Array(4);
  rmsnorm(o, 0, x, 0, w, 4, 0);
  const r = Math.sqrt(30 / 4);
  assert.ok(Math.abs(o[1]! - (2 / r) * 2) < 1e-6);
  layernorm(o, 0, x, 0, w, b, 4, 0);
  assert.ok(Math.abs(o[1]! - ((2 - 2.5) / Math.sqrt(1.25) * 2 + 1)) < 1e-6);
});

test('gelu: F16 table equals f16(gelu(f16(x))) and clamps outside ±10', () => {
  assert.equal(geluF16(-12), 0);
  assert.equal(geluF16(11), 11);
  assert.ok(Math.abs(geluF16(1) - gelu(1)) < 1e-3 && geluF16(1) !== gelu(1));
  const y = Float32Array.from([1, 2, 3]);
  softmax(y, 0, 3);
  assert.ok(Math.abs(y[2]! - Math.exp(3) / (Math.exp(1) + Math.exp(2) + Math.exp(3))) < 1e-6);
});

test('rope NORM pairs (2i, 2i+1), NEOX pairs (i, i+n/2), partial rotary leaves the tail', () => {
  const p = plainRope(4, 10000);
  const cos = new Float32Array(2), sin = new Float32Array(2);
  ropeCosSin(cos, sin, 0, 3, p);
  const th1 = 3 * Math.pow(10000, -2 / 4);
  const x = Float32Array.from([1, 2, 3, 4, 5, 6]);
  ropeApply(x, 0, 1, 6, 4, cos, sin, 0, false);
  assert.ok(Math.abs(x[2]! - (3 * Math.cos(th1) - 4 * Math.sin(th1))) < 1e-6);
  assert.deepEqual([x[4], x[5]], [5, 6]);
  const y = Float32Array.from([1, 2, 3, 4, 5, 6]);
  ropeApply(y, 0, 1, 6, 4, cos, sin, 0, true);
  assert.ok(Math.abs(y[1]! - (2 * Math.cos(th1) - 4 * Math.sin(th1))) < 1e-6);
  assert.ok(Math.abs(y[3]! - (2 * Math.sin(th1) + 4 * Math.cos(th1))) < 1e-6);
});

test('attention: a window of 1 returns the own value; soft-cap bounds the scores', () => {
  const hd = 2, n = 3;
  const q = randArr(n * hd), k = randArr(n * hd), v = randArr(n * hd);
  const out = new Float32Array(n * hd), sc = new Float32Array(n);
  attention(out, q, k, v, 0, n, { nHead: 1, nHeadKv: 1, headDim: hd, scale: 1, window: 1, softcap: 0 }, sc);
  for (let i = 0; i < n * hd; i++) assert.ok(Math.abs(out[i]! - v[i]!) < 1e-6);
  // With a tiny cap every score is ~0, so the output is the mean of the visible values.
  attention(out, q, k, v, 0, n, { nHead: 1, nHeadKv: 1, headDim: hd, scale: 1, window: 0, softcap: 1e-6 }, sc);
  assert.ok(Math.abs(out[2 * hd]! - (v[0]! + v[2]! + v[4]!) / 3) < 1e-5);
});
