/**
 * The model contract: token ids in, logits out. A model knows nothing of sampling.
 */
import type { KVCache } from '../kv/cache.js';

export interface ModelConfig {
  architecture: string;
  nVocab: number;
  /** Context length the model was trained with (from the file). */
  nCtx: number;
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  headDim: number;
  nFF: number;
}

export interface ForwardOptions {
  /** Return logits for every input position (nTokens × nVocab) instead of only the last. */
  allLogits?: boolean;
  /**
   * Return the logits in an array the model keeps and overwrites on its next forward call (as
   * llama.cpp's llama_get_logits): no allocation and no copy per call, which a decode loop that
   * reads each step's logits before the next step does not need. Without it every call returns a
   * fresh array. A model may ignore the option.
   */
  reuseLogits?: boolean;
}

export interface Model {
  readonly config: ModelConfig;
  /** A cache for up to `maxTokens` positions (default: the model's context length). */
  createCache(maxTokens?: number): KVCache;
  /**
   * Run `tokens` at positions cache.length.. and append their keys/values to the cache.
   * Returns the logits of the last position (or of all positions with `allLogits`).
   */
  forward(tokens: ArrayLike<number>, cache: KVCache, opts?: ForwardOptions): Float32Array;
  /** Weight bytes held in memory. */
  readonly weightBytes: number;
  /** Most tokens one forward pass computes at once (longer inputs run in batches), where the model batches. */
  readonly batchSize?: number;
}
