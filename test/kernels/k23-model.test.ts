/**
 * A model file whose matrices are Q2_K and Q3_K (the smallest k-quants of llama.cpp's downloads,
 * e.g. Q2_K, Q3_K_S/M/L files) loads and runs: every path that reads such a weight (token
 * embedding rows, prefill, one-token dots, the classifier) agrees with the reference ('js')
 * backend on the wasm backend, and 1 and 2 threads agree bit for bit.
 * The blocks are random but valid (fixtures' randWeight: every bit pattern of the quants and scales
 * is a block, the f16 super-block scales are set to small values), so the file exercises the
 * formats, not a quantizer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GGMLType } from '../../src/format/dtypes.ts';
import { writeGGUF, type GGUFWriterTensor } from '../../src/format/gguf-writer.ts';
import { openModelFile } from '../../src/format/open.ts';
import { defaultKernelVariant } from '../../src/model/kernels/wasm/module.ts';
import { modelAllocator } from '../../src/model/kernels/wasm/select.ts';
import { loadModel } from '../../src/model/registry.ts';
import type { Model } from '../../src/model/model.ts';
import { openGGUFSource } from '../../src/tools/gguf-source.ts';
import { synthFile } from '../../src/tools/synth.ts';
import { needsShared, sharedPath } from '../helpers.ts';
import { createRng, randWeight } from './fixtures.ts';

const VOCAB = sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');

/** Write `out`: the synthesized F32 model `f32` with every matrix replaced by random blocks of typeOf(name). */
function writeModel(f32: string, out: string, typeOf: (name: string) => GGMLType): void {
  const src = openGGUFSource(f32);
  const tensors: GGUFWriterTensor[] = [];
  let seed = 1;
  try {
    for (const t of src.tensors.values()) {
      if (t.dims.length === 2) {
        const type = typeOf(t.name);
        const w = randWeight(createRng(seed++), type, t.dims[0]!, t.dims[1]!);
        tensors.push({ name: t.name, dims: t.dims, type, data: w.data as Uint8Array });
      } else {
        tensors.push({ name: t.name, dims: t.dims, type: t.type, data: src.read(t.offset, t.dims[0]! * 4).slice() });
      }
    }
    writeGGUF(out, { meta: src.meta, metaTypes: src.metaTypes, tensors, alignment: src.alignment });
  } finally {
    src.close();
  }
}

const PROMPT = [1, 450, 4996, 17354, 1701, 432, 17204, 975, 278, 17366, 11203, 29889];

/** The prompt's logits (every position), then three decode steps', on `m`. */
function run(m: Model): Float32Array[] {
  const cache = m.createCache(32);
  const out = [m.forward(PROMPT, cache, { allLogits: true })];
  for (const t of [263, 1243, 29892]) out.push(m.forward([t], cache));
  return out;
}

/** Per position of every step: [max |Δ| against ref ÷ max |ref|, cosine with ref]. */
function compare(got: Float32Array[], ref: Float32Array[], V: number): [number, number][] {
  const out: [number, number][] = [];
  for (let s = 0; s < ref.length; s++) {
    for (let p = 0; p < ref[s]!.length / V; p++) {
      let max = 0, err = 0, ab = 0, aa = 0, bb = 0;
      for (let i = 0; i < V; i++) {
        const x = got[s]![p * V + i]!, y = ref[s]![p * V + i]!;
        max = Math.max(max, Math.abs(y)); err = Math.max(err, Math.abs(x - y));
        ab += x * y; aa += x * x; bb += y * y;
      }
      assert.ok(aa > 0 && bb > 0, 'logits are all zero');
      out.push([err / max, ab / Math.sqrt(aa * bb)]);
    }
  }
  return out;
}

function load(path: string): { ref: Model; one: Model; two: Model } {
  return {
    ref: loadModel(openModelFile(path), { backend: 'js' }),
    one: loadModel(openModelFile(path, { allocate: modelAllocator({ threads: 1 }) }), { backend: 'wasm', threads: 1 }),
    two: loadModel(openModelFile(path, { allocate: modelAllocator({ threads: 2 }) }), { backend: 'wasm', threads: 2 }),
  };
}

test('Q2_K and Q3_K model files: wasm logits agree with the reference backend, 1 and 2 threads bit-identical', { skip: needsShared(), timeout: 120_000 }, () => {
  process.env['TOKENLOOP_PARALLEL_MIN_MACS'] = '0';
  const dir = mkdtempSync(join(tmpdir(), 'tokenloop-k23-'));
  try {
    const f32 = join(dir, 'f32.gguf');
    synthFile(f32, { dim: 256, layers: 2, heads: 4, kvHeads: 2, hidden: 512, ctx: 128, seed: 9, vocabFile: VOCAB, untied: true });

    // Prompts run Q2_K and Q3_K in f32 (dequantized rows against token tiles), so they agree with
    // the reference closely. Decoding runs the int8 kernels (relaxed build), whose int8
    // activations (per 32 values) move the logits slightly (measured cosine ≥ 0.999 at every
    // step), while a wrong layout or scale gives uncorrelated
    // logits (cosine near 0). In the SIMD128 build decoding runs in f32 too.
    const int8 = defaultKernelVariant() === 'relaxed';
    const models: [string, (name: string) => GGMLType][] = [
      ['Q2_K', () => GGMLType.Q2_K],
      ['Q3_K', (name) => (name === 'token_embd.weight' ? GGMLType.Q2_K : GGMLType.Q3_K)],
    ];
    for (const [label, typeOf] of models) {
      const path = join(dir, `${label}.gguf`);
      writeModel(f32, path, typeOf);
      const { ref, one, two } = load(path);
      const r = run(ref), a = run(one);
      assert.deepEqual(run(two), a, `${label}: 2 threads differ from 1`);
      compare(a, r, ref.config.nVocab).forEach(([rel, cos], i) => {
        if (i < PROMPT.length || !int8) assert.ok(rel <= 1e-4, `${label} row ${i}: |Δlogit| ${rel} of the largest`);
        else assert.ok(cos >= 0.95, `${label} decode step ${i - PROMPT.length + 1}: cosine ${cos} between wasm and reference logits`);
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
