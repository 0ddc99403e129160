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
import { TokenType } from './tokenizer.js';
import { END_OF_TURN_TEXTS, MetaReader, SPM_SPACE } from './vocab.js';

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
  const pieces = r.stringArray('tokenizer.ggml.tokens');
  if (pieces === undefined || pieces.length === 0) {
    throw new ModelFormatError(`${r.source}: tokenizer metadata tokenizer.ggml.tokens is missing or empty`);
  }
  const n = pieces.length;
  const scores = r.numberArray('tokenizer.ggml.scores', n) ?? new Array<number>(n).fill(0);
  const rawTypes = r.numberArray('tokenizer.ggml.token_type', n);
  const types = new Uint8Array(n).fill(TokenType.Normal);
  if (rawTypes) {
    for (let i = 0; i < n; i++) {
      const t = rawTypes[i]!;
      if (!Number.isInteger(t) || t < 0 || t > TokenType.Byte) throw new ModelFormatError(`${r.source}: token ${i} has unknown token type ${t}`);
      types[i] = t;
    }
  }
  const bos = r.tokenId('tokenizer.ggml.bos_token_id', n, 1);
  const eos = r.tokenId('tokenizer.ggml.eos_token_id', n, 2);
  const unk = r.tokenId('tokenizer.ggml.unknown_token_id', n, 0);
  const end = new Set<number>();
  for (const key of ['eos', 'eot', 'eom']) {
    const id = r.tokenId(`tokenizer.ggml.${key}_token_id`, n, key === 'eos' ? eos : null);
    if (id !== null) end.add(id);
  }
  // Like llama.cpp: well-known end-of-turn texts also end generation (e.g. Gemma's <end_of_turn>).
  for (let i = 0; i < n; i++) {
    if ((types[i] === TokenType.Control || types[i] === TokenType.UserDefined) && END_OF_TURN_TEXTS.has(pieces[i]!)) end.add(i);
  }
  return createSpmTokenizer({
    pieces, scores, types, bos, eos, unk,
    endOfGeneration: end,
    addBos: r.bool('tokenizer.ggml.add_bos_token', true),
    addEos: r.bool('tokenizer.ggml.add_eos_token', false),
    addSpacePrefix: r.bool('tokenizer.ggml.add_space_prefix', true),
    spaceSymbol: SPM_SPACE,
  });
}
