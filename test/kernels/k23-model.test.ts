/**
 * A model file whose matrices are Q2_K and Q3_K (the smallest k-quants of llama.cpp's downloads,
 * e.g. Q2_K, Q3_K_S/M/L files) loads and runs: every path that reads such a weight (token
 * embedding rows, prefill over dequantized rows, fused one-token dots, the classifier) gives the
 * reference ('js') backend's logits on the wasm backend, and 1 and 2 threads agree bit for bit.
 * The blocks are random but valid (every bit pattern of the quants and scales is a block; the f16
 * super-block scales are set to small values), so the file exercises the formats, not a quantizer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GGMLType, blockLayout, f32ToF16 } from '../../src/format/dtypes.ts';
import { writeGGUF, type GGUFWriterTensor } from '../../src/format/gguf-writer.ts';
import { openModelFile } from '../../src/format/open.ts';
import { modelAllocator } from '../../src/model/kernels/wasm/select.ts';
import { loadModel } from '../../src/model/registry.ts';
import { openGGUFSource } from '../../src/tools/gguf-source.ts';
import { synthFile } from '../../src/tools/synth.ts';
import { needsShared, sharedPath } from '../helpers.ts';
import { createRng } from './fixtures.ts';

const VOCAB = sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');

/** Offsets of the f16 super-block scales (Q2_K: d, dmin; Q3_K: d). */
const SCALES: Record<number, number[]> = { [GGMLType.Q2_K]: [80, 82], [GGMLType.Q3_K]: [108] };

function randomBlocks(type: GGMLType, n: number, seed: number): Uint8Array {
  const rng = createRng(seed);
  const { blockElems, blockBytes } = blockLayout(type);
  const bytes = new Uint8Array((n / blockElems) * blockBytes);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rng.next() * 256);
  for (let b = 0; b < n / blockElems; b++) {
    for (const off of SCALES[type]!) {
      const h = f32ToF16(0.002 + rng.next() * 0.01);
      bytes[b * blockBytes + off] = h & 0xff; bytes[b * blockBytes + off + 1] = h >> 8;
    }
  }
  return bytes;
}

test('a Q2_K/Q3_K model: wasm logits equal the reference backend\'s (prefill and decode), 1 and 2 threads bit-identical', { skip: needsShared(), timeout: 120_000 }, () => {
  process.env['TOKENLOOP_PARALLEL_MIN_MACS'] = '0';
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-k23-'));
  try {
    const f32 = join(dir, 'f32.gguf'), k23 = join(dir, 'k23.gguf');
    synthFile(f32, { dim: 256, layers: 2, heads: 4, kvHeads: 2, hidden: 512, ctx: 128, seed: 9, vocabFile: VOCAB, untied: true });
    const src = openGGUFSource(f32);
    const tensors: GGUFWriterTensor[] = [];
    let seed = 1;
    const types = new Set<GGMLType>();
    try {
      for (const t of src.tensors.values()) {
        if (t.dims.length === 2) {
          // attention and the classifier Q3_K, the rest (FFN, embedding) Q2_K
          const type = /attn_|output\.weight/.test(t.name) ? GGMLType.Q3_K : GGMLType.Q2_K;
          types.add(type);
          tensors.push({ name: t.name, dims: t.dims, type, data: randomBlocks(type, t.dims[0]! * t.dims[1]!, seed++) });
        } else {
          tensors.push({ name: t.name, dims: t.dims, type: t.type, data: src.read(t.offset, t.dims[0]! * 4).slice() });
        }
      }
      writeGGUF(k23, { meta: src.meta, metaTypes: src.metaTypes, tensors, alignment: src.alignment });
    } finally {
      src.close();
    }
    assert.deepEqual([...types].sort(), [GGMLType.Q2_K, GGMLType.Q3_K]);

    const ref = loadModel(openModelFile(k23), { backend: 'js' });
    const one = loadModel(openModelFile(k23, { allocate: modelAllocator({ threads: 1 }) }), { backend: 'wasm', threads: 1 });
    const two = loadModel(openModelFile(k23, { allocate: modelAllocator({ threads: 2 }) }), { backend: 'wasm', threads: 2 });
    const prompt = [1, 450, 4996, 17354, 1701, 432, 17204, 975, 278, 17366, 11203, 29889];
    const run = (m: typeof one): Float32Array[] => {
      const cache = m.createCache(32);
      const out = [m.forward(prompt, cache, { allLogits: true })];
      for (const t of [263, 1243, 29892]) out.push(m.forward([t], cache));
      return out;
    };
    const r = run(ref), a = run(one), b = run(two);
    assert.deepEqual(b, a, '2 threads differ from 1');
    const V = ref.config.nVocab;
    for (let s = 0; s < r.length; s++) {
      const rows = r[s]!.length / V;
      for (let p = 0; p < rows; p++) {
        let max = 0, err = 0;
        for (let i = 0; i < V; i++) max = Math.max(max, Math.abs(r[s]![p * V + i]!));
        for (let i = 0; i < V; i++) err = Math.max(err, Math.abs(a[s]![p * V + i]! - r[s]![p * V + i]!));
        assert.ok(max > 0, 'logits are all zero');
        // both dequantize the same blocks exactly; only the f32 summation order differs
        assert.ok(err <= 1e-4 * max, `step ${s} position ${p}: |Δlogit| ${err} vs max |logit| ${max}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
