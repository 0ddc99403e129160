import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needsShared, sharedPath } from '../helpers.js';
import { ModelFormatError, UnsupportedError } from '../../src/errors.js';
import type { MetaValue } from '../../src/format/model-file.js';
import { openModelFile } from '../../src/format/open.js';
import { writeGGUF } from '../../src/format/gguf-writer.js';
import { createTokenizerFromGGUF } from '../../src/tokenizer/from-gguf.js';
import { loadTokenizer, modelVocabSize } from '../../src/tokenizer/load.js';

const skip = needsShared();
const TOK512 = sharedPath('models', 'stories260K', 'tok512.bin');
const BIN = sharedPath('models', 'stories260K', 'stories260K.bin');
const SPM_VOCAB = sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');
const tmp = () => mkdtempSync(join(tmpdir(), 'tokenloop-tok-'));

test('a vocab-only GGUF opens and supplies its tokenizer, sizes agree', { skip }, () => {
  const mf = openModelFile(SPM_VOCAB);
  assert.equal(mf.tensors.size, 0);
  assert.equal(modelVocabSize(mf), 32000);
  assert.equal(loadTokenizer({ modelFile: mf }).vocabSize, 32000);
  assert.equal(loadTokenizer({ tokenizerPath: SPM_VOCAB }).vocabSize, 32000);
});

test('a llama2.c checkpoint finds tok512.bin beside it; a GGUF model uses its own', { skip }, () => {
  const tok = loadTokenizer({ modelFile: openModelFile(BIN) });
  assert.equal(tok.vocabSize, 512);
  assert.deepEqual(tok.encode('hello'), [1, 281, 306, 414]);
  assert.ok(tok.endOfGeneration.has(1) && tok.endOfGeneration.has(2), 'llama2.c models end a story with BOS');
  const g = loadTokenizer({ modelFile: openModelFile(sharedPath('models', 'stories260K', 'stories260K.gguf')) });
  assert.deepEqual(g.encode('hello'), [1, 281, 306, 414]);
  assert.deepEqual([...g.endOfGeneration], [2]);
  // An explicit tokenizer file wins over the checkpoint's folder.
  assert.equal(loadTokenizer({ modelFile: openModelFile(BIN), tokenizerPath: TOK512 }).vocabSize, 512);
});

test('a llama2.c checkpoint without a tokenizer file gives a clear error', { skip }, () => {
  const dir = tmp();
  copyFileSync(BIN, join(dir, 'model.bin'));
  assert.throws(() => loadTokenizer({ modelFile: openModelFile(join(dir, 'model.bin')) }),
    (e: unknown) => e instanceof ModelFormatError && /tok512\.bin and tokenizer\.bin/.test(e.message) && e.message.includes(dir));
  copyFileSync(TOK512, join(dir, 'tokenizer.bin'));
  assert.equal(loadTokenizer({ modelFile: openModelFile(join(dir, 'model.bin')) }).vocabSize, 512);
});

test('a truncated or corrupt tok512.bin is a ModelFormatError naming the file', { skip }, () => {
  const dir = tmp();
  const bytes = readFileSync(TOK512);
  const cut = join(dir, 'cut.bin');
  writeFileSync(cut, bytes.subarray(0, 1000));
  assert.throws(() => loadTokenizer({ tokenizerPath: cut }),
    (e: unknown) => e instanceof ModelFormatError && e.message.includes(cut) && /truncated/.test(e.message));
  const bad = Buffer.from(bytes);
  bad.writeInt32LE(1 << 20, 8); // length of token 0 far beyond max_token_length
  const badPath = join(dir, 'bad.bin');
  writeFileSync(badPath, bad);
  assert.throws(() => loadTokenizer({ tokenizerPath: badPath }),
    (e: unknown) => e instanceof ModelFormatError && e.message.includes(badPath) && /token 0 has length/.test(e.message));
  const tiny = join(dir, 'tiny.bin');
  writeFileSync(tiny, Buffer.from([1, 0]));
  assert.throws(() => loadTokenizer({ tokenizerPath: tiny }), /tiny\.bin: not a valid llama2\.c tokenizer: file is truncated/);
  assert.throws(() => loadTokenizer({ tokenizerPath: join(dir, 'missing.bin') }), /tokenizer file not found/);
});

test('a GGUF without tokenizer metadata is a ModelFormatError', { skip }, () => {
  const p = join(tmp(), 'no-tok.gguf');
  writeGGUF(p, { meta: [['general.architecture', 'llama']], tensors: [] });
  const mf = openModelFile(p);
  assert.throws(() => loadTokenizer({ modelFile: mf }),
    (e: unknown) => e instanceof ModelFormatError && e.message.includes(p) && /no tokenizer/.test(e.message));
});

test('an unknown tokenizer model is an UnsupportedError naming it', () => {
  const meta = new Map<string, MetaValue>([['tokenizer.ggml.model', 'rwkv'], ['tokenizer.ggml.tokens', ['a', 'b']]]);
  assert.throws(() => createTokenizerFromGGUF(meta, 'x.gguf'),
    (e: unknown) => e instanceof UnsupportedError && /x\.gguf: tokenizer model "rwkv" is not supported/.test(e.message));
  const badId = new Map<string, MetaValue>([['tokenizer.ggml.model', 'llama'], ['tokenizer.ggml.tokens', ['a', 'b']], ['tokenizer.ggml.bos_token_id', 7]]);
  assert.throws(() => createTokenizerFromGGUF(badId, 'y.gguf'), /bos_token_id = 7 is outside the vocabulary \(2 tokens\)/);
  const badScores = new Map<string, MetaValue>([['tokenizer.ggml.model', 'llama'], ['tokenizer.ggml.tokens', ['a', 'b']], ['tokenizer.ggml.scores', [0]]]);
  assert.throws(() => createTokenizerFromGGUF(badScores, 'z.gguf'), /scores has 1 entries but the vocabulary has 2/);
});

test('a tokenizer whose size differs from the model vocabulary is rejected with both numbers', { skip }, () => {
  assert.throws(() => loadTokenizer({ modelFile: openModelFile(BIN), tokenizerPath: SPM_VOCAB }),
    (e: unknown) => e instanceof ModelFormatError && /32000 tokens/.test(e.message) && /vocabulary of 512/.test(e.message));
});
