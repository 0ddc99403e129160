/**
 * Byte-level BPE vocabulary from GGUF metadata (`tokenizer.ggml.model = "gpt2"`): tokens, token
 * types, merges and `tokenizer.ggml.pre`, with the defaults llama.cpp's `llama_vocab::load` applies
 * (add_bos from the pre-tokenizer family unless the file sets it; no BOS/EOS ids unless given).
 */
import { ModelFormatError } from '../errors.js';
import type { MetaValue } from '../format/model-file.js';
import { BpeTokenizer } from './bpe-tokenizer.js';
import { preTokenizerFor } from './pre-tokenizers.js';
import { TokenType } from './tokenizer.js';
import { END_OF_TURN_TEXTS, MetaReader } from './vocab.js';

/** Create a byte-level BPE tokenizer from GGUF metadata; `source` names the file in errors. */
export function createBpeTokenizerFromGGUF(meta: ReadonlyMap<string, MetaValue>, source = 'GGUF'): BpeTokenizer {
  const r = new MetaReader(meta, source);
  const pieces = r.stringArray('tokenizer.ggml.tokens');
  if (pieces === undefined || pieces.length === 0) throw new ModelFormatError(`${source}: tokenizer metadata tokenizer.ggml.tokens is missing or empty`);
  const merges = r.stringArray('tokenizer.ggml.merges');
  if (merges === undefined) throw new ModelFormatError(`${source}: byte-level BPE vocabulary has no tokenizer.ggml.merges`);
  const n = pieces.length;
  const pre = preTokenizerFor(r.string('tokenizer.ggml.pre'));
  const rawTypes = r.numberArray('tokenizer.ggml.token_type', n);
  const types = new Uint8Array(n).fill(TokenType.Normal);
  if (rawTypes) {
    for (let i = 0; i < n; i++) {
      const t = rawTypes[i]!;
      if (!Number.isInteger(t) || t < 0 || t > TokenType.Byte) throw new ModelFormatError(`${source}: token ${i} has unknown token type ${t}`);
      types[i] = t;
    }
  }
  const bos = r.tokenId('tokenizer.ggml.bos_token_id', n, null);
  const eos = r.tokenId('tokenizer.ggml.eos_token_id', n, null);
  const unk = r.tokenId('tokenizer.ggml.unknown_token_id', n, null);
  const end = new Set<number>();
  for (const key of ['eos', 'eot', 'eom']) {
    const id = r.tokenId(`tokenizer.ggml.${key}_token_id`, n, key === 'eos' ? eos : null);
    if (id !== null) end.add(id);
  }
  for (let i = 0; i < n; i++) {
    if ((types[i] === TokenType.Control || types[i] === TokenType.UserDefined) && END_OF_TURN_TEXTS.has(pieces[i]!)) end.add(i);
  }
  const addBos = r.bool('tokenizer.ggml.add_bos_token', pre.addBos);
  const addEos = r.bool('tokenizer.ggml.add_eos_token', false);
  if (addBos && bos === null) throw new ModelFormatError(`${source}: tokenizer.ggml.add_bos_token is true but no BOS token id is set`);
  if (addEos && eos === null) throw new ModelFormatError(`${source}: tokenizer.ggml.add_eos_token is true but no EOS token id is set`);
  return new BpeTokenizer({
    pieces, types, merges, pre, bos, eos, unk, endOfGeneration: end, addBos, addEos,
    addSpacePrefix: r.bool('tokenizer.ggml.add_space_prefix', false),
  });
}
