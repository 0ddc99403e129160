/**
 * Find and load the tokenizer for a model. Resolution order:
 *  1. an explicit tokenizer file (`tokenizerPath`): a GGUF file (a full model or vocab-only,
 *     recognised by its magic), a Hugging Face `tokenizer.json`, or else a llama2.c tokenizer
 *     (`tokenizer.bin`, `tok512.bin`);
 *  2. the tokenizer embedded in a GGUF model file;
 *  3. for a llama2.c checkpoint (which holds no vocabulary): `tok<vocab_size>.bin`, then
 *     `tokenizer.bin`, in the checkpoint's folder (llama2.c's own naming).
 * When both the model and the tokenizer state a vocabulary size they must agree.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ModelFormatError, UnsupportedError } from '../errors.js';
import { GGUF_MAGIC } from '../format/gguf.js';
import type { ModelFile } from '../format/model-file.js';
import { openModelFile, readWholeFile } from '../format/open.js';
import { createTokenizerFromGGUF } from './from-gguf.js';
import { parseLlama2cTokenizer } from './from-llama2c.js';
import { loadHfTokenizer } from './from-hf.js';
import type { Tokenizer } from './tokenizer.js';

export interface LoadTokenizerOptions {
  /** The opened model, whose embedded tokenizer (GGUF) or folder (llama2.c) is used. */
  modelFile?: ModelFile;
  /** An explicit tokenizer file; wins over the model's own tokenizer. */
  tokenizerPath?: string;
}

/** Load the tokenizer for a model and/or an explicit tokenizer file (see the module comment). */
export function loadTokenizer(opts: LoadTokenizerOptions): Tokenizer {
  const { modelFile, tokenizerPath } = opts;
  let tok: Tokenizer;
  let source: string;
  if (tokenizerPath !== undefined) {
    tok = loadTokenizerFile(tokenizerPath);
    source = tokenizerPath;
  } else if (modelFile?.kind === 'gguf') {
    tok = createTokenizerFromGGUF(modelFile.meta, modelFile.path);
    source = modelFile.path;
  } else if (modelFile?.kind === 'llama2c') {
    source = findLlama2cTokenizer(modelFile);
    tok = loadTokenizerFile(source);
  } else {
    throw new ModelFormatError('no tokenizer: give a model file or a tokenizer file');
  }
  if (modelFile) {
    const n = modelVocabSize(modelFile);
    if (n !== undefined && n !== tok.vocabSize) {
      throw new ModelFormatError(`tokenizer ${source} has ${tok.vocabSize} tokens but model ${modelFile.path} has a vocabulary of ${n}`);
    }
  }
  return tok;
}

/** Load a tokenizer file of any supported kind, recognised by magic or name. */
export function loadTokenizerFile(path: string): Tokenizer {
  if (!existsSync(path)) throw new ModelFormatError(`tokenizer file not found: ${path}`);
  if (statSync(path).isDirectory()) {
    // A Hugging Face tokenizer folder: tokenizer.json (+ tokenizer_config.json).
    if (existsSync(join(path, 'tokenizer.json'))) return loadHfTokenizer(path);
    throw new ModelFormatError(`expected a tokenizer file but got a directory without tokenizer.json: ${path}`);
  }
  if (basename(path).toLowerCase().endsWith('.json')) return loadHfTokenizer(path);
  const bytes = readWholeFile(path);
  const magic = bytes.byteLength >= 4 ? new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true) : -1;
  if (magic === GGUF_MAGIC) return createTokenizerFromGGUF(openModelFile(path).meta, path);
  return parseLlama2cTokenizer(bytes, path);
}

/** The tokenizer file that belongs next to a llama2.c checkpoint. */
function findLlama2cTokenizer(model: ModelFile): string {
  const dir = dirname(model.path);
  const n = modelVocabSize(model);
  const names = [...(n !== undefined ? [`tok${n}.bin`] : []), 'tokenizer.bin'];
  for (const name of names) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  throw new ModelFormatError(`llama2.c checkpoint ${model.path} has no tokenizer: looked for ${names.join(' and ')} in ${dir}; pass --tokenizer FILE`);
}

/**
 * The model's vocabulary size: `<arch>.vocab_size` metadata, else the token-embedding rows
 * (GGUF dims are innermost first: {n_embd, n_vocab}); undefined when neither is known.
 */
export function modelVocabSize(model: ModelFile): number | undefined {
  const arch = model.meta.get('general.architecture');
  if (typeof arch === 'string') {
    const v = model.meta.get(`${arch}.vocab_size`);
    if (typeof v === 'number') return v;
  }
  const emb = model.tensors.get('token_embd.weight');
  return emb && emb.dims.length === 2 ? emb.dims[1] : undefined;
}
