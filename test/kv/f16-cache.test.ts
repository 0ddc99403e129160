import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { F16_TABLE, f32ToF16 } from '../../src/format/dtypes.ts';
import { openModelFile } from '../../src/format/open.ts';
import { KVCache, kvHalfSlot, kvLength } from '../../src/kv/cache.ts';
import { attention as jsAttention } from '../../src/model/kernels/attention.ts';
import { createWasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { loadModel } from '../../src/model/registry.ts';
import { needsShared, sharedPath } from '../helpers.ts';
import { createRng, randF32 } from '../kernels/fixtures.ts';

// The f16 KV cache: the f32 → f16 write (wasm storeHalf) rounds exactly like dtypes.f32ToF16, the
// wasm attention over f16 caches equals the f32 attention over the same (f16-representable)
// values bit for bit, and a model run with kvType 'f16' stays close to its f32 run.
const one = createWasmBackend({ threads: 1 });
const two = createWasmBackend({ threads: 2, parallelMinMacs: 0 });
after(async () => { await one.close(); await two.close(); });

test('storeHalf rounds f32 → f16 to nearest even exactly like f32ToF16, specials included', () => {
  const rng = createRng(21);
  const vals: number[] = [0, -0, 1, -1, 65504, 65519.99, 65520, -65520, 65536, 1e9, -1e9, Infinity, -Infinity, NaN,
    2 ** -14, 2 ** -15, 2 ** -24, 2 ** -25, 2 ** -25 * 1.0001, 2 ** -26, 1.5 * 2 ** -24, 2.5 * 2 ** -24, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 6.1e-5, 1e-40];
  for (let i = 0; i < 20000; i++) {
    const e = Math.floor(rng.next() * 60) - 30; // exponents spanning subnormal … overflow
    vals.push((rng.next() * 2 - 1) * 2 ** e);
  }
  const src = new Float32Array(vals);
  for (const be of [one, two]) {
    const dst = new Uint16Array(src.length + 3);
    be.storeHalf(dst, 2, src, 0, src.length);
    for (let i = 0; i < src.length; i++) assert.equal(dst[2 + i], f32ToF16(src[i]!), `f16(${src[i]}): ${dst[2 + i]!.toString(16)} vs ${f32ToF16(src[i]!).toString(16)}`);
    assert.equal(dst[0], 0); assert.equal(dst[src.length + 2], 0);
  }
});

test('attention over f16 caches: bit-identical to f32 attention over the same values (1 and 2 threads), close to the JS reference', () => {
  const rng = createRng(22);
  for (const [headDim, nHead, nHeadKv] of [[64, 4, 2], [16, 3, 3], [8, 4, 1]] as const) {
    for (const [nTok, start] of [[1, 37], [5, 0], [3, 9]] as const) {
      const kvDim = nHeadKv * headDim, n = kvLength(start + nTok, kvDim);
      const kh = new Uint16Array(n), vh = new Uint16Array(n);
      const kf = new Float32Array(n), vf = new Float32Array(n);
      const k0 = randF32(rng, n, 2), v0 = randF32(rng, n, 2);
      // the f16 cache holds each value of the f32 one in its paired slot (kvHalfSlot)
      for (let i = 0; i < n; i++) {
        const j = kvHalfSlot(i, headDim);
        kh[j] = f32ToF16(k0[i]!); vh[j] = f32ToF16(v0[i]!); kf[i] = F16_TABLE[kh[j]!]!; vf[i] = F16_TABLE[vh[j]!]!;
      }
      const q = randF32(rng, nTok * nHead * headDim);
      const scale = 1 / Math.sqrt(headDim);
      const a = new Float32Array(nTok * nHead * headDim), b = a.slice(), c = a.slice(), r = a.slice();
      one.attention(a, q, kh, vh, nTok, start, nHead, nHeadKv, headDim, scale);
      two.attention(b, q, kh, vh, nTok, start, nHead, nHeadKv, headDim, scale);
      one.attention(c, q, kf, vf, nTok, start, nHead, nHeadKv, headDim, scale);
      assert.deepEqual(b, a, `headDim=${headDim}: 2 threads differ from 1`);
      const what = `headDim=${headDim} nTok=${nTok} start=${start}`;
      // headDim a multiple of 16 takes the vector path, where f16 and f32 caches give the same bits
      if (headDim % 16 === 0) assert.deepEqual(a, c, `${what}: f16 cache differs from the f32 cache of the same values`);
      jsAttention(r, q, kh, vh, start, nTok, { nHead, nHeadKv, headDim, scale, window: 0, softcap: 0 }, new Float32Array(start + nTok));
      for (let i = 0; i < a.length; i++) {
        assert.ok(Math.abs(a[i]! - r[i]!) <= 2e-6 * (1 + Math.abs(r[i]!)), `${what} [${i}]: ${a[i]} vs JS ${r[i]}`);
        assert.ok(Math.abs(c[i]! - r[i]!) <= 2e-6 * (1 + Math.abs(r[i]!)), `${what} [${i}]: f32 ${c[i]} vs JS ${r[i]}`);
      }
    }
  }
});

test('prefill over an f16 cache (16+ queries: widened to f32 one KV head at a time) gives decode\'s bits, 1 and 2 threads, without a layer-sized copy', async () => {
  const rng = createRng(23);
  // GQA and not, MQA; tiles/columns (headDim % 16 = 0) and plain rows; first and later batches, partial last blocks
  for (const [headDim, nHead, nHeadKv] of [[64, 4, 2], [32, 6, 6], [16, 8, 1], [8, 4, 2]] as const) {
    for (const [nTok, start] of [[16, 0], [21, 40], [18, 141]] as const) {
      const qDim = nHead * headDim, kvDim = nHeadKv * headDim, n = kvLength(start + nTok + 5, kvDim);
      const kh = new Uint16Array(n), vh = new Uint16Array(n), kf = new Float32Array(n), vf = new Float32Array(n);
      const k0 = randF32(rng, n, 2), v0 = randF32(rng, n, 2);
      for (let i = 0; i < n; i++) {
        const j = kvHalfSlot(i, headDim);
        kh[j] = f32ToF16(k0[i]!); vh[j] = f32ToF16(v0[i]!); kf[i] = F16_TABLE[kh[j]!]!; vf[i] = F16_TABLE[vh[j]!]!;
      }
      const q = randF32(rng, nTok * qDim), scale = 1 / Math.sqrt(headDim);
      const a = new Float32Array(nTok * qDim), b = a.slice(), c = a.slice(), r = a.slice();
      one.attention(a, q, kh, vh, nTok, start, nHead, nHeadKv, headDim, scale);
      two.attention(b, q, kh, vh, nTok, start, nHead, nHeadKv, headDim, scale);
      one.attention(c, q, kf, vf, nTok, start, nHead, nHeadKv, headDim, scale);
      const what = `headDim=${headDim} heads=${nHead}/${nHeadKv} nTok=${nTok} start=${start}`;
      assert.deepEqual(b, a, `${what}: 2 threads differ from 1`);
      assert.deepEqual(c, a, `${what}: differs from the f32 cache of the same values`);
      for (let t = 0; t < nTok; t++) {
        const o = new Float32Array(qDim);
        one.attention(o, q.subarray(t * qDim, (t + 1) * qDim), kh, vh, 1, start + t, nHead, nHeadKv, headDim, scale);
        if (headDim % 16 === 0) assert.deepEqual(o, a.subarray(t * qDim, (t + 1) * qDim), `${what}: token ${t} decoded alone differs`);
      }
      jsAttention(r, q, kh, vh, start, nTok, { nHead, nHeadKv, headDim, scale, window: 0, softcap: 0 }, new Float32Array(start + nTok));
      for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - r[i]!) <= 2e-6 * (1 + Math.abs(r[i]!)), `${what} [${i}]: ${a[i]} vs JS ${r[i]}`);
    }
  }
  // memory: a 20-token batch after 1000 cached positions of 8 KV heads (a layer's keys as f32: 2 MiB)
  // takes one KV head's keys and values as f32 (0.5 MiB) and the scores' scratch, not the layer's
  const be = createWasmBackend({ threads: 1 });
  try {
    const headDim = 64, nHead = 8, nHeadKv = 8, nTok = 20, start = 1000, n = kvLength(start + nTok, nHeadKv * headDim);
    const kh = be.heap.u16Managed(n), vh = be.heap.u16Managed(n), q = be.heap.f32Managed(nTok * nHead * headDim), out = be.heap.f32Managed(q.length);
    kh.set(Uint16Array.from(randF32(rng, n), f32ToF16)); vh.set(Uint16Array.from(randF32(rng, n), f32ToF16)); q.set(randF32(rng, q.length));
    const used = be.heap.used;
    be.attention(out, q, kh, vh, nTok, start, nHead, nHeadKv, headDim, 0.125);
    const grew = be.heap.used - used;
    assert.ok(grew < 1 << 20, `the widened prefill allocated ${grew} bytes`);
    assert.ok(out.every(Number.isFinite));
  } finally {
    await be.close();
  }
});

test('KVCache f16: half the bytes, forks and copies keep the type, a bad type is rejected', () => {
  const a = new KVCache(2, 8, 10, undefined, undefined, 'f16');
  const b = new KVCache(2, 8, 10);
  assert.equal(a.type, 'f16');
  assert.ok(a.k[0] instanceof Uint16Array && b.k[0] instanceof Float32Array);
  assert.equal(a.capacityBytes * 2, b.capacityBytes);
  (a.k[1] as Uint16Array)[3] = 0x3c00;
  a.advance(1);
  const f = a.fork();
  assert.equal(f.type, 'f16');
  assert.equal((f.k[1] as Uint16Array)[3], 0x3c00);
  assert.throws(() => b.copyFrom(a), /shapes differ/);
  assert.throws(() => new KVCache(1, 8, 4, undefined, undefined, 'q8' as 'f16'), /KV cache type must be "f32" or "f16"/);
});

test('stories260K with an f16 KV cache: logits close to the f32 cache, JS and wasm agree, greedy ids equal', { skip: needsShared() }, () => {
  const path = sharedPath('models', 'stories260K', 'stories260K.gguf');
  const f32 = loadModel(openModelFile(path), { threads: 1 });
  const f16 = loadModel(openModelFile(path), { threads: 1, kvType: 'f16' });
  const f16two = loadModel(openModelFile(path), { threads: 2, kvType: 'f16' });
  const js = loadModel(openModelFile(path), { backend: 'js', kvType: 'f16' });
  const models = [f32, f16, f16two, js];
  const caches = models.map((m) => m.createCache(64));
  assert.equal(caches[1]!.type, 'f16');
  const argmax = (o: Float32Array) => { let b = 0; for (let j = 1; j < o.length; j++) if (o[j]! > o[b]!) b = j; return b; };
  // every model is fed the f32 model's greedy continuation, so their inputs stay the same
  let tok = 1, worst = 0, worstJs = 0, agree = 0;
  for (let step = 0; step < 40; step++) {
    const out = models.map((m, i) => m.forward([tok], caches[i]!));
    for (let i = 0; i < out[0]!.length; i++) {
      worst = Math.max(worst, Math.abs(out[1]![i]! - out[0]![i]!));
      worstJs = Math.max(worstJs, Math.abs(out[1]![i]! - out[3]![i]!));
    }
    assert.deepEqual(out[2], out[1], `step ${step}: 2 threads differ from 1 with the f16 cache`);
    if (argmax(out[1]!) === argmax(out[0]!)) agree++;
    tok = argmax(out[0]!);
  }
  assert.ok(worst > 0, 'the f16 cache changed nothing (not used?)');
  assert.ok(worst < 0.05, `f16 vs f32 cache: max |Δlogit| ${worst}`);
  // The backends' keys differ by f32 rounding (~1e-7); a value that lands near an f16 rounding
  // boundary then rounds to neighbouring halves, so their f16 runs differ by up to ~f16 precision.
  assert.ok(worstJs < 0.02, `f16 cache, wasm vs JS: max |Δlogit| ${worstJs}`);
  assert.ok(agree >= 38, `greedy choice agrees with the f32 cache at only ${agree}/40 steps`);
  assert.equal(caches[1]!.bytes * 2, caches[0]!.bytes);
});
