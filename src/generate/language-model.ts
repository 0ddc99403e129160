/**
 * A loaded language model: the parsed file, the runnable model, its tokenizer, and which ids
 * end generation. This is what generate() runs on.
 */
import { openModelFile } from '../format/open.js';
import type { ModelFile } from '../format/model-file.js';
import type { Model } from '../model/model.js';
import { loadModel, type LoadModelOptions } from '../model/registry.js';
import { modelOpenOptions } from '../model/kernels/wasm/select.js';
import { loadTokenizer } from '../tokenizer/load.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';

export interface LanguageModel {
  readonly file: ModelFile;
  readonly model: Model;
  readonly tokenizer: Tokenizer;
  /** Ids that end generation (eos, end-of-turn; BOS for llama2.c checkpoints). */
  readonly endOfGeneration: ReadonlySet<number>;
  /** Milliseconds spent reading and preparing the model and tokenizer. */
  readonly loadMs: number;
}

export interface LoadLanguageModelOptions extends LoadModelOptions {
  /** Path of a GGUF file or llama2.c checkpoint. */
  model: string;
  /** Explicit tokenizer file (llama2.c .bin, vocab GGUF, tokenizer.json); default: the model's own. */
  tokenizer?: string;
}

/** Open a model file, build the model and its tokenizer. */
export function loadLanguageModel(opts: LoadLanguageModelOptions): LanguageModel {
  const t0 = performance.now();
  const { model: path, tokenizer: tokenizerPath, ...modelOpts } = opts;
  // weights are read straight into the compute backend's memory (no second copy)
  const file = openModelFile(path, modelOpenOptions(modelOpts));
  const model = loadModel(file, modelOpts);
  const tokenizer = loadTokenizer(tokenizerPath === undefined ? { modelFile: file } : { modelFile: file, tokenizerPath });
  return { file, model, tokenizer, endOfGeneration: endOfGenerationIds(file, tokenizer), loadMs: performance.now() - t0 };
}

/**
 * End-of-generation ids: the tokenizer's (eos + end-of-turn ids from the metadata), plus BOS for
 * llama2.c checkpoints, whose models end a story by emitting BOS (run.c stops there).
 */
export function endOfGenerationIds(file: ModelFile, tokenizer: Tokenizer): Set<number> {
  const ids = new Set(tokenizer.endOfGeneration);
  if (tokenizer.eos !== null) ids.add(tokenizer.eos);
  if (file.meta.get('tokenloop.llama2c.bos_ends_sequence') === true && tokenizer.bos !== null) ids.add(tokenizer.bos);
  return ids;
}
