/**
 * Byte-level BPE vocabulary from GGUF metadata (`tokenizer.ggml.model = "gpt2"`): tokens, token
 * types, merges and `tokenizer.ggml.pre`, with the defaults llama.cpp's `llama_vocab::load` applies
 * (add_bos from the pre-tokenizer family unless the file sets it; no BOS/EOS ids unless given).
 */
import { ModelFormatError } from '../errors.js';
import type { MetaValue } from '../format/model-file.js';
import { BpeTokenizer } from './bpe-tokenizer.js';
import { preTokenizerFor } from './pre-tokenizers.js';
import { MetaReader, readGgufVocab } from './vocab.js';

/** Create a byte-level BPE tokenizer from GGUF metadata; `source` names the file in errors. */
export function createBpeTokenizerFromGGUF(meta: ReadonlyMap<string, MetaValue>, source = 'GGUF'): BpeTokenizer {
  const r = new MetaReader(meta, source);
  const { pieces, types, bos, eos, unk, endOfGeneration: end } = readGgufVocab(r, { bos: null, eos: null, unk: null });
  const merges = r.stringArray('tokenizer.ggml.merges');
  if (merges === undefined) throw new ModelFormatError(`${source}: byte-level BPE vocabulary has no tokenizer.ggml.merges`);
  const pre = preTokenizerFor(r.string('tokenizer.ggml.pre'));
  const addBos = r.bool('tokenizer.ggml.add_bos_token', pre.addBos);
  const addEos = r.bool('tokenizer.ggml.add_eos_token', false);
  if (addBos && bos === null) throw new ModelFormatError(`${source}: tokenizer.ggml.add_bos_token is true but no BOS token id is set`);
  if (addEos && eos === null) throw new ModelFormatError(`${source}: tokenizer.ggml.add_eos_token is true but no EOS token id is set`);
  return new BpeTokenizer({
    pieces, types, merges, pre, bos, eos, unk, endOfGeneration: end, addBos, addEos,
    addSpacePrefix: r.bool('tokenizer.ggml.add_space_prefix', false),
  });
}
