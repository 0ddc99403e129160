import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { f32ToF16 } from '../../src/format/dtypes.ts';
import { KVCache, KV_BLOCK, kvHalfSlot, kvIndex, kvLength, kvSpan } from '../../src/kv/cache.ts';
import { attention as jsAttention } from '../../src/model/kernels/attention.ts';
import { createWasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { createRng, randF32 } from '../kernels/fixtures.ts';

// The KV cache layout (src/kv/cache.ts kvIndex): blocks of KV_BLOCK positions, head-major; inside
// a head's block, keys in tiles of 4 positions × 4 dims and values in 16-dim columns when headDim
// is a multiple of 16, plain rows otherwise. Kept through forks and copies between caches of
// different capacities, written the same way by the wasm storeKV and by plain TypeScript, read the
// same way by both attention kernels.
const one = createWasmBackend({ threads: 1 });
after(async () => { await one.close(); });

test('KV layout: block-major, tiles and columns inside a block; every (head, position, dim) its own slot', () => {
  assert.equal(KV_BLOCK, 32);
  const B = KV_BLOCK;
  // headDim 16, 2 heads: key tiles, value columns
  assert.equal(kvIndex(true, 0, 0, 0, 2, 16), 0);
  assert.equal(kvIndex(true, 0, 0, 1, 2, 16), 1);
  assert.equal(kvIndex(true, 0, 1, 0, 2, 16), 4); // next position: next 4 values of the tile
  assert.equal(kvIndex(true, 0, 0, 4, 2, 16), 16); // dims 4..7: after the tile's 4 × 4
  assert.equal(kvIndex(true, 0, 4, 0, 2, 16), 64); // the next tile
  assert.equal(kvIndex(true, 1, 0, 0, 2, 16), B * 16); // head 1's block
  assert.equal(kvIndex(true, 0, B, 0, 2, 16), 2 * B * 16); // the next block, after both heads
  assert.equal(kvIndex(false, 0, 1, 0, 2, 32), 16); // values: rows of 16 inside a column
  assert.equal(kvIndex(false, 0, 0, 16, 2, 32), B * 16); // dims 16..31: the second column
  // headDim not a multiple of 16: rows (one head: the plain (positions, kvDim) layout)
  for (let p = 0; p < 70; p++) for (const keys of [true, false]) assert.equal(kvIndex(keys, 0, p, 3, 1, 12), p * 12 + 3);
  // the slots of 3 heads × 70 positions × 16 dims tile the buffer without overlap, both kinds
  for (const keys of [true, false]) {
    const seen = new Set<number>();
    for (let h = 0; h < 3; h++) for (let p = 0; p < 70; p++) for (let i = 0; i < 16; i++) {
      const o = kvIndex(keys, h, p, i, 3, 16);
      assert.ok(o >= 0 && o < kvLength(70, 48));
      seen.add(o);
    }
    assert.equal(seen.size, 3 * 70 * 16);
  }
  // f16 with tiles/columns: each aligned run of 8 paired (v0 v4 v1 v5 v2 v6 v3 v7); rows unchanged
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => kvHalfSlot(i, 16)), [0, 2, 4, 6, 1, 3, 5, 7]);
  assert.equal(kvHalfSlot(8 * 5 + 4, 64), 8 * 5 + 1);
  assert.equal(kvHalfSlot(13, 12), 13);
  // keys: one run holds two positions' four dims (position 0 in the low halves, 1 in the high)
  assert.equal(kvHalfSlot(kvIndex(true, 0, 1, 2, 2, 16), 16), 5);
  const h16 = new KVCache(1, 32, 40, undefined, undefined, 'f16', 2), f32 = new KVCache(1, 32, 40, undefined, undefined, 'f32', 2);
  assert.equal(h16.index(false, 1, 3, 9), kvHalfSlot(f32.index(false, 1, 3, 9), 16));
  assert.equal(kvLength(1, 12), B * 12);
  assert.equal(kvLength(33, 12), 2 * B * 12);
  assert.equal(kvSpan(3, 1, 2), 6); // rows: up to the last position
  assert.equal(kvSpan(3, 2, 16), 2 * B * 16); // tiles: the last head's whole block
  const c = new KVCache(2, 48, 40, undefined, undefined, 'f32', 3);
  assert.equal(c.k[0]!.length, kvLength(40, 48));
  assert.equal(c.capacityBytes, kvLength(40, 48) * 4 * 2 * 2);
});

/** A cache of `len` positions whose value at (layer l, head h, position p, dim i) encodes all four. */
function filled(capacity: number, len: number): KVCache {
  const c = new KVCache(2, 3 * 16, capacity, undefined, undefined, 'f32', 3);
  for (let l = 0; l < 2; l++) {
    for (let h = 0; h < 3; h++) {
      for (let p = 0; p < len; p++) {
        for (let i = 0; i < 16; i++) { c.k[l]![c.index(true, h, p, i)] = code(l, h, p, i); c.v[l]![c.index(false, h, p, i)] = -code(l, h, p, i); }
      }
    }
  }
  c.advance(len);
  return c;
}
const code = (l: number, h: number, p: number, i: number) => 1000000 * l + 100000 * h + 100 * p + i;

test('KVCache forks and copies between capacities keep every (head, position, dim)', () => {
  const a = filled(70, 45);
  for (const cap of [45, 100]) {
    const f = a.fork(cap);
    assert.equal(f.heads, 3);
    assert.equal(f.length, 45);
    for (let l = 0; l < 2; l++) {
      for (let h = 0; h < 3; h++) {
        for (let p = 0; p < 45; p++) {
          for (const i of [0, 5, 15]) {
            assert.equal(f.k[l]![f.index(true, h, p, i)], code(l, h, p, i), `cap ${cap}: k l${l} h${h} p${p} i${i}`);
            assert.equal(f.v[l]![f.index(false, h, p, i)], -code(l, h, p, i));
          }
        }
      }
    }
  }
  assert.throws(() => a.fork(44), /fork capacity 44 < cached length 45/);
  assert.throws(() => new KVCache(2, 48, 6, undefined, undefined, 'f32', 5), /do not split into 5 heads/);
  assert.throws(() => new KVCache(2, 48, 70, undefined, undefined, 'f32', 4).copyFrom(a), /shapes differ/);
  assert.throws(() => new KVCache(2, 48, 40, undefined, undefined, 'f32', 3).copyFrom(a), /shapes differ/);
});

test('wasm storeKV writes keys and values in the cache layout, as kvIndex says (f32, and f16 bits rounded like f32ToF16)', () => {
  const rng = createRng(31);
  for (const headDim of [32, 8]) { // tiles/columns, and rows
    const heads = 3, pos0 = 29, nTok = 6; // positions 29..34 cross a block edge
    const src = randF32(rng, nTok * heads * headDim, 3);
    const n = kvLength(pos0 + nTok, heads * headDim);
    for (const half of [false, true]) {
      for (const keys of [true, false]) {
        const got = half ? one.heap.u16Managed(n) : one.heap.f32Managed(n);
        got.fill(0);
        one.storeKV(got, keys, src, nTok, heads, headDim, pos0);
        const want = half ? new Uint16Array(n) : new Float32Array(n);
        for (let t = 0; t < nTok; t++) {
          for (let h = 0; h < heads; h++) {
            for (let i = 0; i < headDim; i++) {
              const x = src[(t * heads + h) * headDim + i]!;
              const o = kvIndex(keys, h, pos0 + t, i, heads, headDim);
              if (half) want[kvHalfSlot(o, headDim)] = f32ToF16(x);
              else want[o] = x;
            }
          }
        }
        assert.deepEqual(got, want, `headDim ${headDim} ${half ? 'f16' : 'f32'} ${keys ? 'keys' : 'values'}`);
      }
    }
  }
  const n = kvLength(40, 3 * 16), src = new Float32Array(3 * 16);
  assert.throws(() => one.storeKV(new Float32Array(n), true, src, 1, 3, 16, 0), /allocated in its memory/);
  assert.throws(() => one.storeKV(one.heap.f32Managed(n), true, src, 1, 3, 16, 64), /cannot take positions/);
});

test('TypeScript and wasm attention read the same cache (GQA, spare room, several blocks, f32 and f16)', () => {
  const rng = createRng(32);
  const nHead = 4, nHeadKv = 2, headDim = 16, start = 40, nTok = 3;
  const n = kvLength(start + nTok + 30, nHeadKv * headDim);
  const k = randF32(rng, n), v = randF32(rng, n), q = randF32(rng, nTok * nHead * headDim);
  // the f16 cache holds the same values as k, v (rounded), each in its paired slot
  const kh = new Uint16Array(n), vh = new Uint16Array(n);
  for (let i = 0; i < n; i++) { kh[kvHalfSlot(i, headDim)] = f32ToF16(k[i]!); vh[kvHalfSlot(i, headDim)] = f32ToF16(v[i]!); }
  const shape = { nHead, nHeadKv, headDim, scale: 0.25, window: 0, softcap: 0 };
  for (const [kc, vc] of [[k, v], [kh, vh]] as const) {
    const a = new Float32Array(nTok * nHead * headDim), r = a.slice();
    one.attention(a, q, kc, vc, nTok, start, nHead, nHeadKv, headDim, 0.25);
    jsAttention(r, q, kc, vc, start, nTok, shape, new Float32Array(start + nTok));
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - r[i]!) <= 2e-6 * (1 + Math.abs(r[i]!)), `[${i}] ${a[i]} vs ${r[i]}`);
    if (kc === kh) {
      // and the f16 cache gives what the f32 cache of its values gives (within f16 rounding of k, v)
      const f = new Float32Array(nTok * nHead * headDim);
      one.attention(f, q, k, v, nTok, start, nHead, nHeadKv, headDim, 0.25);
      for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - f[i]!) <= 2e-3 * (1 + Math.abs(f[i]!)), `f16 [${i}] ${a[i]} vs f32 ${f[i]}`);
    }
  }
  assert.throws(() => jsAttention(new Float32Array(nTok * nHead * headDim), q, k, v, 100, nTok, shape, new Float32Array(200)), /do not hold/);
});
