import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { kvIndex, kvLength, kvSpan } from '../../src/kv/cache.ts';
import { f32ToF16 } from '../../src/format/dtypes.ts';
import { ropeApply } from '../../src/model/kernels/rope.ts';
import { createWasmBackend } from '../../src/model/kernels/wasm/backend.ts';
import { createRng, randF32 } from './fixtures.ts';

const one = createWasmBackend({ threads: 1 });
const two = createWasmBackend({ threads: 2, parallelMinMacs: 0 });
after(async () => { await one.close(); await two.close(); });

function close(a: ArrayLike<number>, b: ArrayLike<number>, tol: number, what: string): void {
  assert.equal(a.length, b.length);
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) <= tol * (1 + Math.abs(b[i]!)), `${what}[${i}]: ${a[i]} vs ${b[i]}`);
}

test('rmsnorm (with and without weight, odd n, offsets) matches f64', () => {
  const rng = createRng(1);
  for (const n of [1, 7, 33, 768]) {
    const x = randF32(rng, n + 3, 4), w = randF32(rng, n);
    for (const ww of [w, null]) {
      const out = new Float32Array(n + 5);
      one.rmsnorm(out, 2, x, 3, ww, n, 1e-5);
      let ss = 0;
      for (let i = 0; i < n; i++) ss += x[3 + i]! ** 2;
      const s = 1 / Math.sqrt(ss / n + 1e-5);
      close(out.subarray(2, 2 + n), Array.from({ length: n }, (_, i) => x[3 + i]! * s * (ww ? ww[i]! : 1)), 2e-6, `rmsnorm n=${n}`);
      assert.equal(out[0], 0); assert.equal(out[n + 2], 0);
    }
  }
});

test('softmax, swiglu, gelu match f64', () => {
  const rng = createRng(2);
  const x = randF32(rng, 101, 20);
  const sm = x.slice();
  one.softmax(sm, 1, 99);
  const mx = Math.max(...x.subarray(1, 100));
  const e = Array.from(x.subarray(1, 100), (v) => Math.exp(v - mx));
  const sum = e.reduce((a, b) => a + b, 0);
  close(sm.subarray(1, 100), e.map((v) => v / sum), 1e-6, 'softmax');
  assert.equal(sm[0], x[0]); assert.equal(sm[100], x[100]);
  const g = randF32(rng, 37, 6), u = randF32(rng, 37, 2), out = new Float32Array(37);
  one.swiglu(out, g, u, 37);
  close(out, Array.from(g, (v, i) => (v / (1 + Math.exp(-v))) * u[i]!), 1e-6, 'swiglu');
  one.gelu(out, g, 37);
  close(out, Array.from(g, (v) => 0.5 * v * (1 + Math.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))), 1e-6, 'gelu');
});

test('swiglu (vector exp) stays within 2 ulp-ish of f64 across the whole range, including overflow and underflow of e^−g', () => {
  const n = 4003; // odd: the scalar tail runs too
  const g = new Float32Array(n), u = new Float32Array(n).fill(1), out = new Float32Array(n);
  for (let i = 0; i < n; i++) g[i] = -120 + (240 * i) / (n - 1);
  g[0] = -1000; g[1] = 1000; g[2] = 0; g[3] = -87.5; g[4] = 88.9;
  one.swiglu(out, g, u, n);
  for (let i = 0; i < n; i++) {
    const v = g[i]!, want = v / (1 + Math.exp(-v));
    assert.ok(Number.isFinite(out[i]!), `swiglu(${v}) = ${out[i]}`);
    assert.ok(Math.abs(out[i]! - want) <= 3e-7 * Math.abs(want) + 1e-30, `swiglu(${v}): ${out[i]} vs ${want}`);
  }
});

test('rope: adjacent pairs and neox halves, partial rotary dims, match f64', () => {
  const rng = createRng(3);
  const nHeads = 3, headDim = 16;
  for (const [ropeDim, neox] of [[16, false], [16, true], [8, true], [8, false]] as const) {
    const x = randF32(rng, nHeads * headDim + 2);
    const y = x.slice();
    one.rope(y, 2, nHeads, headDim, ropeDim, 37, 10000, neox);
    const want = Array.from(x);
    for (let h = 0; h < nHeads; h++) {
      for (let i = 0; i < ropeDim / 2; i++) {
        const th = 37 * 10000 ** (-2 * i / ropeDim);
        const a = 2 + h * headDim + (neox ? i : 2 * i), b = 2 + h * headDim + (neox ? i + ropeDim / 2 : 2 * i + 1);
        want[a] = x[a]! * Math.cos(th) - x[b]! * Math.sin(th);
        want[b] = x[a]! * Math.sin(th) + x[b]! * Math.cos(th);
      }
    }
    close(y, want, 2e-6, `rope dim=${ropeDim} neox=${neox}`);
  }
});

/**
 * Wasm attention (1 and 2 threads, bit-identical) vs an f64 reference, over caches in the layout
 * of kv/cache.ts (blocks of KV_BLOCK positions, head-major, key tiles and value columns inside)
 * with room for `spare` more positions (random values there must not leak in); returns the
 * 1-thread result.
 */
function checkAttention(seed: number, nHead: number, nHeadKv: number, headDim: number, start: number, nTok: number, spare = 3): Float32Array {
  const rng = createRng(seed);
  const n = kvLength(start + nTok + spare, nHeadKv * headDim);
  const k = randF32(rng, n), v = randF32(rng, n), q = randF32(rng, nTok * nHead * headDim);
  const scale = 1 / Math.sqrt(headDim);
  const a = new Float32Array(nTok * nHead * headDim), b = a.slice();
  one.attention(a, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale);
  two.attention(b, q, k, v, nTok, start, nHead, nHeadKv, headDim, scale);
  assert.deepEqual(b, a);
  const want: number[] = [];
  for (let t = 0; t < nTok; t++) {
    for (let h = 0; h < nHead; h++) {
      const kh = Math.floor(h / (nHead / nHeadKv)), nPos = start + t + 1;
      const s: number[] = [];
      for (let p = 0; p < nPos; p++) {
        let d = 0;
        for (let i = 0; i < headDim; i++) d += q[(t * nHead + h) * headDim + i]! * k[kvIndex(true, kh, p, i, nHeadKv, headDim)]!;
        s.push(d * scale);
      }
      const m = Math.max(...s), e = s.map((z) => Math.exp(z - m)), z = e.reduce((x, y) => x + y, 0);
      for (let i = 0; i < headDim; i++) {
        let o = 0;
        for (let p = 0; p < nPos; p++) o += (e[p]! / z) * v[kvIndex(false, kh, p, i, nHeadKv, headDim)]!;
        want.push(o);
      }
    }
  }
  close(a, want, 2e-6, `attention headDim=${headDim} start=${start}`);
  // the same queries one call per token (decode) give the same bits as one call for all (prefill,
  // which runs queries in pairs), with an f32 and with an f16 cache
  const qDim = nHead * headDim;
  const kh = Uint16Array.from(k, f32ToF16), vh = Uint16Array.from(v, f32ToF16);
  const ah = new Float32Array(nTok * qDim);
  one.attention(ah, q, kh, vh, nTok, start, nHead, nHeadKv, headDim, scale);
  for (let t = 0; t < nTok; t++) {
    const o = new Float32Array(qDim), oh = new Float32Array(qDim), o2 = new Float32Array(qDim), oh2 = new Float32Array(qDim);
    one.attention(o, q.subarray(t * qDim, (t + 1) * qDim), k, v, 1, start + t, nHead, nHeadKv, headDim, scale);
    assert.deepEqual(o, a.subarray(t * qDim, (t + 1) * qDim), `token ${t} decoded alone`);
    one.attention(oh, q.subarray(t * qDim, (t + 1) * qDim), kh, vh, 1, start + t, nHead, nHeadKv, headDim, scale);
    assert.deepEqual(oh, ah.subarray(t * qDim, (t + 1) * qDim), `token ${t} decoded alone (f16 cache)`);
    // two threads decoding split the positions' segments between them (past 64 positions), the same bits
    two.attention(o2, q.subarray(t * qDim, (t + 1) * qDim), k, v, 1, start + t, nHead, nHeadKv, headDim, scale);
    assert.deepEqual(o2, o, `token ${t} decoded alone, two threads`);
    two.attention(oh2, q.subarray(t * qDim, (t + 1) * qDim), kh, vh, 1, start + t, nHead, nHeadKv, headDim, scale);
    assert.deepEqual(oh2, oh, `token ${t} decoded alone, two threads (f16 cache)`);
  }
  return a;
}

test('attention (GQA, causal, several queries) matches f64; 1 and 2 threads bit-identical', () => {
  const nHead = 6, nHeadKv = 2, headDim = 10, start = 5, nTok = 3;
  const a = checkAttention(4, nHead, nHeadKv, headDim, start, nTok);
  const q = new Float32Array(nTok * nHead * headDim), k = new Float32Array((start + nTok) * nHeadKv * headDim), v = k.slice();
  const scale = 1 / Math.sqrt(headDim);
  assert.throws(() => one.attention(a, q, k, v, nTok, start, 5, 2, headDim, scale), /not a multiple/);
  // a cache too short for the attended positions is refused (not read out of bounds)
  const full = new Float32Array(kvSpan(start + nTok, nHeadKv, headDim));
  assert.throws(() => one.attention(a, q, full.subarray(1), full, nTok, start, nHead, nHeadKv, headDim, scale), /do not hold/);
  assert.throws(() => one.attention(a, q, full, full, nTok, 32, nHead, nHeadKv, headDim, scale), /do not hold/);
});

test('attention with headDim a multiple of 16 (vectorised path: four keys per step, values 16 dims per pass, block by block) matches f64', () => {
  checkAttention(5, 4, 2, 64, 37, 3); // two blocks, the second partial
  checkAttention(6, 3, 3, 32, 0, 1);
  checkAttention(7, 2, 1, 80, 200, 2);
  checkAttention(8, 2, 2, 128, 14, 4); // positions 15..18: the four-key loop and its tail
  checkAttention(9, 8, 2, 64, 63, 1, 0); // exactly two full blocks
  checkAttention(10, 5, 5, 16, 130, 1);
  checkAttention(11, 6, 2, 64, 30, 5); // queries on both sides of a block edge, odd positions per block end
  checkAttention(12, 4, 2, 64, 31, 4); // a pair whose first query ends a block: the second's last position opens the next
  checkAttention(13, 2, 1, 32, 60, 7); // pairs with an even and an odd count in the last block, and a single query
  checkAttention(16, 4, 2, 64, 25, 21); // 16+ queries: an f16 cache is widened to f32 first, the same bits
});

test('attention past one segment (128 positions): segments folded in order give the same bits decoded, prefilled in pairs, on one thread or two (segments split between threads)', () => {
  checkAttention(18, 4, 2, 64, 124, 9); // queries on both sides of the first segment edge
  checkAttention(19, 6, 3, 64, 127, 3); // a pair whose first query ends a segment: the second opens the next alone
  checkAttention(20, 12, 12, 64, 300, 2); // 110M's heads, three segments (the last partial)
  checkAttention(21, 3, 1, 32, 500, 20); // 16+ queries over f16 (widened) and four or five segments, GQA
  checkAttention(22, 5, 5, 16, 639, 1, 0); // exactly five full segments, an odd head count
  checkAttention(23, 4, 2, 10, 122, 12); // rows (other head sizes) across the segment edge
});

test('attention for other head sizes (rows): prefill in query pairs equals decoding one token at a time, across a block edge', () => {
  checkAttention(14, 4, 2, 10, 29, 6);
  checkAttention(15, 3, 3, 8, 31, 3);
  checkAttention(17, 3, 3, 8, 31, 18); // 16+ queries: an f16 cache is widened to f32 first
});

test('add: residual sum, aliasing the output with an input, odd n', () => {
  const rng = createRng(8);
  for (const n of [1, 5, 768, 771]) {
    const a = randF32(rng, n), b = randF32(rng, n);
    const want = Array.from(a, (x, i) => Math.fround(x + b[i]!));
    const out = new Float32Array(n);
    one.add(out, a, b, n);
    close(out, want, 0, 'add');
    one.add(a, a, b, n);
    close(a, want, 0, 'add in place');
  }
});

test('rmsnormRows equals rmsnorm row by row; swiglu split across two threads equals one thread bit for bit (awkward n)', () => {
  const rng = createRng(77);
  for (const [n, rows] of [[7, 3], [768, 5], [33, 1]] as const) {
    const x = randF32(rng, n * rows, 3), w = randF32(rng, n);
    for (const ww of [w, null]) {
      const a = new Float32Array(n * rows), b = new Float32Array(n * rows);
      one.rmsnormRows(a, x, ww, n, rows, 1e-6);
      for (let r = 0; r < rows; r++) one.rmsnorm(b, r * n, x, r * n, ww, n, 1e-6);
      assert.deepEqual(a, b, `n=${n} rows=${rows} weight=${ww !== null}`);
    }
  }
  for (const n of [17, 4099, 100003]) {
    const g = randF32(rng, n, 12), u = randF32(rng, n);
    const a = new Float32Array(n), b = new Float32Array(n);
    one.swiglu(a, g, u, n);
    two.swiglu(b, g, u, n);
    assert.deepEqual(b, a, `swiglu n=${n}: 2 threads differ from 1`);
  }
});

test('ropeRows equals the TypeScript ropeApply row by row bit for bit (adjacent pairs and neox, partial rotary dims), and refuses rotated dims wider than a head', () => {
  const rng = createRng(91);
  for (const [nTok, nHeads, headDim, nRot] of [[5, 3, 16, 16], [3, 2, 64, 32], [1, 4, 8, 8], [7, 1, 10, 6]] as const) {
    const half = nRot >> 1;
    const x = randF32(rng, nTok * nHeads * headDim, 3);
    const cos = randF32(rng, nTok * half), sin = randF32(rng, nTok * half);
    for (const neox of [false, true]) {
      const a = x.slice(), b = x.slice();
      one.ropeRows(a, nTok, nHeads, headDim, nRot, cos, sin, neox);
      for (let t = 0; t < nTok; t++) ropeApply(b, t * nHeads * headDim, nHeads, headDim, nRot, cos, sin, t * half, neox);
      assert.deepEqual(a, b, `nTok=${nTok} heads=${nHeads} headDim=${headDim} nRot=${nRot} neox=${neox}`);
    }
  }
  assert.throws(() => one.ropeRows(new Float32Array(16), 1, 2, 8, 10, new Float32Array(5), new Float32Array(5), false), /rotated dims/);
});
