import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType, f32ToF16, typeName } from '../../src/format/dtypes.ts';
import { dequantizeRow } from '../../src/model/kernels/quant/dequantize.ts';
import { quantizeQ4_0, quantizeQ8_0, storedScale } from '../../src/model/kernels/quant/quantize.ts';
import { WASM_MATMUL_TYPES, createWasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { createRng, randF32 } from './fixtures.ts';

const be = createWasmBackend({ threads: 1 });
after(() => be.close());

const put16 = (b: Uint8Array, o: number, v: number) => { const h = f32ToF16(v); b[o] = h & 0xff; b[o + 1] = h >> 8; };

/** One hand-built block per format and the values ggml's formulas give for it, computed here. */
function vectors(): { type: GGMLType; block: Uint8Array; expected: number[] }[] {
  const out: { type: GGMLType; block: Uint8Array; expected: number[] }[] = [];
  const nib = (j: number) => (j % 16) | ((15 - (j % 16)) << 4); // low nibble j, high nibble 15 − j
  { // Q8_0: d = 0.5, q = j − 16
    const b = new Uint8Array(34); put16(b, 0, 0.5);
    const e: number[] = [];
    for (let j = 0; j < 32; j++) { b[2 + j] = (j - 16) & 0xff; e.push(0.5 * (j - 16)); }
    out.push({ type: GGMLType.Q8_0, block: b, expected: e });
  }
  for (const one of [false, true]) { // Q4_0 / Q4_1
    const b = new Uint8Array(one ? 20 : 18); put16(b, 0, 0.25); if (one) put16(b, 2, -1);
    const q = one ? 4 : 2, e = new Array<number>(32);
    for (let j = 0; j < 16; j++) {
      b[q + j] = nib(j);
      e[j] = one ? 0.25 * j - 1 : 0.25 * (j - 8);
      e[j + 16] = one ? 0.25 * (15 - j) - 1 : 0.25 * (15 - j - 8);
    }
    out.push({ type: one ? GGMLType.Q4_1 : GGMLType.Q4_0, block: b, expected: e });
  }
  for (const one of [false, true]) { // Q5_0 / Q5_1: element e's fifth bit is bit e of qh
    const b = new Uint8Array(one ? 24 : 22); put16(b, 0, 0.5); if (one) put16(b, 2, 2);
    const qh = 0xa5c3_5a3c >>> 0, ho = one ? 4 : 2, q = ho + 4, e = new Array<number>(32);
    new DataView(b.buffer).setUint32(ho, qh, true);
    for (let j = 0; j < 16; j++) {
      b[q + j] = nib(j);
      const lo = j + 16 * ((qh >>> j) & 1), hi = 15 - j + 16 * ((qh >>> (j + 16)) & 1);
      e[j] = one ? 0.5 * lo + 2 : 0.5 * (lo - 16);
      e[j + 16] = one ? 0.5 * hi + 2 : 0.5 * (hi - 16);
    }
    out.push({ type: one ? GGMLType.Q5_1 : GGMLType.Q5_0, block: b, expected: e });
  }
  for (const five of [false, true]) { // Q4_K / Q5_K: 6-bit scales/mins packed as in ggml
    const b = new Uint8Array(five ? 176 : 144); put16(b, 0, 1); put16(b, 2, 0.5);
    const sc = [1, 2, 3, 4, 33, 40, 50, 63], mn = [0, 5, 10, 20, 17, 34, 48, 60];
    for (let j = 0; j < 4; j++) {
      b[4 + j] = sc[j]! | ((sc[j + 4]! >> 4) << 6);
      b[8 + j] = mn[j]! | ((mn[j + 4]! >> 4) << 6);
      b[12 + j] = (sc[j + 4]! & 15) | ((mn[j + 4]! & 15) << 4);
    }
    const qs = five ? 48 : 16;
    for (let i = 0; i < 128; i++) b[qs + i] = (i * 7 + 3) & 0xff;
    if (five) for (let l = 0; l < 32; l++) b[16 + l] = (l * 37 + 11) & 0xff;
    const e: number[] = [];
    for (let s = 0; s < 8; s++) {
      for (let l = 0; l < 32; l++) {
        const byte = b[qs + 32 * (s >> 1) + l]!;
        let q = s % 2 === 0 ? byte & 15 : byte >> 4;
        if (five) q += 16 * ((b[16 + l]! >> s) & 1);
        e.push(1 * sc[s]! * q - 0.5 * mn[s]!);
      }
    }
    out.push({ type: five ? GGMLType.Q5_K : GGMLType.Q4_K, block: b, expected: e });
  }
  { // Q2_K: element i has 2-bit q(i), group g = i >> 4 a 4-bit scale s(g) and min m(g)
    const b = new Uint8Array(84); put16(b, 80, 0.5); put16(b, 82, 0.25);
    const q = (i: number) => (3 * i + (i >> 4)) % 4, s = (g: number) => (5 * g + 1) % 16, m = (g: number) => 15 - g;
    for (let g = 0; g < 16; g++) b[g] = s(g) | (m(g) << 4);
    // byte l of half h holds elements 128h + 32k + l at bits 2k (ggml's packing loop)
    for (let h = 0; h < 2; h++) for (let k = 0; k < 4; k++) for (let l = 0; l < 32; l++) b[16 + 32 * h + l]! |= q(128 * h + 32 * k + l) << (2 * k);
    const e: number[] = [];
    for (let i = 0; i < 256; i++) e.push(0.5 * s(i >> 4) * q(i) - 0.25 * m(i >> 4));
    out.push({ type: GGMLType.Q2_K, block: b, expected: e });
  }
  { // Q3_K: element i has 3-bit L(i) = q + 4 (q in −4..3), group g a 6-bit scale S(g) (value S − 32)
    const b = new Uint8Array(110); put16(b, 108, 0.125);
    const L = (i: number) => (i + 3 * (i >> 5) + (i >> 4)) % 8, S = (g: number) => (13 * g + 5) % 64;
    for (let g = 0; g < 16; g++) { // ggml's packing: low nibbles in bytes 0..7, two high bits per group in 8..11
      if (g < 8) b[96 + g] = S(g) & 15; else b[96 + g - 8]! |= (S(g) & 15) << 4;
      b[96 + 8 + (g % 4)]! |= (S(g) >> 4) << (2 * (g >> 2));
    }
    for (let i = 0; i < 256; i++) {
      if (L(i) > 3) b[i & 31]! |= 1 << (i >> 5); // hmask: bit i/32 of byte i%32
      b[32 + 32 * (i >> 7) + (i & 31)]! |= (L(i) & 3) << (2 * ((i >> 5) & 3));
    }
    const e: number[] = [];
    for (let i = 0; i < 256; i++) e.push(0.125 * (S(i >> 4) - 32) * (L(i) - 4));
    out.push({ type: GGMLType.Q3_K, block: b, expected: e });
  }
  { // Q6_K: element e has 6-bit q(e) = (5e) mod 64 and scale scales[e >> 4]
    const b = new Uint8Array(210); put16(b, 208, 0.125);
    const q = (e: number) => (5 * e) % 64;
    for (let s = 0; s < 16; s++) b[192 + s] = (s - 8) * 3 & 0xff;
    for (let n = 0; n < 2; n++) {
      for (let l = 0; l < 32; l++) {
        const e0 = 128 * n + l;
        b[64 * n + l] = (q(e0) & 15) | ((q(e0 + 64) & 15) << 4);
        b[64 * n + l + 32] = (q(e0 + 32) & 15) | ((q(e0 + 96) & 15) << 4);
        b[128 + 32 * n + l] = (q(e0) >> 4) | ((q(e0 + 32) >> 4) << 2) | ((q(e0 + 64) >> 4) << 4) | ((q(e0 + 96) >> 4) << 6);
      }
    }
    const e: number[] = [];
    for (let i = 0; i < 256; i++) e.push(0.125 * ((i >> 4) - 8) * 3 * (q(i) - 32));
    out.push({ type: GGMLType.Q6_K, block: b, expected: e });
  }
  { // Q8_K: f32 d = 0.75, q = j − 128
    const b = new Uint8Array(292); new DataView(b.buffer).setFloat32(0, 0.75, true);
    const e: number[] = [];
    for (let j = 0; j < 256; j++) { b[4 + j] = (j - 128) & 0xff; e.push(0.75 * (j - 128)); }
    out.push({ type: GGMLType.Q8_K, block: b, expected: e });
  }
  return out;
}

for (const { type, block, expected } of vectors()) {
  test(`${typeName(type)}: hand-built block dequantizes to the formula's values (reference${WASM_MATMUL_TYPES.has(type) ? ' and wasm' : ''})`, () => {
    const n = expected.length;
    const ref = new Float32Array(n);
    dequantizeRow(type, block, 0, ref, 0, n);
    assert.deepEqual([...ref], expected.map(Math.fround));
    if (WASM_MATMUL_TYPES.has(type)) {
      const src = be.heap.allocate(block.length); src.set(block);
      const y = be.heap.f32(n);
      be.kernels.dequantRow(type, src.byteOffset, y.byteOffset, n);
      for (let i = 0; i < n; i++) assert.ok(Math.abs(y[i]! - expected[i]!) <= 1e-6 * Math.abs(expected[i]!), `${typeName(type)}[${i}]: ${y[i]} vs ${expected[i]}`);
      // fused dot with one-hot x picks single values
      const x = be.heap.f32(n), xs = be.heap.f32(n / 32);
      for (const i of [0, 17, n - 1]) {
        x.fill(0); x[i] = 1; be.kernels.blockSums(xs.byteOffset, x.byteOffset, n, 1);
        const d = be.kernels.dotRow(type, src.byteOffset, x.byteOffset, xs.byteOffset, n);
        assert.ok(Math.abs(d - expected[i]!) <= 1e-5 * Math.abs(expected[i]!) + 1e-6, `${typeName(type)} dot one-hot ${i}: ${d} vs ${expected[i]}`);
      }
    }
  });
}

test('Q8_0 quantize → dequantize: error ≤ d/2 + 127·|d − f16(d)| per value, d = max|x|/127', () => {
  const rng = createRng(99);
  const x = randF32(rng, 32 * 50, 3);
  x[5] = 0; x.fill(0, 64, 96); // an all-zero block must give d = 0 and exact zeros
  const q = quantizeQ8_0(x);
  assert.equal(q.length, 50 * 34);
  const y = new Float32Array(x.length);
  dequantizeRow(GGMLType.Q8_0, q, 0, y, 0, x.length);
  for (let b = 0; b < 50; b++) {
    const d = storedScale(q, b * 34);
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[b * 32 + j]!));
    assert.ok(Math.abs(d - amax / 127) <= (amax / 127) * 1e-3, `block ${b} scale`);
    for (let j = 0; j < 32; j++) assert.ok(Math.abs(y[b * 32 + j]! - x[b * 32 + j]!) <= 0.5 * (amax / 127) + 127 * Math.abs(d - amax / 127) + 1e-7, `block ${b}[${j}]`);
  }
  assert.deepEqual([...y.subarray(64, 96)], new Array(32).fill(0));
});

test('Q4_0 quantize → dequantize: error ≤ |d| (the −max end clamps to 7d), the max itself is exact', () => {
  const rng = createRng(100);
  const x = randF32(rng, 32 * 50, 2);
  const q = quantizeQ4_0(x);
  assert.equal(q.length, 50 * 18);
  const y = new Float32Array(x.length);
  dequantizeRow(GGMLType.Q4_0, q, 0, y, 0, x.length);
  for (let b = 0; b < 50; b++) {
    const d = Math.abs(storedScale(q, b * 18));
    let amax = 0, at = 0;
    for (let j = 0; j < 32; j++) if (Math.abs(x[b * 32 + j]!) > amax) { amax = Math.abs(x[b * 32 + j]!); at = j; }
    assert.ok(Math.abs(d - amax / 8) <= (amax / 8) * 1e-3, `block ${b} scale`);
    assert.ok(Math.abs(y[b * 32 + at]! - x[b * 32 + at]!) <= 1e-3 * amax, `block ${b}: the largest value round-trips`);
    for (let j = 0; j < 32; j++) assert.ok(Math.abs(y[b * 32 + j]! - x[b * 32 + j]!) <= d * 1.001, `block ${b}[${j}]`);
  }
});

test('quantizers reject lengths that are not whole blocks', () => {
  assert.throws(() => quantizeQ8_0(new Float32Array(33)), /multiple of 32/);
  assert.throws(() => quantizeQ4_0(new Float32Array(20)), /multiple of 32/);
  assert.throws(() => dequantizeRow(GGMLType.Q4_K, new Uint8Array(144), 0, new Float32Array(300), 0, 300), /multiple of 256/);
});
