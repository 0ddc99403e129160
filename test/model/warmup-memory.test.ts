/**
 * The load-time warm-up (TransformerModel.warmup) runs on a throwaway cache; its cache and its
 * batch scratch go back to the wasm heap, so the first real cache reuses that memory instead of
 * growing the wasm memory (whose pages stay resident once written). Its own file: a fresh process,
 * so the shared backend's heap holds only this model.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openModelFile } from '../../src/format/open.js';
import { modelAllocator, sharedWasmBackend } from '../../src/model/kernels/wasm/select.js';
import { loadModel } from '../../src/model/registry.js';
import { synthFile } from '../../src/tools/synth.js';
import { needsShared, sharedPath } from '../helpers.js';

const VOCAB = sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');

test('the warm-up gives its cache and scratch back; a cache of its size then grows nothing', { skip: needsShared(), timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-warmup-'));
  try {
    const path = join(dir, 'm.gguf');
    synthFile(path, { dim: 256, layers: 2, heads: 4, kvHeads: 2, hidden: 512, ctx: 128, seed: 5, vocabFile: VOCAB, type: 'Q8_0' });
    const be = sharedWasmBackend(1);
    const open = () => openModelFile(path, { allocate: modelAllocator({ threads: 1 }) });
    const cold = loadModel(open(), { backend: 'wasm', threads: 1, warmup: false });
    assert.equal(be.heap.holeBytes, 0, 'nothing released without a warm-up');
    const model = loadModel(open(), { backend: 'wasm', threads: 1 });
    // 2 layers × K and V × 32 positions (one cache block) × 128 values × 4 bytes, plus the scratch
    const warmCache = 2 * 2 * 32 * 128 * 4;
    assert.ok(be.heap.holeBytes > warmCache, `released ${be.heap.holeBytes} bytes, expected more than the warm-up cache's ${warmCache}`);
    const used = be.heap.used, holes = be.heap.holeBytes;
    const cache = model.createCache(9);
    assert.equal(be.heap.used, used, 'the cache and its batch came from the released memory');
    assert.ok(be.heap.holeBytes < holes - warmCache + 1);
    // and the model computes as one loaded without a warm-up
    const prompt = [1, 15, 300, 42, 7, 99, 1000, 5];
    assert.deepEqual(model.forward(prompt, cache), cold.forward(prompt, cold.createCache(9)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
