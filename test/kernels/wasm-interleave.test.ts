import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType, typeName } from '../../src/format/dtypes.ts';
import '../../src/model/kernels/quant/register.ts';
import { readRow } from '../../src/model/kernels/row.ts';
import { createWasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { REL_TOL, assertPrefillEqualsDecode, createRng, int8Bound, randF32, randWeight, refMatmul, weightToF32 } from './fixtures.ts';

// The row-interleaved layout of the decode kernels (src/model/kernels/wasm/assembly/rows4.ts):
// WasmBackend.interleave rearranges a weight once; every matmul path (decode groups, single rows of
// a group, the trailing nOut mod 4 rows, prefill through gathered rows, the int8 and f32 fallbacks)
// must still compute the same product, with 1 and 2 threads bit-identical.
const one = createWasmBackend({ threads: 1 });
const two = createWasmBackend({ threads: 2, parallelMinMacs: 0 });
const exactOne = createWasmBackend({ threads: 1, int8Activations: false });
const simdOne = createWasmBackend({ threads: 1, variant: 'simd128' });
after(async () => { await one.close(); await two.close(); await exactOne.close(); await simdOne.close(); });

const INTERLEAVED: [GGMLType, number[]][] = [
  [GGMLType.F32, [16, 96]], [GGMLType.F16, [32, 96]], [GGMLType.BF16, [32, 96]], [GGMLType.Q8_0, [96, 320]], [GGMLType.Q4_0, [96, 320]],
  [GGMLType.Q4_K, [256, 512]], [GGMLType.Q5_K, [256, 512]],
];
const QUANT = new Set([GGMLType.Q8_0, GGMLType.Q4_0, GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K]);

/** A private copy of w (interleaving must not touch the caller's array). */
function copyOf(w: { type: GGMLType; data: ArrayBufferView }, nIn: number, nOut: number) {
  const d = w.data as Float32Array | Uint16Array | Uint8Array;
  return { type: w.type, name: 'w', dims: [nIn, nOut], data: d.slice() };
}

/** |a − y| within the bound of the path `be` takes for this type. */
function assertClose(a: Float32Array, y: Float64Array, mag: Float64Array, wf: Float32Array, x: Float32Array, type: GGMLType, int8: boolean,
  nIn: number, nOut: number, nTok: number, what: string): void {
  for (let t = 0; t < nTok; t++) {
    for (let o = 0; o < nOut; o++) {
      const i = t * nOut + o;
      const err = Math.abs(a[i]! - y[i]!);
      const bound = int8 && QUANT.has(type) ? int8Bound(wf, x, nIn, o, t) : REL_TOL * mag[i]! + 1e-30;
      assert.ok(err <= bound, `${what} ${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok} [${i}]: ${a[i]} vs ${y[i]} (err ${err} > ${bound})`);
    }
  }
}

for (const [type, sizes] of INTERLEAVED) {
  test(`interleaved ${typeName(type)} weights: decode and prefill match the reference, 1 and 2 threads bit-identical, rows read back exactly`, () => {
    const rng = createRng(808 + type);
    for (const nIn of sizes) {
      for (const nOut of [4, 7, 13, 130]) {
        const w = randWeight(rng, type, nIn, nOut);
        const wf = weightToF32(w, nIn, nOut);
        const w1 = copyOf(w, nIn, nOut), w2 = copyOf(w, nIn, nOut), we = copyOf(w, nIn, nOut), ws = copyOf(w, nIn, nOut);
        assert.equal(one.interleave(w1), true);
        assert.equal(two.interleave(w2), true);
        assert.equal(exactOne.interleave(we), true);
        assert.equal(simdOne.interleave(ws), true);
        assert.equal(one.interleave(w1), true, 'a second call is a no-op');
        assert.deepEqual(w1.data, w.data, 'the caller-owned array is not rearranged (the backend works on its copy)');
        for (const nTok of [1, 3, 6]) {
          const x = randF32(rng, nIn * nTok);
          for (let i = 0; i < x.length; i++) if (i % 7 === 3) x[i] = x[i]! * 40;
          const { y, mag } = refMatmul(wf, x, nIn, nOut, nTok);
          const a = new Float32Array(nOut * nTok), b = new Float32Array(nOut * nTok), e = new Float32Array(nOut * nTok), sa = new Float32Array(nOut * nTok);
          one.matmul(a, w1, x, nIn, nOut, nTok);
          two.matmul(b, w2, x, nIn, nOut, nTok);
          exactOne.matmul(e, we, x, nIn, nOut, nTok);
          simdOne.matmul(sa, ws, x, nIn, nOut, nTok);
          assertClose(a, y, mag, wf, x, type, true, nIn, nOut, nTok, 'int8/default path');
          assertClose(e, y, mag, wf, x, type, false, nIn, nOut, nTok, 'f32 path');
          assertClose(sa, y, mag, wf, x, type, true, nIn, nOut, nTok, 'SIMD128 build');
          assert.deepEqual(b, a, `${typeName(type)} nIn=${nIn} nOut=${nOut} nTok=${nTok}: 2 threads differ from 1`);
        }
        // each row reads back exactly as the JS reader reads the original
        const got = new Float32Array(nIn), want = new Float32Array(nIn);
        for (let r = 0; r < nOut; r++) {
          assert.equal(one.readRow(got, 0, w1, r, nIn), true);
          readRow(want, 0, { name: 'w', type, dims: [nIn, nOut], data: w.data as Float32Array }, r, nIn);
          assert.deepEqual(got, want, `${typeName(type)} nIn=${nIn} nOut=${nOut}: row ${r}`);
        }
        assert.throws(() => one.readRow(got, 0, w1, nOut, nIn), /row \d+ is outside/);
      }
    }
  });
}

test('packed Q6_K (relaxed build): every path gives the bits of the GGUF-order rows, rows read back exactly, the packing undoes exactly', { skip: one.variant !== 'relaxed' && 'relaxed SIMD unavailable here' }, () => {
  const rng = createRng(606);
  const type = GGMLType.Q6_K;
  for (const nIn of [256, 512]) {
    for (const nOut of [1, 4, 7, 13, 130]) {
      const w = randWeight(rng, type, nIn, nOut);
      const wf = weightToF32(w, nIn, nOut);
      const plain = copyOf(w, nIn, nOut), w1 = copyOf(w, nIn, nOut), w2 = copyOf(w, nIn, nOut), we = copyOf(w, nIn, nOut);
      assert.equal(one.interleave(w1), nOut >= 4);
      assert.equal(two.interleave(w2), nOut >= 4);
      assert.equal(exactOne.interleave(we), nOut >= 4);
      // decode (dotQ6Kp), a few tokens (rows unpacked into GGUF order), quads (8+ tokens: packed panels)
      for (const nTok of [1, 3, 9, 21]) {
        const x = randF32(rng, nIn * nTok);
        for (let i = 0; i < x.length; i++) if (i % 7 === 3) x[i] = x[i]! * 40;
        const { y, mag } = refMatmul(wf, x, nIn, nOut, nTok);
        const want = new Float32Array(nOut * nTok), a = new Float32Array(nOut * nTok), b = new Float32Array(nOut * nTok);
        one.matmul(want, plain, x, nIn, nOut, nTok);
        one.matmul(a, w1, x, nIn, nOut, nTok);
        two.matmul(b, w2, x, nIn, nOut, nTok);
        assertClose(a, y, mag, wf, x, type, true, nIn, nOut, nTok, 'packed');
        assert.deepEqual(a, want, `nIn=${nIn} nOut=${nOut} nTok=${nTok}: packed rows differ from GGUF-order rows`);
        assert.deepEqual(b, a, `nIn=${nIn} nOut=${nOut} nTok=${nTok}: 2 threads differ from 1`);
        // without int8 activations: rows unpacked for the f32 kernels
        const e = new Float32Array(nOut * nTok), ePlain = new Float32Array(nOut * nTok);
        exactOne.matmul(e, we, x, nIn, nOut, nTok);
        exactOne.matmul(ePlain, plain, x, nIn, nOut, nTok);
        assertClose(e, y, mag, wf, x, type, false, nIn, nOut, nTok, 'packed, f32 path');
        assert.deepEqual(e, ePlain, `nIn=${nIn} nOut=${nOut} nTok=${nTok}: packed f32 path differs from GGUF-order rows`);
      }
      const got = new Float32Array(nIn), ref = new Float32Array(nIn);
      for (let r = 0; r < nOut; r++) {
        assert.equal(one.readRow(got, 0, w1, r, nIn), nOut >= 4);
        if (nOut < 4) continue;
        readRow(ref, 0, { name: 'w', type, dims: [nIn, nOut], data: w.data as Uint8Array }, r, nIn);
        assert.deepEqual(got, ref, `nIn=${nIn} nOut=${nOut}: row ${r}`);
      }
    }
  }
  // packed in place in the heap, then every row unpacked: the original bytes
  const nIn = 512, nOut = 6, rb = (nIn / 256) * 210;
  const w = randWeight(rng, type, nIn, nOut);
  const bytes = one.heap.allocate(w.data.byteLength);
  bytes.set(w.data as Uint8Array);
  assert.equal(one.interleave({ type, name: 'h', dims: [nIn, nOut], data: bytes }), true);
  assert.notDeepEqual(bytes, w.data, 'rearranged in place');
  const row = one.heap.allocate(rb);
  for (let r = 0; r < nOut; r++) {
    one.kernels.gatherRowAt(row.byteOffset, bytes.byteOffset, r, rb, 210, nIn, nOut, 0);
    assert.deepEqual(row, (w.data as Uint8Array).subarray(r * rb, (r + 1) * rb), `row ${r}`);
  }
});

test('a decode row has the same value whichever group, trailing position or row range computes it', () => {
  // A 9-row matrix: rows 0..7 form two groups, row 8 trails in GGUF order. Its rows 4..8 as a
  // 5-row matrix: one group plus a trailing row. Every lane depends only on its own row, so both
  // must give bit-identical values.
  const rng = createRng(5);
  for (const [type, nIn] of [[GGMLType.F32, 64], [GGMLType.F16, 64], [GGMLType.BF16, 64], [GGMLType.Q8_0, 96], [GGMLType.Q4_0, 96], [GGMLType.Q4_K, 256], [GGMLType.Q5_K, 256]] as const) {
    const nOut = 9;
    const w = randWeight(rng, type, nIn, nOut);
    const x = randF32(rng, nIn);
    const full = new Float32Array(nOut), fullTwo = new Float32Array(nOut);
    const wi = copyOf(w, nIn, nOut);
    one.interleave(wi);
    one.matmul(full, wi, x, nIn, nOut, 1);
    two.matmul(fullTwo, (() => { const c = copyOf(w, nIn, nOut); two.interleave(c); return c; })(), x, nIn, nOut, 1);
    assert.deepEqual(fullTwo, full);
    // the same rows as a 5-row matrix: rows 4..8 → one group (4..7) plus a trailing row (8)
    const rb = (w.data.byteLength / nOut);
    const tail = { type, name: 't', dims: [nIn, 5], data: new Uint8Array(w.data.buffer, w.data.byteOffset + 4 * rb, 5 * rb).slice() };
    const tailData = type === GGMLType.F32 ? new Float32Array(tail.data.buffer) : type === GGMLType.F16 || type === GGMLType.BF16 ? new Uint16Array(tail.data.buffer) : tail.data;
    const t5 = { ...tail, data: tailData };
    one.interleave(t5);
    const part = new Float32Array(5);
    one.matmul(part, t5, x, nIn, 5, 1);
    assert.deepEqual(part, full.subarray(4), `${typeName(type)}: grouped rows 4..8 differ from the same rows of the 9-row matrix`);
  }
  // A row range that cuts a group (rows 1..6 of an interleaved f32 matrix, straight through the
  // kernel): rows 1..3 and 4..6 are computed one at a time from inside their groups.
  const nIn = 64, nOut = 8;
  const w = randWeight(rng, GGMLType.F32, nIn, nOut);
  const hw = one.heap.f32(nIn * nOut); hw.set(w.data as Float32Array);
  const wi = { type: GGMLType.F32, name: 'h', dims: [nIn, nOut], data: hw };
  one.interleave(wi);
  const x = one.heap.f32(nIn); x.set(randF32(rng, nIn));
  const full = one.heap.f32(nOut), cut = one.heap.f32(nOut);
  one.matmul(full, wi, x, nIn, nOut, 1);
  one.kernels.matmul(GGMLType.F32 | 0x100, cut.byteOffset, hw.byteOffset, x.byteOffset, 0, 0, 0, nIn, nOut, 1, 1, 7, 0);
  assert.deepEqual(cut.subarray(1, 7), full.subarray(1, 7));
  // the same cut for three tokens (prefill): rows outside whole groups take the row-at-a-time path
  const x3 = one.heap.f32(3 * nIn); x3.set(randF32(rng, 3 * nIn));
  const full3 = one.heap.f32(3 * nOut), cut3 = one.heap.f32(3 * nOut);
  one.matmul(full3, wi, x3, nIn, nOut, 3);
  const scratch = one.heap.allocate(nIn * 16 + nIn * 4);
  one.kernels.matmul(GGMLType.F32 | 0x100, cut3.byteOffset, hw.byteOffset, x3.byteOffset, 0, 0, 0, nIn, nOut, 3, 1, 7, scratch.byteOffset);
  const { y, mag } = refMatmul(w.data as Float32Array, x3, nIn, nOut, 3);
  for (let t = 0; t < 3; t++) {
    for (let r = 1; r < 7; r++) {
      const i = t * nOut + r;
      assert.ok(Math.abs(cut3[i]! - y[i]!) <= REL_TOL * mag[i]!, `prefill cut [t${t} r${r}]: ${cut3[i]} vs ${y[i]}`);
      assert.ok(Math.abs(full3[i]! - y[i]!) <= REL_TOL * mag[i]!, `prefill full [t${t} r${r}]: ${full3[i]} vs ${y[i]}`);
    }
    assert.equal(cut3[t * nOut], 0); assert.equal(cut3[t * nOut + 7], 0);
  }
});

for (const type of [GGMLType.Q4_0, GGMLType.Q8_0]) test(`transposed ${typeName(type)} groups in both kernel builds: a decode row range that cuts groups gives the bits of the whole matrix`, () => {
  // Q4_0 and Q8_0 groups are transposed block by block (interleave.ts), so a row of a group cut by
  // the range takes its lane of the group's four-row result, and a trailing row runs the
  // GGUF-order kernel.
  const rng = createRng(17 + type);
  const nIn = 96, nOut = 9, nb = nIn / 32;
  for (const be of [one, simdOne]) {
    const w = randWeight(rng, type, nIn, nOut);
    const bytes = be.heap.allocate(w.data.byteLength);
    bytes.set(w.data as Uint8Array);
    const hw = { type, name: 'h', dims: [nIn, nOut], data: bytes };
    assert.equal(be.interleave(hw), true);
    const x = be.heap.f32(nIn); x.set(randF32(rng, nIn));
    const full = be.heap.f32(nOut);
    be.matmul(full, hw, x, nIn, nOut, 1);
    const wf = weightToF32(w, nIn, nOut);
    const { y } = refMatmul(wf, x, nIn, nOut, 1);
    for (let o = 0; o < nOut; o++) assert.ok(Math.abs(full[o]! - y[o]!) <= int8Bound(wf, x, nIn, o, 0), `${be.variant} row ${o}`);
    // the activations as the backend quantizes them for this type and build (i8 or i16 blocks)
    const i8 = be.kernels.compactInt8(type) === 1;
    const xq = be.heap.allocate(nIn * 2), xd = be.heap.allocate(nb * 8), scratch = be.heap.allocate(1024);
    if (i8) be.kernels.quantizeBlocksI8(xq.byteOffset, xd.byteOffset, x.byteOffset, nb);
    else be.kernels.quantizeBlocks(xq.byteOffset, xd.byteOffset, x.byteOffset, nb);
    for (const [r0, r1] of [[1, 7], [2, 3], [5, 9], [0, 9], [3, 5]]) {
      const cut = be.heap.f32(nOut);
      be.kernels.matmul(type | 0x100, cut.byteOffset, bytes.byteOffset, x.byteOffset, 0, xq.byteOffset, xd.byteOffset, nIn, nOut, 1, r0, r1, scratch.byteOffset);
      assert.deepEqual(cut.subarray(r0, r1), full.subarray(r0, r1), `${be.variant} rows [${r0}, ${r1})`);
      for (let o = 0; o < nOut; o++) if (o < r0 || o >= r1) assert.equal(cut[o], 0, `${be.variant} rows [${r0}, ${r1}): row ${o} written`);
    }
  }
});

test('interleave leaves other types, short matrices and ragged rows alone; heap-owned weights are rearranged in place', () => {
  const rng = createRng(9);
  assert.equal(one.interleave({ ...copyOf(randWeight(rng, GGMLType.Q5_0, 256, 8), 256, 8) }), false);
  assert.equal(simdOne.interleave({ ...copyOf(randWeight(rng, GGMLType.Q6_K, 256, 8), 256, 8) }), false, 'Q6_K is packed in the relaxed build only');
  assert.equal(one.interleave({ ...copyOf(randWeight(rng, GGMLType.Q8_0, 64, 3), 64, 3) }), false, 'fewer than 4 rows');
  assert.equal(one.interleave({ ...copyOf(randWeight(rng, GGMLType.F32, 40, 8), 40, 8) }), false, 'rows not a multiple of 16');
  const nIn = 64, nOut = 8;
  const w = randWeight(rng, GGMLType.Q8_0, nIn, nOut);
  const bytes = one.heap.allocate(w.data.byteLength);
  bytes.set(w.data as Uint8Array);
  const hw = { type: GGMLType.Q8_0, name: 'h', dims: [nIn, nOut], data: bytes };
  assert.equal(one.interleave(hw), true);
  assert.notDeepEqual(bytes, w.data, 'heap-owned bytes are rearranged in place');
  assert.equal(bytes.byteLength, w.data.byteLength);
  // the same bytes, rearranged: every 2-byte scale and every 4-byte run of quants kept whole
  // (Q8_0 groups are transposed block by block, interleave.ts)
  const runs = (b: Uint8Array) => {
    const out: string[] = [];
    for (let i = 0; i < b.length; i += 34) {
      out.push(Buffer.from(b.subarray(i, i + 2)).toString('hex'));
      for (let k = 2; k < 34; k += 4) out.push(Buffer.from(b.subarray(i + k, i + k + 4)).toString('hex'));
    }
    return out.sort();
  };
  const groupRuns = (b: Uint8Array) => {
    const out: string[] = [];
    for (let i = 0; i < b.length; i += 136) {
      for (let j = 0; j < 4; j++) out.push(Buffer.from(b.subarray(i + 2 * j, i + 2 * j + 2)).toString('hex'));
      for (let k = 8; k < 136; k += 4) out.push(Buffer.from(b.subarray(i + k, i + k + 4)).toString('hex'));
    }
    return out.sort();
  };
  assert.deepEqual(groupRuns(bytes), runs(w.data as Uint8Array));
  const x = one.heap.f32(nIn); x.set(randF32(rng, nIn));
  const out = one.heap.f32(nOut);
  const wf = weightToF32(w, nIn, nOut);
  const { y } = refMatmul(wf, x, nIn, nOut, 1);
  one.matmul(out, hw, x, nIn, nOut, 1);
  for (let o = 0; o < nOut; o++) assert.ok(Math.abs(out[o]! - y[o]!) <= int8Bound(wf, x, nIn, o, 0));
});

test('interleaved F16 decode falls back for activations beyond the pre-scaling range', () => {
  const rng = createRng(11);
  const nIn = 64, nOut = 6;
  const w = randWeight(rng, GGMLType.F16, nIn, nOut);
  const wi = copyOf(w, nIn, nOut);
  one.interleave(wi);
  const x = randF32(rng, nIn);
  x[5] = 40000;
  const { y, mag } = refMatmul(weightToF32(w, nIn, nOut), x, nIn, nOut, 1);
  const a = new Float32Array(nOut);
  one.matmul(a, wi, x, nIn, nOut, 1);
  for (let o = 0; o < nOut; o++) assert.ok(Math.abs(a[o]! - y[o]!) <= REL_TOL * mag[o]!, `[${o}] ${a[o]} vs ${y[o]}`);
});

test('interleaved F32, F16 and BF16 groups: a token prefilled with others gets the same bits as the token decoded alone', () => {
  // The decode kernels (rows4F32; rows4Half, rows4BF16 over paired halves) and the prefill tiles
  // (group4x2F32; f16/bf16 groups converted back to element order first, then group4x2Pairs in the
  // relaxed build, where decode keeps two sums per row) take the same steps per row and token; so
  // do the trailing nOut mod 4 rows (GGUF order) of each path. nIn 80: an odd number of 16-value
  // chunks (group4x2Pairs takes two per step); 5 tokens: a pair tile and an odd last token.
  const rng = createRng(21);
  const simd = createWasmBackend({ threads: 1, variant: 'simd128' });
  try {
    for (const type of [GGMLType.F32, GGMLType.F16, GGMLType.BF16]) {
      for (const be of [one, two, simd]) {
        for (const nIn of [96, 80]) {
          const nOut = 15, nTok = 5;
          const w = copyOf(randWeight(rng, type, nIn, nOut), nIn, nOut);
          be.interleave(w);
          assertPrefillEqualsDecode(be.matmul.bind(be), w, randF32(rng, nIn * nTok), nIn, nOut, nTok, `${typeName(type)} ${be.variant} threads=${be.threads} nIn=${nIn}`);
        }
      }
    }
  } finally {
    void simd.close();
  }
});

test('transposed Q8_0, Q4_0 and Q4_K groups: a token of a few-token product (no quads) gets the decode bits, within the int8 bound of the reference', () => {
  // Fewer tokens than the quads' threshold (Q8_0: 15; relaxed build Q4_0, Q4_K: 12; else 8) run the decode kernel per
  // token over each group (index.ts matmul), so a
  // token's outputs equal its one-token product bit for bit, at one and two threads, in both builds
  // (Q4_K: in the relaxed build, where its groups are transposed); 15 rows: three whole groups and a
  // trailing row; two threads split the rows.
  const rng = createRng(57);
  for (const [type, nIn] of [[GGMLType.Q8_0, 96], [GGMLType.Q4_0, 160], [GGMLType.Q4_K, 512]] as const) {
    for (const be of [one, two, simdOne]) {
      // 11 tokens: below the quads for Q8_0, and for Q4_0/Q4_K in the relaxed build
      for (const nTok of [2, 3, 7, ...(type === GGMLType.Q8_0 || be.variant === 'relaxed' ? [11] : [])]) {
        const nOut = 15;
        const w = copyOf(randWeight(rng, type, nIn, nOut), nIn, nOut);
        const wf = weightToF32(w, nIn, nOut);
        be.interleave(w);
        const x = randF32(rng, nIn * nTok);
        // (SIMD128 keeps Q4_K groups untransposed: its few-token path is the two-token kernels')
        if (type !== GGMLType.Q4_K || be.variant === 'relaxed') assertPrefillEqualsDecode(be.matmul.bind(be), w, x, nIn, nOut, nTok, `${typeName(type)} ${be.variant} threads=${be.threads} nTok=${nTok}`);
        const got = new Float32Array(nOut * nTok);
        be.matmul(got, w, x, nIn, nOut, nTok);
        const { y, mag } = refMatmul(wf, x, nIn, nOut, nTok);
        assertClose(got, y, mag, wf, x, type, true, nIn, nOut, nTok, `${typeName(type)} ${be.variant} nTok=${nTok} vs reference`);
      }
    }
  }
});

for (const type of [GGMLType.Q4_K, GGMLType.Q5_K]) test(`interleaved ${typeName(type)} decode (four rows per step, headers decoded together) in both kernel builds: within the int8 bound, the same values as the GGUF-order rows within it too, extreme scales and mins`, () => {
  // Both builds run rows4Q4K's steps (8-bit dot products in the relaxed build, widened i16 ones
  // in SIMD128); the first rows get the largest 6-bit scales and mins (63) and extreme f16 d/dmin,
  // the packing's edge cases (the high two bits of scales and mins 4..7)
  const simd = createWasmBackend({ threads: 1, variant: 'simd128' });
  try {
    const rng = createRng(3141 + type);
    for (const nIn of [256, 768]) {
      const nOut = 11;
      const w = randWeight(rng, type, nIn, nOut);
      const bs = type === GGMLType.Q4_K ? 144 : 176;
      const bytes = w.data as Uint8Array;
      for (let b = 0; b < 4; b++) bytes.fill(0xff, b * bs + 4, b * bs + 16); // scales/mins all 63
      bytes[0] = 0x00; bytes[1] = 0x3c; // d = 1 (f16 0x3c00)
      bytes[bs + 2] = 0x01; bytes[bs + 3] = 0x00; // dmin = the smallest f16 subnormal
      const wf = weightToF32(w, nIn, nOut);
      const x = randF32(rng, nIn);
      for (let i = 0; i < nIn; i += 11) x[i] = x[i]! * 50;
      const { y } = refMatmul(wf, x, nIn, nOut, 1);
      const plain = new Float32Array(nOut);
      one.matmul(plain, { type, data: bytes }, x, nIn, nOut, 1); // GGUF order: the one-row kernel
      for (const be of [one, simd]) {
        const wi = copyOf(w, nIn, nOut);
        assert.equal(be.interleave(wi), true);
        const a = new Float32Array(nOut);
        be.matmul(a, wi, x, nIn, nOut, 1);
        for (let o = 0; o < nOut; o++) {
          const bound = int8Bound(wf, x, nIn, o, 0);
          assert.ok(Math.abs(a[o]! - y[o]!) <= bound, `${be.variant} nIn=${nIn} row ${o}: ${a[o]} vs ${y[o]} (bound ${bound})`);
          assert.ok(Math.abs(a[o]! - plain[o]!) <= bound, `${be.variant} nIn=${nIn} row ${o}: interleaved ${a[o]} vs GGUF order ${plain[o]}`);
        }
      }
    }
  } finally {
    void simd.close();
  }
});
