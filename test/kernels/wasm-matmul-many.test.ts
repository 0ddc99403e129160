import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType, typeName } from '../../src/format/dtypes.ts';
import '../../src/model/kernels/quant/register.ts';
import { createWasmBackend, type MatmulPart, type WasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { createRng, randF32, randWeight } from './fixtures.ts';

// WasmBackend.matmulMany: products of one input with several weights, run as one matrix in one
// dispatch (wasm matmulSegments) when the weights share type and layout. Every output must equal
// part-by-part matmul bit for bit, with 1 and 2 threads, interleaved or not, and the fused kernel
// must actually be the one that ran (a silent fallback would pass the equality checks).
const one = createWasmBackend({ threads: 1 });
const two = createWasmBackend({ threads: 2, parallelMinMacs: 0 });
after(async () => { await one.close(); await two.close(); });

/** Count the fused calls of a backend: its kernel's (1 thread) or its pool's (2 threads) matmulSegments. */
function countFused(be: WasmBackend): () => number {
  const internals = be as unknown as { pool: Record<string, unknown> | null; kernels: Record<string, unknown> };
  // the wasm exports object is frozen: the 1-thread backend gets a copy with the counting wrapper
  const target = internals.pool ?? (internals.kernels = { ...internals.kernels });
  const orig = target['matmulSegments'] as (...a: unknown[]) => void;
  let n = 0;
  target['matmulSegments'] = (...a: unknown[]) => { n++; orig.apply(target, a); };
  return () => n;
}
const fusedOne = countFused(one), fusedTwo = countFused(two);

type W = { type: GGMLType; name: string; dims: number[]; data: ArrayBufferView };
function weight(rng: ReturnType<typeof createRng>, type: GGMLType, nIn: number, nOut: number): W {
  const w = randWeight(rng, type, nIn, nOut);
  return { type, name: `w${nOut}`, dims: [nIn, nOut], data: (w.data as Uint8Array).slice() };
}

/** matmulMany's outputs and part-by-part matmul's, on the same backend. */
function both(be: WasmBackend, ws: W[], x: Float32Array, nIn: number, nTok: number): { many: Float32Array[]; each: Float32Array[] } {
  const parts: MatmulPart[] = ws.map((w) => ({ w, nOut: w.dims[1]!, out: new Float32Array(w.dims[1]! * nTok) }));
  be.matmulMany(parts, x, nIn, nTok);
  const each = ws.map((w) => {
    const out = new Float32Array(w.dims[1]! * nTok);
    be.matmul(out, w, x, nIn, w.dims[1]!, nTok);
    return out;
  });
  return { many: parts.map((p) => p.out), each };
}

const CASES: [GGMLType, number][] = [
  [GGMLType.F32, 48], [GGMLType.F16, 64], [GGMLType.BF16, 64], [GGMLType.Q8_0, 96], [GGMLType.Q4_0, 96],
  [GGMLType.Q4_K, 256], [GGMLType.Q6_K, 256], [GGMLType.Q5_0, 64],
];

for (const [type, nIn] of CASES) {
  test(`matmulMany ${typeName(type)}: one fused dispatch, the same bits as part-by-part matmul, 1 and 2 threads`, () => {
    const rng = createRng(4242 + type);
    for (const interleave of [true, false]) {
      // the last part may have any row count; the others are whole four-row groups
      const sizes = [12, 8, 7];
      const w1 = sizes.map((n) => weight(rng, type, nIn, n));
      const w2 = w1.map((w) => ({ ...w, data: (w.data as Uint8Array).slice() }));
      if (interleave) {
        const a = w1.map((w) => one.interleave(w)), b = w2.map((w) => two.interleave(w));
        assert.deepEqual(a, b);
      }
      for (const nTok of [1, 3, 9, 16]) { // 9: per token for Q8_0 (quads from 15) and, in the relaxed build, Q4_0/Q4_K (from 12), quads for the others; 16: quads for every int8 type
        const x = randF32(rng, nIn * nTok);
        const f1 = fusedOne(), f2 = fusedTwo();
        const r1 = both(one, w1, x, nIn, nTok), r2 = both(two, w2, x, nIn, nTok);
        assert.equal(fusedOne() - f1, 1, 'one fused kernel call (1 thread)');
        assert.equal(fusedTwo() - f2, 1, 'one fused pool dispatch (2 threads)');
        const what = `${typeName(type)} interleaved=${interleave} nTok=${nTok}`;
        for (let i = 0; i < sizes.length; i++) {
          assert.deepEqual(r1.many[i], r1.each[i], `${what} part ${i}: 1 thread`);
          assert.deepEqual(r2.many[i], r2.each[i], `${what} part ${i}: 2 threads`);
          assert.deepEqual(r2.many[i], r1.many[i], `${what} part ${i}: 2 threads differ from 1`);
        }
      }
    }
  });
}

test('matmulMany falls back to part-by-part matmul when the parts cannot run as one matrix', () => {
  const rng = createRng(99);
  const nIn = 64;
  const x = randF32(rng, nIn);
  const cases: [string, W[]][] = [
    ['mixed types', [weight(rng, GGMLType.F32, nIn, 8), weight(rng, GGMLType.Q8_0, nIn, 8)]],
    ['a part before the last that is not whole four-row groups', [weight(rng, GGMLType.F32, nIn, 6), weight(rng, GGMLType.F32, nIn, 8)]],
  ];
  const interleavedAndNot = [weight(rng, GGMLType.F32, nIn, 8), weight(rng, GGMLType.F32, nIn, 8)];
  assert.equal(two.interleave(interleavedAndNot[0]!), true);
  cases.push(['an interleaved weight beside one in GGUF order', interleavedAndNot]);
  for (const [what, ws] of cases) {
    const f = fusedTwo();
    const r = both(two, ws, x, nIn, 1);
    assert.equal(fusedTwo(), f, `${what}: not fused`);
    ws.forEach((_, i) => assert.deepEqual(r.many[i], r.each[i], `${what}: part ${i}`));
  }
  // part by part with the input quantized once per int8 form: a Q8_0 part (i16 activations), then
  // two Q4_0 parts (i8 in the relaxed build; one interleaved, one not, so not one matrix) that
  // share the second quantization, as decode and as prefill (token quads)
  for (const nTok of [1, 16]) {
    const xs = randF32(rng, nIn * nTok);
    const ws = [weight(rng, GGMLType.Q8_0, nIn, 8), weight(rng, GGMLType.Q4_0, nIn, 8), weight(rng, GGMLType.Q4_0, nIn, 4)];
    assert.equal(two.interleave(ws[1]!), true);
    const f0 = fusedTwo();
    const r = both(two, ws, xs, nIn, nTok);
    assert.equal(fusedTwo(), f0, 'mixed int8 forms: not fused');
    ws.forEach((_, i) => assert.deepEqual(r.many[i], r.each[i], `mixed int8 forms nTok=${nTok}: part ${i}`));
  }
  // a single part is a plain matmul; no parts, nothing
  const f = fusedTwo();
  const single = both(two, [weight(rng, GGMLType.F32, nIn, 8)], x, nIn, 1);
  assert.deepEqual(single.many[0], single.each[0]);
  two.matmulMany([], x, nIn, 1);
  assert.equal(fusedTwo(), f);
});

test('matmulMany checks every part as matmul does', () => {
  const rng = createRng(7);
  const nIn = 32;
  const x = randF32(rng, nIn);
  const a = weight(rng, GGMLType.F32, nIn, 8), b = weight(rng, GGMLType.F32, nIn, 8);
  assert.throws(() => two.matmulMany([{ out: new Float32Array(8), w: a, nOut: 8 }, { out: new Float32Array(4), w: b, nOut: 8 }], x, nIn, 1), /too short/);
  assert.throws(() => two.matmulMany([{ out: new Float32Array(8), w: a, nOut: 8 }, { out: new Float32Array(16), w: b, nOut: 16 }], x, nIn, 1), /holds \d+ bytes/);
  assert.throws(() => two.matmulMany([{ out: new Float32Array(8), w: { type: GGMLType.Q8_0, name: 'q', data: new Uint8Array(8 * 34) }, nOut: 8 }], x.subarray(0, 16), 16, 1), /multiple of 32/);
});
