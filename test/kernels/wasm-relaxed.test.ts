import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { GGMLType, typeName } from '../../src/format/dtypes.ts';
import { UnsupportedError } from '../../src/errors.ts';
import { createWasmBackend, type WasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { relaxedSimdAvailable } from '../../src/model/kernels/wasm/module.ts';
import { createRng, randF32, randWeight, refMatmul, weightToF32 } from './fixtures.ts';

// The relaxed-SIMD kernel build (FMA, 8-bit dot products) against the SIMD128 build and the f64
// reference. Node 20 runs it behind a V8 flag that module.ts sets; where the runtime lacks it the
// relaxed half is skipped loudly and only the fallback is checked.
const relaxed = relaxedSimdAvailable();
const backends: WasmBackend[] = [];
function make(opts: Parameters<typeof createWasmBackend>[0]): WasmBackend {
  const b = createWasmBackend(opts); backends.push(b); return b;
}
// quads from 8 tokens for every type (quadMinTokens; the defaults start Q8_0 at 15, Q4_0 at 12)
const simdOne = make({ threads: 1, variant: 'simd128', quadMinTokens: 8 });
const simdExact = make({ threads: 1, variant: 'simd128', int8Activations: false });
after(async () => { for (const b of backends) await b.close(); });

/** Relative to Σ|w·x| (as in wasm-matmul.test.ts): f32 accumulation of ≤ 1024 products. */
const REL_TOL = 2e-6 * 8;

test('the default kernel build is the relaxed one when the runtime supports relaxed SIMD', { skip: relaxed ? false : 'relaxed SIMD unavailable here' }, () => {
  const b = make({ threads: 1 });
  assert.equal(b.variant, 'relaxed');
  assert.equal(b.kernels.compactInt8(GGMLType.Q4_0), 1);
  assert.equal(simdOne.kernels.compactInt8(GGMLType.Q4_0), 0);
});

const F32_CASES: [GGMLType, number[]][] = [
  [GGMLType.F32, [16, 33, 48, 257]], [GGMLType.F16, [16, 33, 100, 256]], [GGMLType.BF16, [48, 257]],
  [GGMLType.Q8_0, [96]], [GGMLType.Q4_0, [160]], [GGMLType.Q4_K, [512]], [GGMLType.Q6_K, [256]],
];

for (const [type, sizes] of F32_CASES) {
  test(`relaxed build ${typeName(type)} f32 path (FMA): within the f64 reference tolerance, close to SIMD128, 1 vs 2 threads identical`, { skip: relaxed ? false : 'relaxed SIMD unavailable here' }, () => {
    const one = make({ threads: 1, variant: 'relaxed', int8Activations: false });
    const two = make({ threads: 2, variant: 'relaxed', int8Activations: false, parallelMinMacs: 0 });
    const rng = createRng(777 + type);
    for (const nIn of sizes) {
      for (const [nOut, nTok] of [[5, 1], [9, 4], [3, 7], [17, 35]] as const) {
        const w = randWeight(rng, type, nIn, nOut);
        const x = randF32(rng, nIn * nTok);
        const { y, mag } = refMatmul(weightToF32(w, nIn, nOut), x, nIn, nOut, nTok);
        const a = new Float32Array(nOut * nTok), b = new Float32Array(nOut * nTok), s = new Float32Array(nOut * nTok);
        one.matmul(a, w, x, nIn, nOut, nTok);
        two.matmul(b, w, x, nIn, nOut, nTok);
        simdExact.matmul(s, w, x, nIn, nOut, nTok);
        for (let i = 0; i < a.length; i++) {
          const at = `${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok} [${i}]`;
          assert.ok(Math.abs(a[i]! - y[i]!) <= REL_TOL * mag[i]! + 1e-30, `${at}: ${a[i]} vs ${y[i]}`);
          assert.ok(Math.abs(s[i]! - y[i]!) <= REL_TOL * mag[i]! + 1e-30, `${at} (SIMD128): ${s[i]} vs ${y[i]}`);
          assert.ok(Math.abs(a[i]! - s[i]!) <= 2 * REL_TOL * mag[i]! + 1e-30, `${at}: relaxed ${a[i]} vs SIMD128 ${s[i]}`);
        }
        assert.deepEqual(b, a, `${typeName(type)} nIn=${nIn} nTok=${nTok}: 2 threads differ from 1`);
      }
    }
  });
}

// The one-row kernels (GGUF row order, up to seven tokens) reduce the integer block sums before any
// float step: the relaxed build matches SIMD128 bit for bit. Prefill over quads (eight or more
// tokens, panel.ts) computes the same exact integer block sums in both builds (i8 relaxed dot
// products here, i16 products in SIMD128), then adds each block's scaled sum with one FMA in the
// relaxed build (3–4% faster) and a multiply and an add in SIMD128: equal within f32 rounding of
// the accumulation. One and two threads agree bit for bit in every case.
const QUAD_MIN = 8;

/** Relaxed vs SIMD128 int8 results: exact below QUAD_MIN tokens, else within rounding of Σ|w·x|. */
function assertMatchesSimd(a: Float32Array, s: Float32Array, w: Parameters<typeof weightToF32>[0], x: Float32Array, nIn: number, nOut: number, nTok: number, at: string): void {
  if (nTok < QUAD_MIN) { assert.deepEqual(a, s, `${at}: relaxed differs from SIMD128`); return; }
  const { mag } = refMatmul(weightToF32(w, nIn, nOut), x, nIn, nOut, nTok);
  let differ = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== s[i]) differ++;
    assert.ok(Math.abs(a[i]! - s[i]!) <= 2 * REL_TOL * mag[i]! + 1e-30, `${at} [${i}]: relaxed ${a[i]} vs SIMD128 ${s[i]}`);
  }
  assert.ok(differ < a.length, `${at}: every value differs, not just the rounding of some`);
}

test('relaxed build Q4_0 with 8-bit dot products: decode equals the SIMD128 int8 path bit for bit, prefill over quads within rounding (awkward sizes, 1 and 2 threads)', { skip: relaxed ? false : 'relaxed SIMD unavailable here' }, () => {
  const one = make({ threads: 1, variant: 'relaxed', quadMinTokens: 8 });
  const two = make({ threads: 2, variant: 'relaxed', parallelMinMacs: 0, quadMinTokens: 8 });
  const rng = createRng(4040);
  for (const nIn of [32, 96, 128, 160, 352]) {
    for (const [nOut, nTok] of [[1, 1], [7, 1], [13, 3], [5, 4], [6, 5], [3, 9], [7, 34]] as const) {
      const w = randWeight(rng, GGMLType.Q4_0, nIn, nOut);
      const x = randF32(rng, nIn * nTok);
      for (let i = 0; i < x.length; i++) if (i % 5 === 2) x[i] = x[i]! * 50; // outliers: ±127 after quantization
      x.fill(0, 0, 32); // an all-zero block (scale 0)
      const a = new Float32Array(nOut * nTok), b = new Float32Array(nOut * nTok), s = new Float32Array(nOut * nTok);
      one.matmul(a, w, x, nIn, nOut, nTok);
      two.matmul(b, w, x, nIn, nOut, nTok);
      simdOne.matmul(s, w, x, nIn, nOut, nTok);
      assertMatchesSimd(a, s, w, x, nIn, nOut, nTok, `nIn=${nIn} nOut=${nOut} nTok=${nTok}`);
      assert.deepEqual(b, a, `nIn=${nIn} nOut=${nOut} nTok=${nTok}: 2 threads differ from 1`);
    }
  }
});

test('relaxed build: the other int8 types give the SIMD128 results (Q5_0/Q5_1/Q4_K/Q5_K/Q6_K via 8-bit dot products with exact integer block sums, exactly; Q8_0 and Q4_1 unchanged, Q8_0 prefill over quads within rounding)', { skip: relaxed ? false : 'relaxed SIMD unavailable here' }, () => {
  const one = make({ threads: 1, variant: 'relaxed', quadMinTokens: 8 });
  const rng = createRng(5050);
  const cases = [[GGMLType.Q8_0, 160], [GGMLType.Q4_1, 96], [GGMLType.Q5_0, 96], [GGMLType.Q5_0, 160], [GGMLType.Q5_1, 32], [GGMLType.Q5_1, 160], [GGMLType.Q4_K, 256], [GGMLType.Q4_K, 768], [GGMLType.Q5_K, 256], [GGMLType.Q5_K, 768], [GGMLType.Q6_K, 256], [GGMLType.Q6_K, 768]] as const;
  for (const [type, nIn] of cases) {
    assert.equal(one.kernels.compactInt8(type), type === GGMLType.Q8_0 || type === GGMLType.Q4_1 ? 0 : 1, typeName(type));
    for (const nTok of [1, 5, 18]) {
      const w = randWeight(rng, type, nIn, 6);
      const x = randF32(rng, nIn * nTok);
      for (let i = 0; i < x.length; i++) if (i % 9 === 4) x[i] = x[i]! * 30;
      const a = new Float32Array(6 * nTok), s = new Float32Array(6 * nTok);
      one.matmul(a, w, x, nIn, 6, nTok);
      simdOne.matmul(s, w, x, nIn, 6, nTok);
      if (type === GGMLType.Q8_0) assertMatchesSimd(a, s, w, x, nIn, 6, nTok, `${typeName(type)} nTok=${nTok}`);
      else assert.deepEqual(a, s, `${typeName(type)} nTok=${nTok}`);
    }
  }
});

test('TOKENLOOP_WASM_RELAXED=0 falls back to the SIMD128 build (same results as in-process SIMD128, relaxed refused)', () => {
  const rng = createRng(6060);
  const nIn = 160, nOut = 5, nTok = 4;
  const w = randWeight(rng, GGMLType.Q4_0, nIn, nOut);
  const x = randF32(rng, nIn * nTok);
  const s = new Float32Array(nOut * nTok);
  simdOne.matmul(s, w, x, nIn, nOut, nTok);
  const script = `
    import { createWasmBackend } from './src/model/kernels/wasm/backend.ts';
    import { relaxedSimdAvailable } from './src/model/kernels/wasm/module.ts';
    const w = Uint8Array.from(${JSON.stringify(Array.from(w.data as Uint8Array))});
    const x = Float32Array.from(${JSON.stringify(Array.from(x))});
    const b = createWasmBackend({ threads: 2, parallelMinMacs: 0 });
    const out = new Float32Array(${nOut * nTok});
    b.matmul(out, { type: 2, data: w }, x, ${nIn}, ${nOut}, ${nTok});
    let refused = '';
    try { createWasmBackend({ threads: 1, variant: 'relaxed' }); } catch (e) { refused = e.constructor.name; }
    console.log(JSON.stringify({ available: relaxedSimdAvailable(), variant: b.variant, refused, out: Array.from(out) }));
    await b.close();`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...process.env, TOKENLOOP_WASM_RELAXED: '0' }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim().split('\n').pop()!) as { available: boolean; variant: string; refused: string; out: number[] };
  assert.equal(got.available, false);
  assert.equal(got.variant, 'simd128');
  assert.equal(got.refused, UnsupportedError.name);
  assert.deepEqual(Float32Array.from(got.out), s);
});
