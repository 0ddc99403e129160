import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType } from '../../src/format/dtypes.ts';
import '../../src/model/kernels/quant/register.ts';
import { createWasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { REL_TOL, assertPrefillEqualsDecode, createRng, randF32, randWeight, refMatmul, weightToF32 } from './fixtures.ts';

// Wide f32, f16 and bf16 weights (rows of more than 1024 values) are interleaved in bands of 32 rows stored
// column block by column block (src/model/kernels/wasm/assembly/interleave.ts), so that a decode
// step reuses each block of the activations for eight groups. Every path must still compute the
// product: whole bands, lone groups, groups cut by a row range, the grouped rows after the last
// band and the trailing GGUF rows; decode with the bits of prefill, 1 and 2 threads the same bits,
// and each row read back exactly.
const one = createWasmBackend({ threads: 1 });
const two = createWasmBackend({ threads: 2, parallelMinMacs: 0 });
after(async () => { await one.close(); await two.close(); });

const TYPES = [['f32', GGMLType.F32, 64], ['f16', GGMLType.F16, 32], ['bf16', GGMLType.BF16, 32]] as const;

/** A backend-owned copy of a weight in its stored format (rearranged in place by interleave). */
function heapWeight(be: typeof one, type: GGMLType, data: ArrayBufferView, nIn: number, nOut: number) {
  if (type === GGMLType.F32) {
    const hw = be.heap.f32(nIn * nOut);
    hw.set(data as Float32Array);
    return { type, name: 'w', dims: [nIn, nOut], data: hw as ArrayBufferView };
  }
  const bytes = be.heap.allocate(nIn * nOut * 2);
  bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return { type, name: 'w', dims: [nIn, nOut], data: new Uint16Array(bytes.buffer, bytes.byteOffset, nIn * nOut) as ArrayBufferView };
}

/** The stored bytes of a weight (to see that the layout changed). */
const bytesOf = (d: ArrayBufferView, n: number) => Array.from(new Uint8Array(d.buffer, d.byteOffset, n));

// 1040 values: two whole 512-value column blocks and a 16-value one; 70 rows: two bands, one
// grouped row quad after them and two trailing rows; 1024 values: not banded (the threshold)
for (const [label, type, cb] of TYPES) {
  for (const [nIn, nOut] of [[1040, 70], [2048, 64], [1536, 37], [1024, 40]] as const) {
    test(`${label} ${nOut}×${nIn}: banded decode and prefill match the reference, decode has prefill's bits, 1 and 2 threads agree, rows read back`, () => {
      const rng = createRng(nIn * 7 + nOut + type);
      const stored = randWeight(rng, type, nIn, nOut);
      const w = weightToF32(stored, nIn, nOut);
      const w1 = heapWeight(one, type, stored.data, nIn, nOut), w2 = heapWeight(two, type, stored.data, nIn, nOut);
      assert.equal(one.interleave(w1), true);
      assert.equal(two.interleave(w2), true);
      const banded = one.kernels.bandRows(cb, nIn, nOut);
      assert.equal(banded, nIn > 1024 ? nOut & ~31 : 0, 'rows stored in bands');
      if (banded > 0) {
        // the second group's first chunk follows the first group's first 512-value block (not its whole rows)
        const groupBlock = 4 * 512 * (cb / 16), rb = nIn * (cb / 16);
        const plain = heapWeight(one, type, stored.data, nIn, nOut);
        one.kernels.interleaveRows(plain.data.byteOffset, rb, cb, 4, one.heap.allocate(4 * rb).byteOffset);
        assert.deepEqual(bytesOf(w1.data, 64), bytesOf(plain.data, 64), 'a band starts with group 0 chunk 0');
        assert.notDeepEqual(bytesOf(new Uint8Array(w1.data.buffer, w1.data.byteOffset + groupBlock, 64), 64), bytesOf(new Uint8Array(plain.data.buffer, plain.data.byteOffset + groupBlock, 64), 64), 'group 1 follows group 0\'s first block');
      }
      for (const nTok of [1, 2, 5]) {
        const x = randF32(rng, nIn * nTok);
        const { y, mag } = refMatmul(w, x, nIn, nOut, nTok);
        const a = new Float32Array(nOut * nTok), b = new Float32Array(nOut * nTok);
        one.matmul(a, w1, x, nIn, nOut, nTok);
        two.matmul(b, w2, x, nIn, nOut, nTok);
        for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - y[i]!) <= REL_TOL * mag[i]! + 1e-30, `nTok=${nTok} [${i}]: ${a[i]} vs ${y[i]}`);
        assert.deepEqual(b, a, `nTok=${nTok}: 2 threads differ from 1`);
        assertPrefillEqualsDecode((o, ww, xx, ni, no, nt) => one.matmul(o, ww, xx, ni, no, nt), w1, x, nIn, nOut, nTok, `${label} ${nOut}×${nIn}`);
      }
      if (type === GGMLType.F16 && banded > 0) {
        // activations of 32768 or more cannot carry the 2^112 of the f16 decode kernels (rows.ts
        // scaleHalfX): the one-row fallback then reads the banded rows (rowAt), still the product
        const x = randF32(rng, nIn);
        x[3] = 40000;
        const { y, mag } = refMatmul(w, x, nIn, nOut, 1);
        const a = new Float32Array(nOut);
        one.matmul(a, w1, x, nIn, nOut, 1);
        for (let i = 0; i < nOut; i++) assert.ok(Math.abs(a[i]! - y[i]!) <= REL_TOL * mag[i]! + 1e-30, `large x [${i}]: ${a[i]} vs ${y[i]}`);
      }
      // each row read back exactly (w: the stored values as f32, an exact conversion)
      const got = new Float32Array(nIn);
      for (let r = 0; r < nOut; r++) {
        assert.equal(one.readRow(got, 0, w1, r, nIn), true);
        assert.deepEqual(got, w.subarray(r * nIn, (r + 1) * nIn), `row ${r}`);
      }
    });
  }
}

for (const [label, type] of TYPES) {
  test(`banded ${label}: decode row ranges that cut bands and groups give the bits of the whole matrix; prefill ones match the reference`, () => {
    const nIn = 1040, nOut = 70, rng = createRng(77 + type);
    const stored = randWeight(rng, type, nIn, nOut);
    const wf = weightToF32(stored, nIn, nOut);
    const w1 = heapWeight(one, type, stored.data, nIn, nOut);
    one.interleave(w1);
    const scratch = one.heap.allocate(nIn * 24 + 4096);
    for (const nTok of [1, 3]) {
      const x = one.heap.f32(nIn * nTok); x.set(randF32(rng, nIn * nTok));
      // f16 decode reads x·2^112 (the backend's scaleHalfX)
      const xq = type === GGMLType.F16 && nTok === 1 ? one.heap.f32(nIn) : null;
      if (xq) assert.equal(one.kernels.scaleHalfX(xq.byteOffset, x.byteOffset, nIn), 1);
      const full = one.heap.f32(nOut * nTok);
      one.matmul(full, w1, x, nIn, nOut, nTok);
      // [5, 67): a cut group (5..7), whole groups in band 0, band 1 whole, the grouped rows 64..67 cut
      for (const [r0, r1] of [[5, 67], [0, 33], [33, 64], [30, 70], [1, 2]] as const) {
        const cut = one.heap.f32(nOut * nTok);
        one.kernels.matmul(type | 0x100, cut.byteOffset, w1.data.byteOffset, x.byteOffset, 0, xq?.byteOffset ?? 0, 0, nIn, nOut, nTok, r0, r1, scratch.byteOffset);
        for (let t = 0; t < nTok; t++) {
          if (nTok === 1) assert.deepEqual(cut.subarray(r0, r1), full.subarray(r0, r1), `decode rows ${r0}..${r1}`);
          else {
            // prefill: rows outside whole groups of the range take the row-at-a-time kernel (other
            // summation order), so within the tolerance of the reference
            const { y, mag } = refMatmul(wf, x, nIn, nOut, nTok);
            for (let r = r0; r < r1; r++) {
              const i = t * nOut + r;
              assert.ok(Math.abs(cut[i]! - y[i]!) <= REL_TOL * mag[i]! + 1e-30, `prefill rows ${r0}..${r1} [t${t} r${r}]: ${cut[i]} vs ${y[i]}`);
            }
          }
          if (r0 > 0) assert.equal(cut[t * nOut + r0 - 1], 0, 'rows before the range are not written');
          if (r1 < nOut) assert.equal(cut[t * nOut + r1], 0, 'rows after the range are not written');
        }
      }
    }
  });
}

for (const [label, type] of TYPES) {
  test(`${label} prefill over several tiles (x rows of 2048 values: 64 tokens a tile) matches the reference and has decode's bits`, () => {
    const nIn = 2048, nOut = 36, nTok = 130, rng = createRng(2048 + type);
    const stored = randWeight(rng, type, nIn, nOut);
    const w = weightToF32(stored, nIn, nOut);
    const w1 = heapWeight(one, type, stored.data, nIn, nOut);
    one.interleave(w1);
    const x = randF32(rng, nIn * nTok);
    const { y, mag } = refMatmul(w, x, nIn, nOut, nTok);
    const a = new Float32Array(nOut * nTok);
    one.matmul(a, w1, x, nIn, nOut, nTok);
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - y[i]!) <= REL_TOL * mag[i]! + 1e-30, `[${i}]: ${a[i]} vs ${y[i]}`);
    assertPrefillEqualsDecode((o, ww, xx, ni, no, nt) => one.matmul(o, ww, xx, ni, no, nt), w1, x, nIn, nOut, nTok, `${label} 130 tokens`);
  });
}
