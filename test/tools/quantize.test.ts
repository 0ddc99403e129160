import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quantizeFile } from '../../src/tools/quantize.ts';
import { decodeValues, encodeValues } from '../../src/tools/tensor-codec.ts';
import { parseGGUF, GGUFValueType as V } from '../../src/format/gguf.ts';
import { byteSize, f32ToF16, F16_TABLE, GGMLType } from '../../src/format/dtypes.ts';
import { InvalidOptionError, ModelFormatError, UnsupportedError } from '../../src/errors.ts';
import { needsShared, sharedPath } from '../helpers.ts';

const STORIES = sharedPath('models', 'stories260K', 'stories260K.gguf');
const load = (p: string) => parseGGUF(new Uint8Array(readFileSync(p)), p);
const f32Of = (t: { data: Uint8Array; type: GGMLType; dims: number[] }) => decodeValues(t.type, t.data, t.dims.reduce((a, b) => a * b, 1));

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'tl-quant-'));
  try { fn(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
}

test('Q8_0 and Q4_0 blocks match ggml reference rounding (roundf halves away from zero, nibble order, clamp)', () => {
  // amax 127 → d = 1 exactly, so q = roundf(x).
  const x = new Float32Array(32);
  x[0] = 127; x[1] = -2.5; x[2] = 2.5; x[3] = 0.49; x[4] = -127; x[5] = 3.5;
  const q8 = encodeValues(GGMLType.Q8_0, x);
  assert.equal(q8.length, 34);
  assert.equal(new DataView(q8.buffer).getUint16(0, true), f32ToF16(1));
  assert.deepEqual([...new Int8Array(q8.buffer, 2, 6)], [127, -3, 3, 0, -127, 4]);
  // Q4_0: the largest-magnitude value is -8 → d = 1; q = min(15, trunc(x + 8.5)); byte j = e[j] | e[j+16] << 4.
  const y = new Float32Array(32);
  y[0] = -8; y[1] = 7; y[2] = 8; y[3] = 0.5; y[4] = -0.5; y[16] = 1; y[17] = -3;
  const q4 = encodeValues(GGMLType.Q4_0, y);
  assert.equal(q4.length, 18);
  assert.equal(F16_TABLE[new DataView(q4.buffer).getUint16(0, true)], 1);
  const nib = (j: number) => (j < 16 ? q4[2 + j]! & 15 : q4[2 + j - 16]! >> 4);
  assert.deepEqual([0, 1, 2, 3, 4, 16, 17].map(nib), [0, 15, 15, 9, 8, 9, 5]);
  assert.deepEqual([...decodeValues(GGMLType.Q4_0, q4, 32).subarray(0, 5)], [-8, 7, 7, 1, 0]);
  // all-zero block: scale 0, values decode to 0
  assert.deepEqual([...decodeValues(GGMLType.Q8_0, encodeValues(GGMLType.Q8_0, new Float32Array(32)), 32)], new Array(32).fill(0));
  // Q5_0: the largest-magnitude value is -16 → d = 1; q = min(31, trunc(x + 16.5)), fifth bits in qh (bit e for element e)
  const z = new Float32Array(32);
  z[0] = -16; z[1] = 15; z[2] = 16; z[3] = 0.5; z[4] = -0.5; z[16] = 1; z[17] = -3; z[31] = 9.25;
  const q5 = encodeValues(GGMLType.Q5_0, z);
  assert.equal(q5.length, 22);
  assert.equal(F16_TABLE[new DataView(q5.buffer).getUint16(0, true)], 1);
  const qh = new DataView(q5.buffer).getUint32(2, true);
  const q5v = (j: number) => (j < 16 ? q5[6 + j]! & 15 : q5[6 + j - 16]! >> 4) | (((qh >>> j) & 1) << 4);
  assert.deepEqual([0, 1, 2, 3, 4, 16, 17, 31].map(q5v), [0, 31, 31, 17, 16, 17, 13, 25]);
  assert.deepEqual([...decodeValues(GGMLType.Q5_0, q5, 32)].filter((_, i) => [0, 1, 2, 3, 4, 16, 17, 31].includes(i)), [-16, 15, 15, 1, 0, 1, -3, 9]);
});

test('quantize stories260K to Q8_0: llama.cpp tensor choices, file_type 7, metadata kept, values within tolerance', { skip: needsShared() }, () => {
  withDir((dir) => {
    const out = join(dir, 'q8.gguf');
    const r = quantizeFile(STORIES, out, 'q8_0');
    const src = load(STORIES), dst = load(out);
    assert.equal(dst.meta.get('general.file_type'), 7);
    assert.equal(dst.metaTypes.get('general.file_type')!.type, V.UINT32);
    assert.equal(dst.meta.get('general.quantization_version'), 2);
    for (const [k, v] of src.meta) {
      assert.deepEqual(dst.meta.get(k), v, k);
      assert.deepEqual(dst.metaTypes.get(k), src.metaTypes.get(k), `type of ${k}`);
    }
    assert.deepEqual([...dst.tensors.keys()], [...src.tensors.keys()]);
    let maxRel = 0;
    for (const s of src.tensors.values()) {
      const d = dst.tensors.get(s.name)!;
      assert.deepEqual(d.dims, s.dims);
      // 2-D weights with whole 32-blocks become Q8_0; norms stay F32; ffn_down rows (172) are not whole blocks.
      const expected = s.dims.length === 2 && s.dims[0]! % 32 === 0 ? GGMLType.Q8_0 : GGMLType.F32;
      assert.equal(d.type, expected, s.name);
      assert.equal(d.byteLength, byteSize(expected, s.dims[0]! * (s.dims[1] ?? 1)));
      const a = f32Of(s), b = f32Of(d);
      if (expected === GGMLType.F32) { assert.deepEqual(b, a, s.name); continue; }
      // Q8_0 error bound per block: half a step (amax/254) plus the f16 rounding of the scale (≤ amax·2⁻¹¹).
      for (let blk = 0; blk < a.length; blk += 32) {
        let amax = 0;
        for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(a[blk + j]!));
        for (let j = 0; j < 32; j++) {
          const err = Math.abs(a[blk + j]! - b[blk + j]!);
          assert.ok(err <= amax * (0.5 / 127 + 1 / 2048) + 1e-12, `${s.name}[${blk + j}] error ${err} > bound for amax ${amax}`);
          if (amax > 0) maxRel = Math.max(maxRel, err / amax);
        }
      }
    }
    assert.ok(maxRel > 0.001, 'quantization actually happened');
    assert.deepEqual(r.counts, { Q8_0: 32, F32: 16 }); // 5 layers × 6 matrices + embeddings + output; 2 norms + ffn_down per layer + output_norm
    assert.ok(r.outputBytes < r.inputBytes * 0.45);
  });
});

test('Q4_0: the classifier gets Q8_0 (llama.cpp would use Q6_K), the rest Q4_0 within d; --pure gives all Q4_0', { skip: needsShared() }, () => {
  withDir((dir) => {
    quantizeFile(STORIES, join(dir, 'q4.gguf'), 'Q4_0');
    quantizeFile(STORIES, join(dir, 'q4p.gguf'), 'Q4_0', { pure: true });
    const src = load(STORIES), q4 = load(join(dir, 'q4.gguf')), pure = load(join(dir, 'q4p.gguf'));
    assert.equal(q4.meta.get('general.file_type'), 2);
    assert.equal(q4.tensors.get('output.weight')!.type, GGMLType.Q8_0);
    assert.equal(q4.tensors.get('token_embd.weight')!.type, GGMLType.Q4_0);
    assert.equal(q4.tensors.get('blk.0.attn_q.weight')!.type, GGMLType.Q4_0);
    assert.equal(q4.tensors.get('blk.0.ffn_down.weight')!.type, GGMLType.F32);
    assert.equal(pure.tensors.get('output.weight')!.type, GGMLType.Q4_0);
    const a = f32Of(src.tensors.get('blk.1.ffn_up.weight')!), b = f32Of(q4.tensors.get('blk.1.ffn_up.weight')!);
    for (let blk = 0; blk < a.length; blk += 32) {
      let amax = 0;
      for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(a[blk + j]!));
      // step d = amax/8; the value opposite the extreme may clamp, costing up to one step.
      for (let j = 0; j < 32; j++) assert.ok(Math.abs(a[blk + j]! - b[blk + j]!) <= (amax / 8) * (1 + 1 / 512));
    }
  });
});

test('F16 and BF16 convert every weight matrix (block size 1) and round to nearest', { skip: needsShared() }, () => {
  withDir((dir) => {
    quantizeFile(STORIES, join(dir, 'f16.gguf'), 'F16');
    quantizeFile(join(dir, 'f16.gguf'), join(dir, 'f32.gguf'), 'F32');
    const src = load(STORIES), f16 = load(join(dir, 'f16.gguf')), back = load(join(dir, 'f32.gguf'));
    assert.equal(f16.meta.get('general.file_type'), 1);
    assert.equal(back.meta.get('general.file_type'), 0);
    const down = f16.tensors.get('blk.0.ffn_down.weight')!;
    assert.equal(down.type, GGMLType.F16);
    assert.equal(f16.tensors.get('blk.0.ffn_norm.weight')!.type, GGMLType.F32);
    const a = f32Of(src.tensors.get('blk.0.ffn_down.weight')!);
    const h = new Uint16Array(down.data.slice().buffer);
    for (let i = 0; i < a.length; i++) assert.equal(h[i], f32ToF16(a[i]!));
    assert.deepEqual(f32Of(back.tensors.get('blk.0.ffn_down.weight')!), decodeValues(GGMLType.F16, down.data, a.length));
    quantizeFile(STORIES, join(dir, 'bf16.gguf'), 'bf16');
    const bf = load(join(dir, 'bf16.gguf'));
    assert.equal(bf.meta.get('general.file_type'), 32);
    assert.equal(bf.tensors.get('output.weight')!.type, GGMLType.BF16);
  });
});

test('quantize errors: bad type, missing or non-GGUF input, already-quantized input, output = input', { skip: needsShared() }, () => {
  withDir((dir) => {
    assert.throws(() => quantizeFile(STORIES, join(dir, 'x.gguf'), 'Q5_K'),
      (e: Error) => e instanceof InvalidOptionError && /unknown type "Q5_K"; supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K/.test(e.message));
    assert.throws(() => quantizeFile(join(dir, 'nope.gguf'), join(dir, 'x.gguf'), 'Q8_0'), (e: Error) => e instanceof ModelFormatError && /not found/.test(e.message));
    writeFileSync(join(dir, 'text.gguf'), 'hello, not a model at all');
    assert.throws(() => quantizeFile(join(dir, 'text.gguf'), join(dir, 'x.gguf'), 'Q8_0'), (e: Error) => e instanceof ModelFormatError && /not a GGUF file/.test(e.message));
    assert.throws(() => quantizeFile(STORIES, STORIES, 'Q8_0'), /output file must differ/);
    quantizeFile(STORIES, join(dir, 'q4.gguf'), 'Q4_0');
    assert.throws(() => quantizeFile(join(dir, 'q4.gguf'), join(dir, 'x.gguf'), 'Q8_0'),
      (e: Error) => e instanceof UnsupportedError && /tensor "token_embd.weight" is already quantized \(Q4_0\)/.test(e.message));
    assert.equal(existsSync(join(dir, 'x.gguf')), false, 'no partial output left behind');
    // Same type again: quantized tensors are copied unchanged.
    quantizeFile(join(dir, 'q4.gguf'), join(dir, 'q4b.gguf'), 'Q4_0');
    assert.deepEqual(readFileSync(join(dir, 'q4b.gguf')), readFileSync(join(dir, 'q4.gguf')));
  });
});

test('K-quant files (synth 256-wide Llama): Q4_K matrices with a Q6_K classifier, file types 14/18; they load and give logits close to F32', { skip: needsShared(), timeout: 120_000 }, async () => {
  const { synthFile } = await import('../../src/tools/synth.ts');
  const { openModelFile } = await import('../../src/format/open.ts');
  const { loadModel } = await import('../../src/model/registry.ts');
  const vocab = sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');
  withDir((dir) => {
    const shape = { dim: 256, layers: 1, heads: 4, kvHeads: 2, hidden: 512, ctx: 64, seed: 9, vocabFile: vocab };
    synthFile(join(dir, 'f32.gguf'), shape);
    quantizeFile(join(dir, 'f32.gguf'), join(dir, 'q4k.gguf'), 'Q4_K');
    quantizeFile(join(dir, 'f32.gguf'), join(dir, 'q6k.gguf'), 'q6_k');
    const q4 = load(join(dir, 'q4k.gguf')), q6 = load(join(dir, 'q6k.gguf'));
    assert.equal(q4.meta.get('general.file_type'), 14);
    assert.equal(q6.meta.get('general.file_type'), 18);
    assert.equal(q4.tensors.get('blk.0.ffn_down.weight')!.type, GGMLType.Q4_K);
    assert.equal(q4.tensors.get('blk.0.attn_q.weight')!.type, GGMLType.Q4_K);
    assert.equal(q4.tensors.get('token_embd.weight')!.type, GGMLType.Q6_K); // tied classifier
    assert.equal(q4.tensors.get('blk.0.attn_norm.weight')!.type, GGMLType.F32);
    assert.equal(q6.tensors.get('blk.0.ffn_up.weight')!.type, GGMLType.Q6_K);
    const tokens = [1, 450, 4996, 17354, 1701];
    const logits = (p: string) => { const m = loadModel(openModelFile(p)); return m.forward(tokens, m.createCache(16)); };
    const ref = logits(join(dir, 'f32.gguf'));
    for (const [file, minCos] of [['q4k.gguf', 0.98], ['q6k.gguf', 0.997]] as const) {
      const got = logits(join(dir, file));
      let dot = 0, na = 0, nb = 0;
      for (let i = 0; i < ref.length; i++) { dot += ref[i]! * got[i]!; na += ref[i]! ** 2; nb += got[i]! ** 2; }
      assert.ok(dot / Math.sqrt(na * nb) > minCos, `${file}: cosine ${dot / Math.sqrt(na * nb)}`);
    }
    // rows that are not whole 256-value super-blocks fall back as in llama.cpp (stories260K is 64
    // wide): Q4_K → Q5_0, Q6_K → Q8_0 (ffn_down's 172-wide rows fit neither and stay F32); the
    // model still runs
    quantizeFile(STORIES, join(dir, 'stories-q4k.gguf'), 'Q4_K');
    quantizeFile(STORIES, join(dir, 'stories-q6k.gguf'), 'Q6_K');
    assert.equal(load(join(dir, 'stories-q4k.gguf')).tensors.get('blk.0.attn_q.weight')!.type, GGMLType.Q5_0);
    assert.equal(load(join(dir, 'stories-q4k.gguf')).tensors.get('blk.0.ffn_down.weight')!.type, GGMLType.F32);
    assert.equal(load(join(dir, 'stories-q4k.gguf')).tensors.get('output.weight')!.type, GGMLType.Q8_0);
    assert.equal(load(join(dir, 'stories-q6k.gguf')).tensors.get('blk.0.attn_q.weight')!.type, GGMLType.Q8_0);
    const story = loadModel(openModelFile(join(dir, 'stories-q4k.gguf')));
    const sl = story.forward([1, 403, 407, 261, 378], story.createCache(8));
    const sref = (() => { const m = loadModel(openModelFile(STORIES)); return m.forward([1, 403, 407, 261, 378], m.createCache(8)); })();
    let best = 0, bestRef = 0;
    for (let i = 1; i < sl.length; i++) { if (sl[i]! > sl[best]!) best = i; if (sref[i]! > sref[bestRef]!) bestRef = i; }
    assert.equal(best, bestRef, 'stories260K Q5_0-fallback file: same next token');
  });
});

test('decodeValues: F32 and F16 read the same values from aligned and unaligned bytes', () => {
  const v = new Float32Array([1.5, -2.25, 0, 65504, 1e-7, -0, 3.1415927, 42]);
  const f32 = encodeValues(GGMLType.F32, v), f16 = encodeValues(GGMLType.F16, v);
  for (const [type, bytes] of [[GGMLType.F32, f32], [GGMLType.F16, f16]] as const) {
    const shifted = new Uint8Array(bytes.length + 1).subarray(1); // byteOffset 1: not aligned
    shifted.set(bytes);
    const a = decodeValues(type, bytes, v.length), b = decodeValues(type, shifted, v.length);
    assert.deepEqual(a, b, `type ${type}`);
    assert.ok(a.buffer !== bytes.buffer, 'a copy, not a view of the input');
    if (type === GGMLType.F32) assert.deepEqual(a, v);
  }
});

test('quantize refuses a weight holding NaN or ±Inf for a block type (naming tensor, value, element and row), converts it to F16', async () => {
  const { encodeGGUF } = await import('../../src/format/gguf-writer.ts');
  withDir((dir) => {
    for (const [bad, label] of [[NaN, 'NaN'], [Infinity, 'Infinity'], [-Infinity, '-Infinity']] as const) {
      const w = new Float32Array(256 * 4).map((_, i) => Math.sin(i) * 0.1);
      w[256 * 2 + 17] = bad; // row 2
      const meta: [string, import('../../src/format/model-file.ts').MetaValue][] = [['general.architecture', 'llama']];
      const src = join(dir, 'bad.gguf');
      writeFileSync(src, encodeGGUF({ meta, tensors: [{ name: 'blk.0.ffn_down.weight', dims: [256, 4], type: GGMLType.F32, data: new Uint8Array(w.buffer) }] }));
      for (const type of ['Q8_0', 'Q4_0', 'Q4_K', 'Q6_K']) {
        const out = join(dir, `bad-${type}.gguf`);
        assert.throws(() => quantizeFile(src, out, type), (e: Error) => e instanceof ModelFormatError
          && e.message === `tensor "blk.0.ffn_down.weight" holds ${label} at element ${256 * 2 + 17} (row 2): ${type} cannot encode it`, `${label} → ${type}`);
        assert.equal(existsSync(out), false, 'no partial output left behind');
      }
      quantizeFile(src, join(dir, 'ok-f16.gguf'), 'F16');
      const t = load(join(dir, 'ok-f16.gguf')).tensors.get('blk.0.ffn_down.weight')!;
      assert.equal(t.type, GGMLType.F16);
      assert.ok(Object.is(f32Of(t)[256 * 2 + 17], bad) || (Number.isNaN(bad) && Number.isNaN(f32Of(t)[256 * 2 + 17])));
    }
  });
});
