/**
 * Architecture registry: `general.architecture` → family module → a runnable Model.
 * Adding a family is one file in families/ and one entry here.
 */
import { ModelFormatError, UnsupportedError } from '../errors.js';
import type { ModelFile } from '../format/model-file.js';
import type { Family } from './family.js';
import { gemma } from './families/gemma.js';
import { gemma2 } from './families/gemma2.js';
import { gpt2 } from './families/gpt2.js';
import { internlm2 } from './families/internlm2.js';
import { llama } from './families/llama.js';
import { olmo2 } from './families/olmo2.js';
import { phi3 } from './families/phi3.js';
import { qwen2 } from './families/qwen2.js';
import { qwen3 } from './families/qwen3.js';
import { stablelm } from './families/stablelm.js';
import { starcoder2 } from './families/starcoder2.js';
import type { KVCacheType } from '../kv/cache.js';
import type { Model } from './model.js';
import type { SpecOptions } from './standard.js';
import { TransformerModel } from './transformer.js';

const FAMILIES: Family[] = [llama, qwen2, qwen3, gemma, gemma2, phi3, gpt2, stablelm, starcoder2, olmo2, internlm2];

/** Options for loadModel: spec options plus the kernel backend ('wasm' default, or env TOKENLOOP_BACKEND) and threads. */
export type LoadModelOptions = SpecOptions & {
  backend?: 'wasm' | 'js';
  threads?: number;
  /** Element type of the KV caches the model creates: 'f32' (default, exact) or 'f16' (half the memory, faster decode). */
  kvType?: KVCacheType;
  /**
   * Run a short throwaway forward pass at load (default: with the wasm backend), so that the
   * first real request runs compiled code; see TransformerModel.warmup.
   */
  warmup?: boolean;
  /**
   * Most tokens one forward pass computes at once (default 512): longer inputs run in batches of
   * this size, which bounds the activation memory of a long prompt.
   */
  batchSize?: number;
};

/** Architectures loadModel accepts. */
export function supportedArchitectures(): string[] {
  return FAMILIES.flatMap((f) => f.architectures).sort();
}

/** Build a runnable model from a parsed file (weights stay views into the file buffer). */
export function loadModel(file: ModelFile, opts: LoadModelOptions = {}): Model {
  const arch = file.meta.get('general.architecture');
  if (arch === undefined) throw new ModelFormatError(`${file.path}: missing required metadata key general.architecture`);
  if (typeof arch !== 'string') throw new ModelFormatError(`${file.path}: general.architecture is not a string`);
  const fam = FAMILIES.find((f) => f.architectures.includes(arch));
  if (!fam) throw new UnsupportedError(`unsupported architecture "${arch}" (supported: ${supportedArchitectures().join(', ')})`);
  const { spec, bytes } = fam.build(file, arch, opts);
  const model = new TransformerModel(spec, bytes, { backend: opts.backend, threads: opts.threads, kvType: opts.kvType, batchSize: opts.batchSize });
  if (opts.warmup ?? model.backend === 'wasm') model.warmup();
  return model;
}
