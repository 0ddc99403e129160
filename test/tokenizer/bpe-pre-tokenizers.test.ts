/**
 * llama.cpp pre-tokenizer emulation: the Llama 3 scanner, the collapsed-category regex path (Qwen2)
 * and the GPT-2 scanner split the multilingual corpus exactly as the original Unicode regexes from
 * the models' tokenizer.json do (llama.cpp rewrote them to be equivalent).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LlamaCppSplitter, preTokenizerFor } from '../../src/tokenizer/pre-tokenizers.js';
import { compileHfRegex } from '../../src/tokenizer/hf-regex.js';
import { splitWith } from '../../src/tokenizer/hf-pre-tokenizers.js';
import { buildTokenizerCorpus } from '../fixtures/tokenizer-corpus.js';

const corpus = buildTokenizerCorpus();
const ORIGINAL: [pre: string, regex: string][] = [
  ['llama-bpe', String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`],
  ['qwen2', String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`],
  ['gpt-2', String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`],
];

for (const [pre, regex] of ORIGINAL) {
  test(`${pre}: llama.cpp-style split equals the tokenizer.json regex on the corpus`, () => {
    const ours = new LlamaCppSplitter(preTokenizerFor(pre).regexes);
    const re = compileHfRegex(regex);
    for (const s of corpus) {
      const words = ours.split(s);
      assert.equal(words.join(''), s);
      assert.deepEqual(words, splitWith(s, re, 'Isolated'), JSON.stringify(s.slice(0, 60)));
    }
  });
}

test('llama3 split: contractions are case-insensitive, numbers go in threes, newlines attach', () => {
  const sp = new LlamaCppSplitter(preTokenizerFor('llama3').regexes);
  assert.deepEqual(sp.split("IT'S 1234567 ok!\n\n  x"), ['IT', "'S", ' ', '123', '456', '7', ' ok', '!\n\n', ' ', ' x']);
  const gpt2 = new LlamaCppSplitter(preTokenizerFor('gpt-2').regexes);
  assert.deepEqual(gpt2.split("IT'S it's"), ['IT', "'", 'S', ' it', "'s"]);
});
