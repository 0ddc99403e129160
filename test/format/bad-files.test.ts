/**
 * Corrupt, truncated and unsupported model files: each is a typed error whose one-line message
 * names the problem. Files are made by mutating the shared models in a temp dir.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelFormatError, UnsupportedError } from '../../src/errors.js';
import { GGMLType } from '../../src/format/dtypes.js';
import { encodeGGUF } from '../../src/format/gguf-writer.js';
import { parseGGUF } from '../../src/format/gguf.js';
import { openModelFile } from '../../src/format/open.js';
import { loadLanguageModel } from '../../src/generate/language-model.js';
import { loadModel } from '../../src/model/registry.js';
import { needsShared, sharedPath } from '../helpers.js';

const skip = needsShared();
const dir = mkdtempSync(join(tmpdir(), 'tokenloop-bad-'));
const BIN = sharedPath('models', 'stories260K', 'stories260K.bin');
const GGUF = sharedPath('models', 'stories260K', 'stories260K.gguf');

function variant(name: string, src: string, mutate: (b: Uint8Array) => Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, mutate(new Uint8Array(readFileSync(src))));
  return p;
}

function throwsWith(fn: () => unknown, type: new (...a: never[]) => Error, re: RegExp): void {
  assert.throws(fn, (e: Error) => {
    assert.ok(e instanceof type, `expected ${type.name}, got ${e.constructor.name}: ${e.message}`);
    assert.match(e.message, re);
    assert.ok(!e.message.includes('\n'), 'message is one line');
    return true;
  });
}

test('missing file', () => {
  throwsWith(() => openModelFile(join(dir, 'nope.gguf')), ModelFormatError, /not found: .*nope\.gguf/);
});

test('empty file', { skip }, () => {
  const p = variant('empty.bin', BIN, () => new Uint8Array(0));
  throwsWith(() => openModelFile(p), ModelFormatError, /empty/);
});

test('truncated llama2.c checkpoint names the sizes', { skip }, () => {
  const p = variant('trunc.bin', BIN, (b) => b.subarray(0, 100_000));
  throwsWith(() => openModelFile(p), ModelFormatError, /truncated.*needs \d+ bytes but the file has 100000/);
});

test('llama2.c checkpoint with a corrupt header', { skip }, () => {
  const p = variant('corrupt.bin', BIN, (b) => { const c = b.slice(); new DataView(c.buffer).setInt32(12, 7, true); return c; });
  throwsWith(() => openModelFile(p), ModelFormatError, /corrupt header: n_heads = 7/);
});

test('GGUF with a wrong magic', { skip }, () => {
  const p = variant('magic.gguf', GGUF, (b) => { const c = b.slice(); c[0] = 0x58; return c; });
  throwsWith(() => openModelFile(p), ModelFormatError, /not a GGUF file \(bad magic/);
});

test('unsupported GGUF versions', { skip }, () => {
  for (const v of [1, 4, 0x03000000]) {
    const p = variant(`v${v}.gguf`, GGUF, (b) => { const c = b.slice(); new DataView(c.buffer).setUint32(4, v, true); return c; });
    throwsWith(() => openModelFile(p), UnsupportedError, new RegExp(`GGUF version ${v}`));
  }
});

test('GGUF version 2 (same layout as 3 for little-endian files) loads', { skip }, () => {
  const p = variant('v2.gguf', GGUF, (b) => { const c = b.slice(); new DataView(c.buffer).setUint32(4, 2, true); return c; });
  const f = openModelFile(p);
  assert.equal(f.version, 2);
  assert.equal(f.tensors.get('token_embd.weight')?.dims.join('x'), '64x512');
  assert.equal(loadModel(f).config.nVocab, 512);
});

test('truncated GGUF: in the metadata and in the tensor data', { skip }, () => {
  const a = variant('trunc-meta.gguf', GGUF, (b) => b.subarray(0, 200));
  throwsWith(() => openModelFile(a), ModelFormatError, /truncated/);
  const size = readFileSync(GGUF).byteLength;
  const b = variant('trunc-data.gguf', GGUF, (x) => x.subarray(0, size - 1000));
  throwsWith(() => openModelFile(b), ModelFormatError, /truncated: tensor "[^"]+" needs bytes/);
});

test('GGUF: every metadata value type, nested arrays, and alignment round-trip', () => {
  const meta: [string, import('../../src/format/model-file.js').MetaValue][] = [
    ['general.architecture', 'llama'], ['general.alignment', 64], ['a.bool', true], ['a.f', 1.5], ['a.neg', -3],
    ['a.big', 2n ** 60n], ['a.str', 'héllo ✓'], ['a.nested', [[1, 2], [3]]], ['a.strs', ['x', '', 'z']],
  ];
  const bytes = encodeGGUF({ meta, tensors: [{ name: 't', dims: [3, 2], type: GGMLType.F32, data: new Uint8Array(new Float32Array([1, 2, 3, 4, 5, 6]).buffer) }] });
  const g = parseGGUF(bytes);
  assert.equal(g.alignment, 64);
  assert.equal(g.dataOffset % 64, 0);
  for (const [k, v] of meta) assert.deepEqual(g.meta.get(k), v, k);
  const t = g.tensors.get('t')!;
  assert.deepEqual(Array.from(new Float32Array(t.data.slice().buffer)), [1, 2, 3, 4, 5, 6]);
});

test('GGUF strings: bytes decoded as UTF-8, a leading U+FEFF kept, invalid bytes replaced', () => {
  const meta: [string, import('../../src/format/model-file.js').MetaValue][] = [
    ['general.architecture', 'llama'], ['a.strs', ['\ufeff', '\ufeffx', '▁the', 'AAAA', 'BBBB']],
  ];
  const bytes = encodeGGUF({ meta, tensors: [] });
  // turn "AAAA" into a lone continuation byte, a truncated 3-byte sequence and an overlong form
  const at = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf('AAAA');
  bytes.set([0x80, 0xe2, 0x96, 0x41], at);
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf('BBBB');
  bytes.set([0xc0, 0xaf, 0xf0, 0x9f], b);
  // a token that is only the byte-order mark stays one (TextDecoder would drop it)
  assert.deepEqual(parseGGUF(bytes).meta.get('a.strs'), ['\ufeff', '\ufeffx', '▁the', '\ufffd\ufffdA', '\ufffd\ufffd\ufffd']);
});

test('GGUF: a count beyond 2^53 and a string cut short name what was being read', () => {
  const bytes = encodeGGUF({ meta: [['general.architecture', 'llama'], ['a.strs', ['x', 'yz']]], tensors: [] });
  const dv = new DataView(bytes.buffer, bytes.byteOffset);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // the length of 'yz' (u64 2) sits right before it: make it 2^60, then a length past the end
  const yz = buf.indexOf('yz');
  dv.setUint32(yz - 8, 0, true); dv.setUint32(yz - 4, 0x10000000, true);
  throwsWith(() => parseGGUF(bytes, 'x.gguf'), ModelFormatError, /^x\.gguf: implausible length of metadata "a\.strs" 1152921504606846976$/);
  dv.setUint32(yz - 8, 1000, true); dv.setUint32(yz - 4, 0, true);
  throwsWith(() => parseGGUF(bytes, 'x.gguf'), ModelFormatError, /truncated \(needed 1000 bytes at offset \d+ while reading metadata "a\.strs"/);
  // the array's element count
  const cnt = buf.indexOf('a.strs') + 6 + 4 + 4;
  dv.setUint32(cnt + 4, 0x300000, true);
  throwsWith(() => parseGGUF(bytes, 'x.gguf'), ModelFormatError, /implausible element count of metadata "a\.strs"/);
});

test('GGUF with a tensor type the engine cannot compute → UnsupportedError naming tensor and type', () => {
  const meta: [string, import('../../src/format/model-file.js').MetaValue][] = [
    ['general.architecture', 'llama'], ['llama.context_length', 8], ['llama.embedding_length', 256], ['llama.block_count', 1],
    ['llama.feed_forward_length', 256], ['llama.attention.head_count', 2], ['llama.attention.head_count_kv', 2],
    ['llama.attention.layer_norm_rms_epsilon', 1e-5],
  ];
  // IQ2_XXS: a real GGUF type (256 elements per 66-byte block) that tokenloop does not compute.
  const bytes = encodeGGUF({ meta, tensors: [{ name: 'token_embd.weight', dims: [256, 4], type: GGMLType.IQ2_XXS, data: new Uint8Array(66 * 4) }] });
  const p = join(dir, 'iq2.gguf');
  writeFileSync(p, bytes);
  throwsWith(() => loadModel(openModelFile(p)), UnsupportedError, /token_embd\.weight.*IQ2_XXS|IQ2_XXS.*token_embd\.weight/);
});

test('GGUF with an unknown tensor type id', () => {
  const bytes = encodeGGUF({ meta: [['general.architecture', 'llama']], tensors: [{ name: 'w', dims: [4], type: GGMLType.F32, data: new Uint8Array(16) }] });
  // Patch the tensor's type field (the u32 before the final u64 offset of the tensor info).
  const typePos = findTensorInfoEnd(bytes) - 12;
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(typePos, 99, true);
  throwsWith(() => parseGGUF(bytes, 'x.gguf'), ModelFormatError, /tensor "w" has unknown type id 99/);
});

/** End of the tensor-info section of a one-tensor file named "w" with one dimension. */
function findTensorInfoEnd(bytes: Uint8Array): number {
  // name "w" is stored as u64 length 1 followed by 'w'; then u32 n_dims, u64 dim, u32 type, u64 offset.
  for (let i = bytes.length - 1; i >= 8; i--) {
    if (bytes[i] === 0x77 && bytes[i - 8] === 1 && bytes.subarray(i - 7, i).every((x) => x === 0)) return i + 1 + 4 + 8 + 4 + 8;
  }
  throw new Error('tensor info not found');
}

test('unknown architecture names the architecture', { skip }, () => {
  const p = variant('arch.gguf', GGUF, (b) => {
    const c = b.slice();
    const needle = new TextEncoder().encode('llama');
    // The first "llama" string value after the general.architecture key.
    const key = new TextEncoder().encode('general.architecture');
    const at = indexOf(c, key);
    const v = indexOf(c, needle, at + key.length);
    c.set(new TextEncoder().encode('mamba'), v);
    return c;
  });
  throwsWith(() => loadLanguageModel({ model: p }), UnsupportedError, /architecture "mamba"/);
});

test('tokenizer whose size does not match the model', { skip }, () => {
  // The llama2.c tokenizer has 512 tokens; the Llama 2 vocabulary GGUF has 32000.
  const vocab = sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');
  throwsWith(() => loadLanguageModel({ model: BIN, tokenizer: vocab }), ModelFormatError, /32000 tokens but model .* vocabulary of 512/);
});

function indexOf(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  outer: for (let i = from; i <= hay.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  throw new Error('needle not found');
}
