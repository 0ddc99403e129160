import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { f32ToF16 } from '../../src/format/dtypes.ts';
import { KVCache, KV_BLOCK, kvLength, kvOffset } from '../../src/kv/cache.ts';
import { attention as jsAttention } from '../../src/model/kernels/attention.ts';
import { createWasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { createRng, randF32 } from '../kernels/fixtures.ts';

// The KV cache layout (src/kv/cache.ts): blocks of KV_BLOCK positions, head-major inside, so
// position p of KV head h sits at ((⌊p/B⌋·heads + h)·B + p mod B)·headDim. Kept through forks and
// copies between caches of different capacities, written the same way by the wasm storeKV and
// by plain TypeScript, read the same way by both attention kernels.
const one = createWasmBackend({ threads: 1 });
after(async () => { await one.close(); });

/** A cache of `len` positions whose value at (layer l, head h, position p, dim i) encodes all four. */
function filled(capacity: number, len: number): KVCache {
  const c = new KVCache(2, 3 * 4, capacity, undefined, undefined, 'f32', 3);
  const code = (l: number, h: number, p: number, i: number) => 100000 * l + 10000 * h + 10 * p + i;
  for (let l = 0; l < 2; l++) {
    for (let h = 0; h < 3; h++) {
      for (let p = 0; p < len; p++) {
        for (let i = 0; i < 4; i++) { c.k[l]![c.offset(h, p) + i] = code(l, h, p, i); c.v[l]![c.offset(h, p) + i] = -code(l, h, p, i); }
      }
    }
  }
  c.advance(len);
  return c;
}

test('KV layout: block-major offsets, whole blocks allocated, every (head, position) its own slot', () => {
  assert.equal(KV_BLOCK, 32);
  assert.equal(kvOffset(0, 0, 3, 4), 0);
  assert.equal(kvOffset(0, 1, 3, 4), 4);
  assert.equal(kvOffset(1, 0, 3, 4), 32 * 4);
  assert.equal(kvOffset(2, 31, 3, 4), (2 * 32 + 31) * 4);
  assert.equal(kvOffset(0, 32, 3, 4), 3 * 32 * 4);
  assert.equal(kvOffset(1, 33, 1 * 3, 4), ((1 * 3 + 1) * 32 + 1) * 4);
  assert.equal(kvLength(1, 12), 32 * 12);
  assert.equal(kvLength(33, 12), 64 * 12);
  // with one head the layout is plain rows
  for (let p = 0; p < 70; p++) assert.equal(kvOffset(0, p, 1, 12), p * 12);
  // the slots of 3 heads × 70 positions tile the buffer without overlap
  const seen = new Set<number>();
  for (let h = 0; h < 3; h++) for (let p = 0; p < 70; p++) { const o = kvOffset(h, p, 3, 4); assert.ok(o % 4 === 0 && o + 4 <= kvLength(70, 12)); seen.add(o); }
  assert.equal(seen.size, 210);
  const c = new KVCache(2, 12, 40, undefined, undefined, 'f32', 3);
  assert.equal(c.k[0]!.length, kvLength(40, 12));
  assert.equal(c.capacityBytes, kvLength(40, 12) * 4 * 2 * 2);
});

test('KVCache forks and copies between capacities keep every (head, position)', () => {
  const a = filled(70, 45);
  for (const cap of [45, 100]) {
    const f = a.fork(cap);
    assert.equal(f.heads, 3);
    assert.equal(f.length, 45);
    for (let l = 0; l < 2; l++) {
      for (let h = 0; h < 3; h++) {
        for (let p = 0; p < 45; p++) {
          assert.equal(f.k[l]![f.offset(h, p) + 2], 100000 * l + 10000 * h + 10 * p + 2, `cap ${cap}: k l${l} h${h} p${p}`);
          assert.equal(f.v[l]![f.offset(h, p) + 3], -(100000 * l + 10000 * h + 10 * p + 3));
        }
      }
    }
  }
  assert.throws(() => a.fork(44), /fork capacity 44 < cached length 45/);
  assert.throws(() => new KVCache(2, 12, 6, undefined, undefined, 'f32', 5), /do not split into 5 heads/);
  assert.throws(() => new KVCache(2, 12, 70, undefined, undefined, 'f32', 4).copyFrom(a), /shapes differ/);
  assert.throws(() => new KVCache(2, 12, 40, undefined, undefined, 'f32', 3).copyFrom(a), /shapes differ/);
});

test('wasm storeKV writes the cache layout exactly as TypeScript does (f32, and f16 bits rounded like f32ToF16)', () => {
  const rng = createRng(31);
  const heads = 3, headDim = 8, pos0 = 29, nTok = 6; // positions 29..34 cross a block edge
  const src = randF32(rng, nTok * heads * headDim, 3);
  const n = kvLength(pos0 + nTok, heads * headDim);
  for (const half of [false, true]) {
    const got = half ? one.heap.u16Managed(n) : one.heap.f32Managed(n);
    got.fill(0);
    one.storeKV(got, src, nTok, heads, headDim, pos0);
    const want = half ? new Uint16Array(n) : new Float32Array(n);
    for (let t = 0; t < nTok; t++) {
      for (let h = 0; h < heads; h++) {
        for (let i = 0; i < headDim; i++) {
          const x = src[(t * heads + h) * headDim + i]!;
          want[kvOffset(h, pos0 + t, heads, headDim) + i] = half ? f32ToF16(x) : x;
        }
      }
    }
    assert.deepEqual(got, want, half ? 'f16' : 'f32');
  }
  assert.throws(() => one.storeKV(new Float32Array(n), src, nTok, heads, headDim, pos0), /allocated in its memory/);
  assert.throws(() => one.storeKV(one.heap.f32Managed(n), src, nTok, heads, headDim, 60), /cannot take positions/);
});

test('TypeScript and wasm attention read the same cache (GQA, spare room, several blocks, f32 and f16)', () => {
  const rng = createRng(32);
  const nHead = 4, nHeadKv = 2, headDim = 16, start = 40, nTok = 3;
  const n = kvLength(start + nTok + 30, nHeadKv * headDim);
  const k = randF32(rng, n), v = randF32(rng, n), q = randF32(rng, nTok * nHead * headDim);
  const kh = Uint16Array.from(k, f32ToF16), vh = Uint16Array.from(v, f32ToF16);
  const shape = { nHead, nHeadKv, headDim, scale: 0.25, window: 0, softcap: 0 };
  for (const [kc, vc] of [[k, v], [kh, vh]] as const) {
    const a = new Float32Array(nTok * nHead * headDim), r = a.slice();
    one.attention(a, q, kc, vc, nTok, start, nHead, nHeadKv, headDim, 0.25);
    jsAttention(r, q, kc, vc, start, nTok, shape, new Float32Array(start + nTok));
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - r[i]!) <= 2e-6 * (1 + Math.abs(r[i]!)), `[${i}] ${a[i]} vs ${r[i]}`);
  }
  assert.throws(() => jsAttention(new Float32Array(nTok * nHead * headDim), q, k, v, 100, nTok, shape, new Float32Array(200)), /do not hold/);
});
