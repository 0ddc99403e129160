/**
 * Build a tokenizer from GGUF metadata (`tokenizer.ggml.*`, ggml docs/gguf.md), dispatching on
 * `tokenizer.ggml.model`: "llama" → SentencePiece-style BPE; "gpt2" → byte-level BPE.
 * Defaults for absent keys follow llama.cpp's `llama_vocab::load` for the SPM vocabulary:
 * unk 0, BOS 1, EOS 2, add_bos true, add_eos false, add_space_prefix true.
 */
import { ModelFormatError, UnsupportedError } from '../errors.js';
import type { MetaValue } from '../format/model-file.js';
import { createBpeTokenizerFromGGUF } from './bpe-from-gguf.js';
import { createSpmTokenizer } from './spm.js';
import type { Tokenizer } from './tokenizer.js';
import { MetaReader, readGgufVocab, SPM_SPACE } from './vocab.js';

/** Tokenizer models this build understands (values of `tokenizer.ggml.model`). */
export const SUPPORTED_GGUF_TOKENIZERS = ['llama', 'gpt2'] as const;

/** Create the tokenizer described by a GGUF file's metadata; `source` names the file in errors. */
export function createTokenizerFromGGUF(meta: ReadonlyMap<string, MetaValue>, source: string): Tokenizer {
  const r = new MetaReader(meta, source);
  const model = r.string('tokenizer.ggml.model');
  if (model === undefined || model === 'none' || model === 'no') {
    throw new ModelFormatError(`${source}: the GGUF file has no tokenizer (metadata tokenizer.ggml.model is ${model === undefined ? 'missing' : `"${model}"`}); pass --tokenizer FILE`);
  }
  switch (model) {
    case 'llama':
      return spmFromGGUF(r);
    case 'gpt2':
      return createBpeTokenizerFromGGUF(meta, source);
    default:
      throw new UnsupportedError(`${source}: tokenizer model "${model}" is not supported (supported: ${SUPPORTED_GGUF_TOKENIZERS.join(', ')})`);
  }
}

/** SentencePiece-style vocabulary from `tokenizer.ggml.tokens/scores/token_type`. */
function spmFromGGUF(r: MetaReader): Tokenizer {
  const { pieces, types, bos, eos, unk, endOfGeneration: end } = readGgufVocab(r, { bos: 1, eos: 2, unk: 0 });
  const scores = r.numberArray('tokenizer.ggml.scores', pieces.length) ?? new Array<number>(pieces.length).fill(0);
  return createSpmTokenizer({
    pieces, scores, types, bos, eos, unk,
    endOfGeneration: end,
    addBos: r.bool('tokenizer.ggml.add_bos_token', true),
    addEos: r.bool('tokenizer.ggml.add_eos_token', false),
    addSpacePrefix: r.bool('tokenizer.ggml.add_space_prefix', true),
    spaceSymbol: SPM_SPACE,
  });
}
