/**
 * createCache(n) reserves the activation memory of a first batch of min(n, batchSize) tokens
 * (TransformerModel.reserve / WasmBackend.reserve): the first prefill then allocates nothing in
 * the wasm memory, for the quantized types whose matmuls stage int8 activations and quads (Q4_0,
 * Q8_0, Q4_K), for F16 and F32 (f32 tiles), at 1 and 2 threads; and reserving leaves the results
 * alone (a second prompt gives the same bits, the reference backend nearly the same logits).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openModelFile } from '../../src/format/open.js';
import { modelAllocator, sharedWasmBackend } from '../../src/model/kernels/wasm/select.js';
import { loadModel, type LoadModelOptions } from '../../src/model/registry.js';
import { synthFile } from '../../src/tools/synth.js';
import { needsShared, sharedPath } from '../helpers.js';

const VOCAB = sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');
const PROMPT = Array.from({ length: 40 }, (_, i) => 100 + ((i * 37) % 900));

function refLogits(path: string): Float32Array {
  const m = loadModel(openModelFile(path), { backend: 'js' });
  return m.forward(PROMPT, m.createCache(PROMPT.length));
}

function cosine(a: Float32Array, b: Float32Array): number {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i]! * b[i]!; aa += a[i]! * a[i]!; bb += b[i]! * b[i]!; }
  return ab / Math.sqrt(aa * bb);
}

test('createCache reserves the first batch: no wasm memory is allocated during the first prefill, results unchanged', { skip: needsShared(), timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-reserve-'));
  const ref = new Map<string, Float32Array>();
  try {
    for (const type of ['Q4_0', 'Q8_0', 'Q4_K', 'F16', 'F32'] as const) {
      const path = join(dir, `${type}.gguf`);
      // width 256: Q4_K's super-blocks fit; a 40-token prompt takes the quad (prefill) kernels
      synthFile(path, { dim: 256, layers: 2, heads: 4, kvHeads: 2, hidden: 512, ctx: 128, seed: 3, vocabFile: VOCAB, type });
      for (const threads of [1, 2]) {
        const be = sharedWasmBackend(threads);
        const load = (o: LoadModelOptions) => loadModel(openModelFile(path, { allocate: modelAllocator({ threads }) }), { backend: 'wasm', threads, kvType: 'f16', ...o });
        const model = load({});
        const cache = model.createCache(PROMPT.length + 8);
        const used = be.heap.used, holes = be.heap.holeBytes;
        const logits = model.forward(PROMPT, cache);
        // (a block taken from a released hole leaves the top where it was)
        assert.equal(be.heap.used, used, `${type} ${threads}T: the first prefill allocated ${be.heap.used - used} bytes`);
        assert.equal(be.heap.holeBytes, holes, `${type} ${threads}T: the first prefill took or released wasm memory`);
        // a second prompt on a fresh cache: the same bits; and the reference backend agrees
        // (int8 activations and an f16 cache move the logits slightly; a rehearsal that
        // computed nothing, or clobbered a live buffer, would not come close)
        assert.deepEqual(model.forward(PROMPT, model.createCache(PROMPT.length + 8)), logits, `${type} ${threads}T: second prefill differs`);
        const cos = cosine(logits, ref.get(type) ?? ref.set(type, refLogits(path)).get(type)!);
        assert.ok(cos > 0.99, `${type} ${threads}T: cosine to the reference backend ${cos}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
