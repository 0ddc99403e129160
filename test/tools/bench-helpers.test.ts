import { test } from 'node:test';
import assert from 'node:assert/strict';
import { idleWorkerBytes } from '../../bench/idle-worker.ts';
import { bandwidthBuffer, readerModuleBytes, measureBandwidth } from '../../bench/bandwidth.ts';
import { DEFAULT_MODELS, benchShape, benchTokens, bytesPerToken, memoryShare, runTokenloop } from '../../bench/compare.ts';
import { needsShared, sharedPath } from '../helpers.ts';
import { readFileSync, statSync } from 'node:fs';
import { parseGGUF } from '../../src/format/gguf.ts';

const Wasm = (globalThis as unknown as { WebAssembly: {
  Memory: new (d: { initial: number; maximum: number; shared: boolean }) => { buffer: SharedArrayBuffer };
  Module: new (b: Uint8Array) => object;
  Instance: new (m: object, i: object) => { exports: { sum: (p: number, end: number) => number } };
} }).WebAssembly;

test('bandwidth reader (hand-assembled wasm) reads every 16-byte lane of its range', () => {
  const memory = new Wasm.Memory({ initial: 1, maximum: 1, shared: true });
  const u32 = new Uint32Array(memory.buffer);
  for (let i = 0; i < u32.length; i++) u32[i] = i;
  const { sum } = new Wasm.Instance(new Wasm.Module(readerModuleBytes()), { e: { m: memory } }).exports;
  // lane 0 accumulates the u32 at every index ≡ 0 (mod 4) in [start, end)
  const expect = (from: number, to: number) => { let s = 0; for (let i = from / 4; i < to / 4; i += 4) s = (s + i) | 0; return s; };
  assert.equal(sum(0, 65536), expect(0, 65536));
  assert.equal(sum(1024, 4096), expect(1024, 4096));
});

test('measureBandwidth reports a plausible rate', async () => {
  const r = await measureBandwidth(1, 64, 1);
  assert.ok(r.bytesPerSec > 5e8 && r.bytesPerSec < 1e12, `${r.bytesPerSec} B/s`);
});

test('measureBandwidth streams one buffer per process, not a new one per call', async () => {
  // a compare run measures hundreds of times: a 256 MiB buffer each had grown one to 24 GB
  const a = bandwidthBuffer(16);
  assert.equal(a.memory.buffer.byteLength, 16 << 20);
  assert.equal(new Uint32Array(a.memory.buffer)[12345], 0x01010101); // committed, not zero pages
  await measureBandwidth(1, 16, 1);
  await measureBandwidth(2, 16, 1);
  assert.equal(bandwidthBuffer(16), a);
  // another size replaces it
  const b = bandwidthBuffer(8);
  assert.notEqual(b, a);
  assert.equal(b.memory.buffer.byteLength, 8 << 20);
});

test('bench prompt ids and weight bytes per decoded token', { skip: needsShared() }, () => {
  const t = benchTokens(128, 512);
  assert.equal(t.length, 129);
  assert.equal(t[0], 1);
  assert.ok(t.slice(1).every((id) => id >= 3 && id < 512));
  // stories260K has its own output.weight, so token_embd counts one row (64 f32) per token.
  const path = sharedPath('models', 'stories260K', 'stories260K.gguf');
  const g = parseGGUF(new Uint8Array(readFileSync(path)));
  const total = [...g.tensors.values()].reduce((s, x) => s + x.byteLength, 0);
  assert.equal(bytesPerToken(path), total - 64 * 512 * 4 + 64 * 4);
});

test('memory share: what the engine added to its process, against the model file plus the KV cache', () => {
  const MiB = 1 << 20;
  assert.equal(memoryShare({ peakRssBytes: 200 * MiB, baseRssBytes: 80 * MiB, fileBytes: 100 * MiB, cacheBytes: 20 * MiB }), 1);
  assert.equal(memoryShare({ peakRssBytes: 150 * MiB, baseRssBytes: 40 * MiB, fileBytes: 90 * MiB, cacheBytes: 10 * MiB }), 1.1);
  // a run without its baseline or sizes (a failed or older worker): no share
  assert.ok(Number.isNaN(memoryShare({ peakRssBytes: 150 * MiB })));
  assert.ok(Number.isNaN(memoryShare({ peakRssBytes: 150 * MiB, baseRssBytes: 40 * MiB })));
  // less a runtime share (compare's idle-worker column): 10 MiB of the 110 left out
  assert.equal(memoryShare({ peakRssBytes: 150 * MiB, baseRssBytes: 40 * MiB, fileBytes: 90 * MiB, cacheBytes: 10 * MiB }, 10 * MiB), 1);
});

test('idleWorkerBytes: what one parked Node worker thread adds to a fresh process', () => {
  // a Node worker has its own V8 heap, malloc arena and stack: megabytes, not bytes, and not hundreds
  const MiB = 1 << 20, b = idleWorkerBytes(3);
  assert.ok(b > 1 * MiB && b < 64 * MiB, `${b} bytes`);
});

test('the tokenloop bench worker reports what the memory share needs', { skip: needsShared() }, async () => {
  const path = sharedPath('models', 'stories260K', 'stories260K.gguf');
  const o = await runTokenloop(path, 1, benchTokens(8, 512), 4, 'f16');
  assert.equal(o.ok, true, o.error);
  assert.equal(o.fileBytes, statSync(path).size);
  // stories260K: 5 layers, 4 KV heads of 8 (kv dim 32 = 64·4/8), f16, 8 + 4 + 1 positions (rounded up by the cache)
  assert.ok(o.cacheBytes !== undefined && o.cacheBytes >= 13 * 32 * 2 * 5 * 2, `${o.cacheBytes}`);
  assert.ok(o.baseRssBytes !== undefined && o.peakRssBytes > o.baseRssBytes);
  const share = memoryShare(o);
  assert.ok(Number.isFinite(share) && share > 0, `${share}`);
});

test('bench shapes: the 1B shape is grouped-query and opt-in, the stories shapes are not grouped', () => {
  assert.deepEqual(benchShape('1B'), { dim: 2048, layers: 22, heads: 32, kvHeads: 4, hidden: 5632 });
  for (const m of ['15M', '110M']) {
    const s = benchShape(m)!;
    assert.equal(s.kvHeads, s.heads, m);
  }
  assert.equal(benchShape('stories260K'), null);
  assert.throws(() => benchShape('7B'), /unknown model "7B"/);
  assert.ok(!DEFAULT_MODELS.includes('1B'));
});
