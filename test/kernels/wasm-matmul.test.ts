import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType, typeName } from '../../src/format/dtypes.ts';
import { InvalidOptionError } from '../../src/errors.ts';
import { createWasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { REL_TOL, assertPrefillEqualsDecode, createRng, int8Bound, randF32, randWeight, refMatmul, weightToF32 } from './fixtures.ts';

// Every matmul is forced through the pool (parallelMinMacs 0) in the 2-thread backends.
// Block-quantized types go through the int8-activation path by default; `exact*` dequantize to f32.
const one = createWasmBackend({ threads: 1 });
const two = createWasmBackend({ threads: 2, parallelMinMacs: 0 });
const exactOne = createWasmBackend({ threads: 1, int8Activations: false });
const exactTwo = createWasmBackend({ threads: 2, parallelMinMacs: 0, int8Activations: false });
after(async () => { await one.close(); await two.close(); await exactOne.close(); await exactTwo.close(); });

/** Types whose default wasm matmul quantizes the activations to int8 blocks. */
const INT8 = new Set([GGMLType.Q8_0, GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q5_0, GGMLType.Q5_1, GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K]);
// Q2_K and Q3_K have int8 (decode) kernels in the relaxed-SIMD build only (the SIMD128 build keeps them on the f32 path)
for (const t of [GGMLType.Q2_K, GGMLType.Q3_K]) if (one.kernels.hasIntDot(t)) INT8.add(t);

const CASES: [GGMLType, number[]][] = [
  // 64, 256: multiples of 16 take the 4-token prefill kernel
  [GGMLType.F32, [33, 64, 100, 257]], [GGMLType.F16, [33, 100, 256, 257]], [GGMLType.BF16, [33, 64, 257]],
  [GGMLType.Q8_0, [96, 320]], [GGMLType.Q4_0, [96, 320]], [GGMLType.Q4_1, [96, 320]],
  [GGMLType.Q5_0, [96, 320]], [GGMLType.Q5_1, [96, 320]],
  [GGMLType.Q2_K, [512, 768]], [GGMLType.Q3_K, [512, 768]],
  [GGMLType.Q4_K, [512, 768]], [GGMLType.Q5_K, [512, 768]], [GGMLType.Q6_K, [512, 768]],
];

for (const [type, sizes] of CASES) {
  test(`wasm matmul ${typeName(type)} (f32 path) equals the f64 reference (1 and 2 threads, bit-identical)`, () => {
    const rng = createRng(1234 + type);
    for (const nIn of sizes) {
      for (const nOut of [1, 7, 131]) {
        for (const nTok of [1, 3, 34]) {
          if (nTok === 34 && nOut !== 7) continue; // crosses the 32-token tile once; keep the suite fast
          const w = randWeight(rng, type, nIn, nOut);
          const x = randF32(rng, nIn * nTok);
          const { y, mag } = refMatmul(weightToF32(w, nIn, nOut), x, nIn, nOut, nTok);
          const a = new Float32Array(nOut * nTok), b = new Float32Array(nOut * nTok);
          exactOne.matmul(a, w, x, nIn, nOut, nTok);
          exactTwo.matmul(b, w, x, nIn, nOut, nTok);
          for (let i = 0; i < a.length; i++) {
            const err = Math.abs(a[i]! - y[i]!);
            assert.ok(err <= REL_TOL * mag[i]! + 1e-30, `${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok} [${i}]: ${a[i]} vs ${y[i]} (err ${err}, Σ|wx| ${mag[i]})`);
          }
          assert.deepEqual(b, a, `${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok}: 2 threads differ from 1`);
        }
      }
    }
  });
}

for (const [type, sizes] of CASES.filter(([t]) => INT8.has(t))) {
  test(`wasm matmul ${typeName(type)} with int8 activations is within the activation-quantization bound of the f64 reference (1 and 2 threads, bit-identical)`, () => {
    const rng = createRng(4321 + type);
    let differs = false;
    for (const nIn of sizes) {
      for (const nOut of [1, 7, 131]) {
        for (const nTok of [1, 3, 34]) {
          if (nTok === 34 && nOut !== 7) continue;
          const w = randWeight(rng, type, nIn, nOut);
          // activations with a spread of magnitudes inside blocks (and an all-zero block)
          const x = randF32(rng, nIn * nTok);
          for (let i = 0; i < x.length; i++) if (i % 7 === 3) x[i] = x[i]! * 40;
          x.fill(0, 0, 32);
          const wf = weightToF32(w, nIn, nOut);
          const { y } = refMatmul(wf, x, nIn, nOut, nTok);
          const a = new Float32Array(nOut * nTok), b = new Float32Array(nOut * nTok), e = new Float32Array(nOut * nTok);
          one.matmul(a, w, x, nIn, nOut, nTok);
          two.matmul(b, w, x, nIn, nOut, nTok);
          exactOne.matmul(e, w, x, nIn, nOut, nTok);
          for (let t = 0; t < nTok; t++) {
            for (let o = 0; o < nOut; o++) {
              const i = t * nOut + o;
              const err = Math.abs(a[i]! - y[i]!), bound = int8Bound(wf, x, nIn, o, t);
              assert.ok(err <= bound, `${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok} [${i}]: ${a[i]} vs ${y[i]} (err ${err} > bound ${bound})`);
              if (a[i] !== e[i]) differs = true;
            }
          }
          assert.deepEqual(b, a, `${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok}: 2 threads differ from 1`);
        }
      }
    }
    assert.ok(differs, 'the int8 path was not taken (results equal the f32 path everywhere)');
  });
}

test('wasm F16 matvec: pre-scaled activations, and the fallback for |x| ≥ 2^15, match the f64 reference', () => {
  const rng = createRng(99);
  for (const nIn of [16, 33, 100, 257]) {
    const nOut = 9;
    const w = randWeight(rng, GGMLType.F16, nIn, nOut);
    const wf = weightToF32(w, nIn, nOut);
    for (const big of [false, true]) {
      const x = randF32(rng, nIn);
      if (big) x[nIn - 1] = 40000; // beyond the range the 2^112 pre-scaling allows
      const { y, mag } = refMatmul(wf, x, nIn, nOut, 1);
      const a = new Float32Array(nOut);
      one.matmul(a, w, x, nIn, nOut, 1);
      for (let i = 0; i < nOut; i++) assert.ok(Math.abs(a[i]! - y[i]!) <= REL_TOL * mag[i]!, `nIn=${nIn} big=${big} [${i}]: ${a[i]} vs ${y[i]}`);
    }
  }
});

test('wasm matmul reads weights in place when they live in the backend memory', () => {
  const rng = createRng(7);
  const nIn = 64, nOut = 5;
  const w = randWeight(rng, GGMLType.Q8_0, nIn, nOut);
  const bytes = one.heap.allocate((w.data as Uint8Array).byteLength);
  bytes.set(w.data as Uint8Array);
  const x = one.heap.f32(nIn); x.set(randF32(rng, nIn));
  const out = one.heap.f32(nOut);
  const used = one.heap.used;
  one.matmul(out, { type: GGMLType.Q8_0, data: bytes }, x, nIn, nOut, 1);
  assert.equal(one.heap.used, used, 'no staging copy was allocated');
  const wf = weightToF32(w, nIn, nOut);
  const { y } = refMatmul(wf, x, nIn, nOut, 1);
  for (let i = 0; i < nOut; i++) assert.ok(Math.abs(out[i]! - y[i]!) <= int8Bound(wf, x, nIn, i, 0));
  // mutate the weight bytes in place: the result must change (no hidden cached copy)
  bytes[2] = (bytes[2]! + 1) & 0xff;
  const before = out[0]!;
  one.matmul(out, { type: GGMLType.Q8_0, data: bytes }, x, nIn, nOut, 1);
  assert.notEqual(out[0], before);
});

test('wasm matmul rejects unsupported types and ragged block rows with typed errors', () => {
  const x = new Float32Array(64), out = new Float32Array(2);
  assert.throws(() => one.matmul(out, { type: GGMLType.IQ4_NL, data: new Uint8Array(1000) }, x, 256, 1, 1), /no matmul kernel for IQ4_NL/);
  assert.throws(() => one.matmul(out, { type: GGMLType.Q8_0, data: new Uint8Array(1000) }, x, 40, 1, 1), /multiple of 32/);
  assert.throws(() => one.matmul(out, { type: GGMLType.Q8_0, data: new Uint8Array(10) }, x, 32, 2, 1), /needs 68/);
});

for (const type of [GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K]) test(`${typeName(type)} prefill (two tokens per row in the relaxed build) gives the same bits as one token at a time`, () => {
  const rng = createRng(77 + type);
  const nIn = 512, nOut = 9, nTok = 5;
  assertPrefillEqualsDecode(one.matmul.bind(one), randWeight(rng, type, nIn, nOut), randF32(rng, nIn * nTok), nIn, nOut, nTok, typeName(type));
});

// Both kernel builds (the SIMD128 one computes the same integer sums in 16-bit lanes), quads from
// 8 tokens for every type (by default Q8_0 starts at 15, Q4_0 and Q4_K at 12; see the next test).
const quadOne = createWasmBackend({ threads: 1, quadMinTokens: 8 });
const quadTwo = createWasmBackend({ threads: 2, parallelMinMacs: 0, quadMinTokens: 8 });
const simdOne = createWasmBackend({ threads: 1, variant: 'simd128', quadMinTokens: 8 });
const simdTwo = createWasmBackend({ threads: 2, variant: 'simd128', parallelMinMacs: 0, quadMinTokens: 8 });
after(async () => { await quadOne.close(); await quadTwo.close(); await simdOne.close(); await simdTwo.close(); });

test('Q8_0/Q4_0/Q4_K/Q5_K/Q6_K prefill over quads (tokens in the vector lanes, 8+ tokens): partial quads, odd row counts, the 128-token tile edge, 1 and 2 threads bit-identical, interleaved rows the same bits', () => {
  const rng = createRng(2468);
  for (const [one, two] of [[quadOne, quadTwo], [simdOne, simdTwo]] as const) for (const type of [GGMLType.Q8_0, GGMLType.Q4_0, GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K]) {
    // 9, 11, 12, 131 (128 + 3), 81 (48 + 33): one to four tokens after the last eight, their one quad against two rows (or one)
    const shapes = type === GGMLType.Q4_K || type === GGMLType.Q5_K || type === GGMLType.Q6_K
      ? [[256, 5, 8], [512, 9, 11], [256, 3, 131], [256, 4, 15], [256, 5, 12], [512, 4, 9]] as const
      // 8192: each thread's two panels (2 × 69.6 KB for Q8_0) outgrow the 64 KB minimum scratch, and
      // 81 tokens cross the shorter tiles of long rows (48 tokens for Q8_0, 72 for relaxed Q4_0)
      // 13 and 15 tokens: five and seven after the first eight, run as one pass over two quads
      : [[64, 5, 8], [96, 9, 11], [32, 3, 13], [96, 6, 15], [160, 8, 131], [8192, 8, 81], [64, 5, 12], [32, 4, 9], [1536, 3, 10]] as const;
    for (const [nIn, nOut, nTok] of shapes) {
      const w = randWeight(rng, type, nIn, nOut);
      const wf = weightToF32(w, nIn, nOut);
      const x = randF32(rng, nIn * nTok);
      for (let i = 0; i < x.length; i++) if (i % 9 === 4) x[i] = x[i]! * 60; // ±127 after quantization
      x.fill(0, 32 * 3, 32 * 4); // an all-zero block (scale 0)
      const { y } = refMatmul(wf, x, nIn, nOut, nTok);
      const a = new Float32Array(nOut * nTok), b = new Float32Array(nOut * nTok);
      one.matmul(a, w, x, nIn, nOut, nTok);
      two.matmul(b, w, x, nIn, nOut, nTok);
      for (let t = 0; t < nTok; t++) {
        for (let o = 0; o < nOut; o++) {
          const i = t * nOut + o, err = Math.abs(a[i]! - y[i]!), bound = int8Bound(wf, x, nIn, o, t);
          assert.ok(err <= bound, `${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok} [t ${t}, row ${o}]: ${a[i]} vs ${y[i]} (err ${err} > ${bound})`);
        }
      }
      assert.deepEqual(b, a, `${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok}: 2 threads differ from 1`);
      // the same rows rearranged into interleaved groups: the panel reads them in place, same bits
      const wi = { type, name: 'w', dims: [nIn, nOut], data: (w.data as Uint8Array).slice() };
      if (one.interleave(wi)) {
        const c = new Float32Array(nOut * nTok);
        one.matmul(c, wi, x, nIn, nOut, nTok);
        assert.deepEqual(c, a, `${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok}: interleaved rows differ`);
      }
      // a token's row of results does not depend on which quad or tile it falls in
      const tail = new Float32Array(nOut * 8);
      one.matmul(tail, w, x.subarray((nTok - 8) * nIn), nIn, nOut, 8);
      assert.deepEqual(tail, a.subarray((nTok - 8) * nOut), `${typeName(type)} nTok=${nTok}: the last eight tokens alone differ`);
    }
  }
});

test('the default quad thresholds: below them a token of a Q8_0 (both builds) or Q4_0/Q4_K (relaxed build) product gets its one-token bits, from them the quad bits (8 tokens elsewhere); quadMinTokens is checked', () => {
  const rng = createRng(8642);
  const simdDefault = createWasmBackend({ threads: 1, variant: 'simd128' });
  try {
    // [default-threshold backend, its build with quads from 8 tokens]
    for (const [be, quads] of [[one, quadOne], [simdDefault, simdOne]] as const) {
      const relaxed = be.variant === 'relaxed';
      for (const [type, nIn, min] of [[GGMLType.Q8_0, 96, 15], [GGMLType.Q4_0, 96, relaxed ? 12 : 8], [GGMLType.Q4_K, 256, relaxed ? 12 : 8], [GGMLType.Q6_K, 256, 8]] as const) {
        const nOut = 6, w = randWeight(rng, type, nIn, nOut);
        for (const nTok of [min - 1, min]) {
          const x = randF32(rng, nIn * nTok);
          const a = new Float32Array(nOut * nTok), q = new Float32Array(nOut * nTok);
          be.matmul(a, w, x, nIn, nOut, nTok);
          quads.matmul(q, w, x, nIn, nOut, nTok);
          const at = `${be.variant} ${typeName(type)} ${nTok} tokens`;
          if (nTok === min) { assert.deepEqual(a, q, `${at}: the quad kernels`); continue; }
          // (SIMD128 Q4_K below 8 tokens: two-token kernels, not the decode kernel; checked elsewhere)
          if (!relaxed && type === GGMLType.Q4_K) continue;
          for (let t = 0; t < nTok; t++) {
            const d = new Float32Array(nOut);
            be.matmul(d, w, x.subarray(t * nIn, (t + 1) * nIn), nIn, nOut, 1);
            assert.deepEqual(a.subarray(t * nOut, (t + 1) * nOut), d, `${at}, token ${t}: not its one-token bits`);
          }
        }
      }
    }
  } finally {
    void simdDefault.close();
  }
  for (const bad of [0, -1, 2.5, Number.NaN]) {
    assert.throws(() => createWasmBackend({ threads: 1, quadMinTokens: bad }), (e: Error) => e instanceof InvalidOptionError && /quadMinTokens/.test(e.message), String(bad));
  }
});

test('a quad threshold of one token: one-token products take the quads whatever the weight layout (interleaved groups were read as plain blocks), in both builds', () => {
  // With quadMinTokens 1 a single token's activations are packed as a quad (panel.ts); matmul
  // must take the quad kernels for them, not the interleaved decode kernels, which read the packed
  // form as one token's blocks (results 17–31 times the int8 bound off before the fix).
  const rng = createRng(4242);
  for (const variant of ['relaxed', 'simd128'] as const) {
    const be = createWasmBackend({ threads: 1, variant, quadMinTokens: 1 });
    try {
      for (const [type, nIn] of [[GGMLType.Q8_0, 96], [GGMLType.Q4_0, 96], [GGMLType.Q4_K, 256], [GGMLType.Q5_K, 256], [GGMLType.Q6_K, 256]] as const) {
        const nOut = 9, w = randWeight(rng, type, nIn, nOut), wf = weightToF32(w, nIn, nOut);
        const wi = { type, name: 'w', dims: [nIn, nOut], data: (w.data as Uint8Array).slice() };
        const grouped = be.interleave(wi);
        const x = randF32(rng, nIn), { y } = refMatmul(wf, x, nIn, nOut, 1);
        const a = new Float32Array(nOut), p = new Float32Array(nOut);
        be.matmul(a, wi, x, nIn, nOut, 1);
        be.matmul(p, w, x, nIn, nOut, 1);
        const at = `${variant} ${typeName(type)}${grouped ? ' (interleaved)' : ''}`;
        for (let o = 0; o < nOut; o++) assert.ok(Math.abs(a[o]! - y[o]!) <= int8Bound(wf, x, nIn, o, 0), `${at} row ${o}: ${a[o]} vs ${y[o]}`);
        assert.deepEqual(a, p, `${at}: not the bits of the same quads over the rows in GGUF order`);
      }
    } finally {
      void be.close();
    }
  }
});

test('separate matmuls quantize their input each time: an array changed in place between two calls, heap-owned or not, gives the new results', () => {
  const rng = createRng(1357);
  for (const type of [GGMLType.Q8_0, GGMLType.Q4_0, GGMLType.Q4_K]) {
    const nIn = 256, nOut = 6;
    for (const nTok of [1, 9, 40]) {
      const w1 = randWeight(rng, type, nIn, nOut), w2 = randWeight(rng, type, nIn, nOut);
      const wf1 = weightToF32(w1, nIn, nOut), wf2 = weightToF32(w2, nIn, nOut);
      for (const owned of [false, true]) {
        const x = owned ? one.heap.f32(nIn * nTok) : new Float32Array(nIn * nTok);
        x.set(randF32(rng, nIn * nTok));
        // every result within the int8 bound of the f64 reference for the current contents of x
        const check = (w: typeof w1, wf: Float32Array, what: string) => {
          const o = new Float32Array(nOut * nTok);
          one.matmul(o, w, x, nIn, nOut, nTok);
          const { y } = refMatmul(wf, x, nIn, nOut, nTok);
          for (let t = 0; t < nTok; t++) {
            for (let r = 0; r < nOut; r++) {
              const i = t * nOut + r;
              assert.ok(Math.abs(o[i]! - y[i]!) <= int8Bound(wf, x, nIn, r, t), `${typeName(type)} nTok=${nTok} owned=${owned} ${what} [${i}]: ${o[i]} vs ${y[i]}`);
            }
          }
          return o;
        };
        check(w1, wf1, 'first');
        const before = check(w2, wf2, 'same input, another weight');
        x[nIn * nTok - 1] = x[nIn * nTok - 1]! + 25; // the last token's last value changes in place
        const after = check(w2, wf2, 'after an in-place change');
        assert.notDeepEqual(after, before, 'the change is seen');
      }
    }
  }
});

test('Q6_K decode as the first op of a fresh backend: its per-thread scratch (activation group sums) exists, results within the int8 bound, nothing else overwritten', async () => {
  const rng = createRng(66);
  // rows of 8192 values: 2 KiB of group sums, more than the kernels' unused first 1 KiB of memory
  const nIn = 8192, nOut = 9;
  for (const threads of [1, 2]) {
    const be = createWasmBackend({ threads, parallelMinMacs: 0 });
    try {
      const w = randWeight(rng, GGMLType.Q6_K, nIn, nOut), x = randF32(rng, nIn);
      const wf = weightToF32(w, nIn, nOut);
      const { y } = refMatmul(wf, x, nIn, nOut, 1);
      const a = new Float32Array(nOut);
      be.matmul(a, w, x, nIn, nOut, 1);
      for (let o = 0; o < nOut; o++) assert.ok(Math.abs(a[o]! - y[o]!) <= int8Bound(wf, x, nIn, o, 0), `threads=${threads} [${o}]: ${a[o]} vs ${y[o]}`);
      // the kernels' constant tables (low addresses) are intact: a Q4_0 and an f16 product still match
      for (const type of [GGMLType.Q4_0, GGMLType.F16]) {
        const w2 = randWeight(rng, type, 96, 5), x2 = randF32(rng, 96), w2f = weightToF32(w2, 96, 5);
        const { y: y2, mag } = refMatmul(w2f, x2, 96, 5, 1);
        const b = new Float32Array(5);
        be.matmul(b, w2, x2, 96, 5, 1);
        for (let o = 0; o < 5; o++) {
          const bound = type === GGMLType.Q4_0 ? int8Bound(w2f, x2, 96, o, 0) : REL_TOL * mag[o]! + 1e-30;
          assert.ok(Math.abs(b[o]! - y2[o]!) <= bound, `threads=${threads} ${typeName(type)} [${o}]: ${b[o]} vs ${y2[o]}`);
        }
      }
    } finally {
      await be.close();
    }
  }
});
