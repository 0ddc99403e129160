/**
 * forward({ allLogits }) with a real-sized vocabulary: the output projection runs a few positions
 * at a time when the result lives outside the wasm memory, so the backend's staging for it stays
 * bounded (it is kept for reuse once made), and every position's logits are still the bits of
 * decoding that position alone (1 and 2 threads).
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

test('allLogits over 32000 tokens: staging bounded, each position the bits of decoding it', { skip: needsShared(), timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-outproj-'));
  try {
    const path = join(dir, 'm.gguf');
    synthFile(path, { dim: 64, layers: 1, heads: 2, kvHeads: 2, hidden: 128, ctx: 256, seed: 5, vocabFile: VOCAB, type: 'Q8_0' });
    const prompt = Array.from({ length: 100 }, (_, i) => 1 + ((i * 7919) % 31999));
    for (const threads of [1, 2]) {
      const be = sharedWasmBackend(threads);
      const model = loadModel(openModelFile(path, { allocate: modelAllocator({ threads }) }), { backend: 'wasm', threads, kvType: 'f16' });
      const V = model.config.nVocab;
      assert.equal(V, 32000);
      const cache = model.createCache(prompt.length);
      const used = be.heap.used;
      const all = model.forward(prompt, cache, { allLogits: true });
      assert.equal(all.length, prompt.length * V);
      // all 100 positions at once would stage 12.8 MB of logits in the wasm memory
      const grew = be.heap.used - used;
      assert.ok(grew <= 5 << 20, `${threads}T: the allLogits call grew the wasm heap by ${grew} bytes`);
      const one = model.createCache(prompt.length);
      for (let t = 0; t < prompt.length; t++) {
        const l = model.forward([prompt[t]!], one);
        assert.deepEqual(l, all.subarray(t * V, (t + 1) * V), `${threads}T: position ${t} differs from decoding it alone`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
