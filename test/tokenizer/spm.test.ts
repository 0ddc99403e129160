import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { needsShared, sharedPath } from '../helpers.js';
import { openModelFile } from '../../src/format/open.js';
import { loadLlama2cTokenizer } from '../../src/tokenizer/from-llama2c.js';
import { createTokenizerFromGGUF } from '../../src/tokenizer/from-gguf.js';
import { createSpmTokenizer } from '../../src/tokenizer/spm.js';
import { TokenType } from '../../src/tokenizer/tokenizer.js';

const skip = needsShared();
const TOK512 = sharedPath('models', 'stories260K', 'tok512.bin');
const SPM_VOCAB = sharedPath('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');
interface Case { text: string; tokens_with_bos: number[] }
const cases = (): Case[] => (JSON.parse(readFileSync(sharedPath('reference', 'tok512-encode.json'), 'utf8')) as { cases: Case[] }).cases;

/** llama.cpp test-tokenizer-0 layout: strings separated by "\n__ggml_vocab_test__\n", one ids line each. */
function llamaCppCases(path: string): { text: string; ids: number[] }[] {
  const inp = readFileSync(path + '.inp', 'utf8').split('\n__ggml_vocab_test__\n');
  assert.equal(inp.pop(), '', 'the .inp file ends with a separator');
  const out = readFileSync(path + '.out', 'utf8').split('\n');
  if (out.at(-1) === '') out.pop();
  assert.equal(inp.length, out.length, 'one .out line per .inp case');
  return inp.map((text, i) => ({ text, ids: out[i]!.trim() === '' ? [] : out[i]!.trim().split(/\s+/).map(Number) }));
}

test('tok512.bin: all llama2.c reference encodings (BOS included) and decode round trip', { skip }, () => {
  const tok = loadLlama2cTokenizer(TOK512);
  assert.equal(tok.vocabSize, 512);
  assert.deepEqual([tok.unk, tok.bos, tok.eos], [0, 1, 2]);
  const all = cases();
  assert.equal(all.length, 26);
  for (const c of all) {
    const ids = tok.encode(c.text);
    assert.deepEqual(ids, c.tokens_with_bos, JSON.stringify(c.text));
    assert.equal(tok.decode(ids, { skipSpecial: true }), c.text, `round trip ${JSON.stringify(c.text)}`);
    assert.equal(tok.decode(ids.slice(1)), c.text, `round trip without BOS ${JSON.stringify(c.text)}`);
    assert.deepEqual(tok.encode(c.text, { addBos: false }), c.tokens_with_bos.slice(1));
  }
});

test('stories260K.gguf embedded tokenizer matches tok512.bin on the reference cases', { skip }, () => {
  const g = createTokenizerFromGGUF(openModelFile(sharedPath('models', 'stories260K', 'stories260K.gguf')).meta, 'stories260K.gguf');
  const tok = loadLlama2cTokenizer(TOK512);
  assert.equal(g.vocabSize, 512);
  for (const c of cases()) {
    assert.deepEqual(g.encode(c.text), c.tokens_with_bos, JSON.stringify(c.text));
    assert.equal(g.decode(c.tokens_with_bos), tok.decode(c.tokens_with_bos), JSON.stringify(c.text));
  }
});

test('llama.cpp SPM vocab (Llama 2): every test vector exact, decode round-trips', { skip }, () => {
  const tok = createTokenizerFromGGUF(openModelFile(SPM_VOCAB).meta, SPM_VOCAB);
  assert.equal(tok.vocabSize, 32000);
  assert.equal(tok.addBos, true);
  const all = llamaCppCases(SPM_VOCAB);
  assert.equal(all.length, 46);
  for (const c of all) {
    const ids = tok.encode(c.text, { addBos: false });
    assert.deepEqual(ids, c.ids, JSON.stringify(c.text));
    assert.equal(tok.decode(ids), c.text, `round trip ${JSON.stringify(c.text)}`);
  }
  // With BOS (the default) the same ids follow it, and decode drops the prefix space after BOS.
  assert.deepEqual(tok.encode('Hello world'), [1, ...tok.encode('Hello world', { addBos: false })]);
  assert.equal(tok.decode(tok.encode('Hello world'), { skipSpecial: true }), 'Hello world');
});

test('special-token text is plain text unless parseSpecial', { skip }, () => {
  const tok = createTokenizerFromGGUF(openModelFile(SPM_VOCAB).meta, SPM_VOCAB);
  const plain = tok.encode('a</s>b', { addBos: false });
  assert.ok(!plain.includes(2), `</s> must not become EOS: ${plain}`);
  assert.equal(tok.decode(plain), 'a</s>b');
  const parsed = tok.encode('a</s>b', { addBos: false, parseSpecial: true });
  assert.ok(parsed.includes(2), `</s> must become EOS with parseSpecial: ${parsed}`);
  assert.deepEqual(tok.encode('</s>', { addBos: false, parseSpecial: true }), [2]);
  // Typed byte-token text never becomes a byte token.
  assert.ok(!tok.encode('<0x41>', { addBos: false }).includes(tok.tokenId('<0x41>')!));
  assert.equal(tok.decode([1, 2]), '<s></s>');
  assert.equal(tok.decode([1, 2], { skipSpecial: true }), '');
  const t512 = loadLlama2cTokenizer(TOK512);
  assert.ok(!t512.encode('</s>').includes(2));
  assert.deepEqual(t512.encode('</s>', { parseSpecial: true }), [1, 2]);
});

test('tokenBytes: byte tokens, ▁ to space, prefix space dropped after BOS only', { skip }, () => {
  const tok = createTokenizerFromGGUF(openModelFile(SPM_VOCAB).meta, SPM_VOCAB);
  const hello = tok.tokenId('▁Hello')!;
  assert.equal(Buffer.from(tok.tokenBytes(hello)).toString(), ' Hello');
  assert.equal(Buffer.from(tok.tokenBytes(hello, true)).toString(), 'Hello');
  assert.deepEqual([...tok.tokenBytes(tok.tokenId('<0x0A>')!)], [10]);
  assert.deepEqual([...tok.tokenBytes(tok.tokenId('<0x20>')!, true)], [0x20]);
  assert.equal(tok.tokenType(1), TokenType.Control);
  assert.equal(tok.decode([hello, hello]), 'Hello Hello');
  assert.equal(tok.decode([1, hello]), '<s>Hello');
  assert.throws(() => tok.tokenBytes(32000), RangeError);
  assert.throws(() => tok.decode([-1]), /out of range/);
});

test('characters outside the vocabulary fall back to UTF-8 byte tokens', { skip }, () => {
  const tok = loadLlama2cTokenizer(TOK512);
  const ids = tok.encode('😀', { addBos: false });
  // ' ' then the four UTF-8 bytes of U+1F600 (byte token id = byte + 3).
  assert.deepEqual(ids, [tok.tokenId(' ')!, 0xf0 + 3, 0x9f + 3, 0x98 + 3, 0x80 + 3]);
  assert.equal(tok.decode(ids), '😀', 'the dummy prefix is dropped at the start');
  assert.equal(tok.decode([tok.tokenId(' ')!, ...ids]), ' 😀');
});

test('merging prefers the highest score, leftmost on ties; unk when a vocabulary has no byte tokens', () => {
  // A tiny synthetic vocabulary: "ab" (score -1) vs "bc" (score -2) on "abc"; ties leftmost.
  const pieces = ['<unk>', '<s>', '</s>', 'a', 'b', 'c', 'ab', 'bc', 'abc', '▁'];
  const scores = [0, 0, 0, -10, -10, -10, -1, -2, -3, -10];
  const types = pieces.map((_, i) => (i === 0 ? TokenType.Unknown : i < 3 ? TokenType.Control : TokenType.Normal));
  const tok = createSpmTokenizer({ pieces, scores, types, bos: 1, eos: 2, unk: 0, endOfGeneration: [2], addBos: false, addEos: false, addSpacePrefix: false, spaceSymbol: '▁' });
  assert.deepEqual(tok.encode('abc'), [8]);
  assert.deepEqual(tok.encode('bcab'), [7, 6]);
  assert.deepEqual(tok.encode('bbb'), [4, 4, 4]);
  assert.deepEqual(tok.encode('xa'), [0, 3], 'unknown char without byte tokens → unk');
  assert.deepEqual(tok.encode('a', { addEos: true }), [3, 2]);
  const tie = createSpmTokenizer({ pieces: ['<unk>', 'a', 'aa'], scores: [0, 0, -1], types: [2, 1, 1], bos: null, eos: null, unk: 0, endOfGeneration: [], addBos: true, addEos: false, addSpacePrefix: false, spaceSymbol: '▁' });
  assert.deepEqual(tie.encode('aaa'), [2, 1], 'equal scores merge the leftmost pair');
});

test('long input encodes in near-linear time', { skip }, () => {
  const tok = createTokenizerFromGGUF(openModelFile(SPM_VOCAB).meta, SPM_VOCAB);
  const unit = 'The quick brown fox jumps over the lazy dog. ';
  const t0 = performance.now();
  const small = tok.encode(unit.repeat(500), { addBos: false }).length;
  const t1 = performance.now();
  const big = tok.encode(unit.repeat(5000), { addBos: false }).length;
  const t2 = performance.now();
  assert.ok(big >= 9 * small && big <= 10 * small + 10);
  // 10x the text must not take ~100x the time (generous bound for a busy CI machine).
  assert.ok(t2 - t1 < 40 * Math.max(t1 - t0, 5), `small ${(t1 - t0).toFixed(0)} ms, big ${(t2 - t1).toFixed(0)} ms`);
});
