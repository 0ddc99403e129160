/** tokenloop public API. */
export * from './errors.js';
export { openModelFile } from './format/open.js';
export type { ModelFile, TensorInfo, MetaValue } from './format/model-file.js';
export { GGMLType } from './format/dtypes.js';
export { KVCache } from './kv/cache.js';
export type { Model, ModelConfig } from './model/model.js';
export { loadModel, supportedArchitectures } from './model/registry.js';
export type { LoadModelOptions } from './model/registry.js';
export type { Tokenizer, EncodeOptions } from './tokenizer/tokenizer.js';
export { createRng } from './decode/rng.js';
export type { Rng } from './decode/rng.js';
