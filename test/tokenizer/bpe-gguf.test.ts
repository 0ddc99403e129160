/** Byte-level BPE from GGUF against llama.cpp's own test vectors (ggml-vocab-*.gguf + .inp/.out). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseGGUF } from '../../src/format/gguf.js';
import { createBpeTokenizerFromGGUF } from '../../src/tokenizer/bpe-from-gguf.js';
import { preTokenizerFor } from '../../src/tokenizer/pre-tokenizers.js';
import { UnsupportedError } from '../../src/errors.js';
import { needsShared, sharedPath } from '../helpers.js';

const DIR = ['reference', 'tokenizer', 'llama.cpp-vocab'];

/** Cases are separated by lines `__ggml_vocab_test__`; the newline before each separator is not part of the case. */
function readCases(name: string): { input: string; ids: number[] }[] {
  const inp = readFileSync(sharedPath(...DIR, `${name}.inp`), 'utf8');
  const out = readFileSync(sharedPath(...DIR, `${name}.out`), 'utf8');
  const inputs = inp.split('\n__ggml_vocab_test__\n');
  assert.equal(inputs.pop(), '', 'input file ends with a separator');
  const lines = out.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  assert.equal(inputs.length, lines.length, 'one output line per input case');
  return inputs.map((input, i) => ({ input, ids: lines[i]!.trim() === '' ? [] : lines[i]!.trim().split(/\s+/).map(Number) }));
}

for (const name of ['ggml-vocab-gpt-2.gguf', 'ggml-vocab-deepseek-llm.gguf']) {
  test(`${name}: every test string tokenizes to llama.cpp's ids and decodes back`, { skip: needsShared() }, () => {
    const meta = parseGGUF(readFileSync(sharedPath(...DIR, name)), name).meta;
    const tok = createBpeTokenizerFromGGUF(meta, name);
    const cases = readCases(name);
    assert.ok(cases.length >= 40);
    for (const c of cases) {
      const ids = tok.encode(c.input, { addBos: false, parseSpecial: false });
      assert.deepEqual(ids, c.ids, `ids of ${JSON.stringify(c.input)}`);
      assert.equal(tok.decode(ids), c.input, `round trip of ${JSON.stringify(c.input)}`);
    }
  });
}

test('pre-tokenizer table: unknown names are refused, a missing one is llama.cpp\'s default', () => {
  assert.throws(() => preTokenizerFor('no-such-pre'), (e: unknown) => e instanceof UnsupportedError && /no-such-pre/.test(e.message));
  assert.equal(preTokenizerFor(undefined).type, 'default');
  assert.equal(preTokenizerFor('llama-bpe').ignoreMerges, true);
  assert.equal(preTokenizerFor('llama-bpe').addBos, true);
  assert.equal(preTokenizerFor('qwen2').type, 'qwen2');
});

test('gpt-2 GGUF: control-token text is plain text unless parseSpecial', { skip: needsShared() }, () => {
  const name = 'ggml-vocab-gpt-2.gguf';
  const tok = createBpeTokenizerFromGGUF(parseGGUF(readFileSync(sharedPath(...DIR, name)), name).meta, name);
  const id = tok.tokenId('<|endoftext|>')!;
  assert.equal(tok.tokenType(id), 3 /* control */);
  const text = 'a<|endoftext|>b';
  assert.ok(!tok.encode(text).includes(id));
  assert.deepEqual(tok.encode(text, { parseSpecial: true }), [...tok.encode('a'), id, ...tok.encode('b')]);
  assert.equal(tok.decode(tok.encode(text)), text);
  assert.equal(tok.decode(tok.encode(text, { parseSpecial: true }), { skipSpecial: true }), 'ab');
  assert.ok(tok.endOfGeneration.has(id));
  assert.equal(tok.addBos, false);
});
