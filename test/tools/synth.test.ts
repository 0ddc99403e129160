import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthFile, llamaTensorShapes } from '../../src/tools/synth.ts';
import { quantizeFile } from '../../src/tools/quantize.ts';
import { encodeGGUF } from '../../src/format/gguf-writer.ts';
import { decodeValues } from '../../src/tools/tensor-codec.ts';
import { parseGGUF, GGUFValueType as V } from '../../src/format/gguf.ts';
import { GGMLType } from '../../src/format/dtypes.ts';
import { InvalidOptionError, ModelFormatError } from '../../src/errors.ts';
import { needsShared, sharedPath } from '../helpers.ts';

const VOCAB = sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');
const SMALL = { dim: 64, layers: 2, heads: 4, kvHeads: 2, hidden: 80, ctx: 256, vocabFile: VOCAB };
const load = (p: string) => parseGGUF(new Uint8Array(readFileSync(p)), p);

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'tl-synth-'));
  try { fn(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
}

test('synth writes llama.cpp llama-architecture metadata, the Llama 2 vocabulary and the right shapes', { skip: needsShared() }, () => {
  withDir((dir) => {
    const r = synthFile(join(dir, 'm.gguf'), { ...SMALL, seed: 7, untied: true });
    const g = load(join(dir, 'm.gguf'));
    const vocab = load(VOCAB);
    const u32 = (k: string, v: number) => { assert.equal(g.meta.get(k), v, k); assert.equal(g.metaTypes.get(k)!.type, V.UINT32, `type of ${k}`); };
    assert.equal(g.meta.get('general.architecture'), 'llama');
    u32('llama.context_length', 256); u32('llama.embedding_length', 64); u32('llama.block_count', 2);
    u32('llama.feed_forward_length', 80); u32('llama.attention.head_count', 4); u32('llama.attention.head_count_kv', 2);
    u32('llama.rope.dimension_count', 16); u32('llama.vocab_size', 32000); u32('general.file_type', 0);
    assert.equal(g.metaTypes.get('llama.attention.layer_norm_rms_epsilon')!.type, V.FLOAT32);
    let nTok = 0;
    for (const [k, v] of vocab.meta) {
      if (!k.startsWith('tokenizer.')) continue;
      nTok++;
      assert.deepEqual(g.meta.get(k), v, k);
      assert.deepEqual(g.metaTypes.get(k), vocab.metaTypes.get(k), `type of ${k}`);
    }
    assert.ok(nTok >= 8);
    assert.equal((g.meta.get('tokenizer.ggml.tokens') as string[]).length, 32000);
    assert.equal(r.nVocab, 32000);
    const want = llamaTensorShapes({ dim: 64, layers: 2, heads: 4, kvHeads: 2, hidden: 80, nVocab: 32000, untied: true });
    assert.deepEqual([...g.tensors.values()].map((t) => [t.name, t.dims]), want.map((t) => [t.name, t.dims]));
    assert.deepEqual(g.tensors.get('blk.1.attn_k.weight')!.dims, [64, 32], 'GQA: kv dim = head size × kv heads');
    assert.deepEqual(g.tensors.get('blk.0.ffn_down.weight')!.dims, [80, 64]);
    assert.ok(g.tensors.has('output.weight'));
    assert.equal(r.params, want.reduce((s, t) => s + t.dims.reduce((a, b) => a * b, 1), 0));
    // norms are 1; matrices ~ N(0, 1/nIn)
    assert.ok(decodeValues(GGMLType.F32, g.tensors.get('blk.0.ffn_norm.weight')!.data, 64).every((x) => x === 1));
    for (const name of ['token_embd.weight', 'blk.0.ffn_down.weight', 'blk.1.attn_q.weight']) {
      const t = g.tensors.get(name)!;
      const v = decodeValues(GGMLType.F32, t.data, t.dims[0]! * t.dims[1]!);
      const mean = v.reduce((a, b) => a + b, 0) / v.length;
      const std = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length);
      assert.ok(Math.abs(std * Math.sqrt(t.dims[0]!) - 1) < 0.05, `${name} std ${std}`);
      assert.ok(Math.abs(mean) < 4 * std / Math.sqrt(v.length), `${name} mean ${mean}`);
    }
  });
});

test('synth is deterministic for a seed, differs across seeds, and its Q8_0 file equals quantize(F32 file)', { skip: needsShared() }, () => {
  withDir((dir) => {
    synthFile(join(dir, 'a.gguf'), { ...SMALL, seed: 3 });
    synthFile(join(dir, 'b.gguf'), { ...SMALL, seed: 3 });
    synthFile(join(dir, 'c.gguf'), { ...SMALL, seed: 4 });
    const a = readFileSync(join(dir, 'a.gguf'));
    assert.deepEqual(readFileSync(join(dir, 'b.gguf')), a);
    const ta = load(join(dir, 'a.gguf')).tensors.get('blk.0.attn_q.weight')!;
    const tc = load(join(dir, 'c.gguf')).tensors.get('blk.0.attn_q.weight')!;
    assert.notDeepEqual(tc.data, ta.data);
    // Tied by default: no output.weight, token_embd is the classifier and gets Q8_0 in a Q4_0 file.
    assert.equal(load(join(dir, 'a.gguf')).tensors.has('output.weight'), false);
    for (const type of ['Q8_0', 'Q4_0', 'F16']) {
      synthFile(join(dir, `s-${type}.gguf`), { ...SMALL, seed: 3, type });
      quantizeFile(join(dir, 'a.gguf'), join(dir, `q-${type}.gguf`), type);
      assert.deepEqual(readFileSync(join(dir, `s-${type}.gguf`)), readFileSync(join(dir, `q-${type}.gguf`)), type);
    }
    const q4 = load(join(dir, 's-Q4_0.gguf'));
    assert.equal(q4.meta.get('general.file_type'), 2);
    assert.equal(q4.tensors.get('token_embd.weight')!.type, GGMLType.Q8_0);
    assert.equal(q4.tensors.get('blk.0.ffn_gate.weight')!.type, GGMLType.Q4_0);
    assert.equal(q4.tensors.get('blk.0.ffn_down.weight')!.type, GGMLType.F32, 'rows of 80 are not whole Q4_0 blocks');
  });
});

test('synth rejects inconsistent shapes, bad types and non-vocabulary files', { skip: needsShared() }, () => {
  withDir((dir) => {
    const out = join(dir, 'x.gguf');
    assert.throws(() => synthFile(out, { ...SMALL, heads: 5 }), (e: Error) => e instanceof InvalidOptionError && /--dim 64 is not a multiple of --heads 5/.test(e.message));
    assert.throws(() => synthFile(out, { ...SMALL, kvHeads: 3 }), /--heads 4 is not a multiple of --kv-heads 3/);
    assert.throws(() => synthFile(out, { ...SMALL, dim: 12, heads: 4 }), /head size 3 .* must be even/);
    assert.throws(() => synthFile(out, { ...SMALL, layers: 0 }), /--layers must be a positive integer/);
    assert.throws(() => synthFile(out, { ...SMALL, type: 'Q3' }), /unknown type "Q3"/);
    assert.throws(() => synthFile(out, { ...SMALL, vocabFile: join(dir, 'none.gguf') }), (e: Error) => e instanceof ModelFormatError && /not found/.test(e.message));
    writeFileSync(join(dir, 'plain.gguf'), encodeGGUF({ meta: [['general.architecture', 'llama']], tensors: [] }));
    assert.throws(() => synthFile(out, { ...SMALL, vocabFile: join(dir, 'plain.gguf') }), /no tokenizer.ggml.tokens array: not a vocabulary file/);
    assert.throws(() => synthFile(out, { ...SMALL, vocabFile: sharedPath('models', 'stories260K', 'stories260K.bin') }), /not a GGUF file/);
  });
});
