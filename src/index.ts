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
export { createSamplingChain, validateSamplingOptions, DEFAULT_ORDER, CONTROL_NAMES, SAMPLING_OPTION_KEYS } from './decode/options.js';
export type { SamplingOptions, ControlName } from './decode/options.js';
export type { SamplingChain, ChainDescription, StageDescription } from './decode/chain.js';
export { rawLogprobs, processedLogprobs, validateTopLogprobs, MAX_TOP_LOGPROBS } from './decode/logprobs.js';
export type { LogprobResult, LogprobSource, TokenLogprob } from './decode/logprobs.js';
export type { Candidates, LogitsProcessor, Sampler, ProcessorContext, ParamValue } from './decode/types.js';
