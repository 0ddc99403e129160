/**
 * The shared first half of every strategy: turn the prompt into ids, set up the KV cache (a fresh
 * one sized for the request, or a session's with its common prefix reused) and prefill it with one
 * forward call. Sampling and beam search then fork this one prefilled cache.
 */
import { ContextOverflowError, InvalidOptionError } from '../errors.js';
import type { KVCache } from '../kv/cache.js';
import { createStreamDecoder } from '../tokenizer/stream-decoder.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import type { LanguageModel } from './language-model.js';
import { StopStringMatcher } from './stop-strings.js';

/** A KV cache plus the tokens it holds, carried across generate() calls. */
export interface Session {
  cache: KVCache | null;
  tokens: number[];
}

/** What prepare() needs from the generate options. */
export interface PrepareOptions {
  addBos?: boolean;
  parseSpecial?: boolean;
  contextLength?: number;
  session?: Session;
  /** Most tokens to generate (Infinity = until the context is full). */
  maxTokens: number;
}

/** A prompt in the cache, ready to decode from. */
export interface Prefilled {
  promptTokens: number[];
  /** The prefilled cache (the session's own when a session is used: fork it before changing it). */
  cache: KVCache;
  /** Positions usable by this request (cache capacity capped by the context length). */
  capacity: number;
  /** Prompt tokens taken from the session's cache instead of being recomputed. */
  reuse: number;
  /** Logits after the last prompt token (empty when maxTokens is 0). */
  logits: Float32Array;
  prefillMs: number;
}

/** Tokenizes and checks the prompt, sets up the cache and prefills it. */
export function prepare(lm: LanguageModel, prompt: string | readonly number[], o: PrepareOptions): Prefilled {
  const { model, tokenizer } = lm;
  const nVocab = model.config.nVocab;
  const promptTokens = typeof prompt === 'string'
    ? tokenizer.encode(prompt, { ...(o.addBos !== undefined && { addBos: o.addBos }), parseSpecial: o.parseSpecial ?? false })
    : [...prompt];
  for (const id of promptTokens) {
    if (!Number.isSafeInteger(id) || id < 0 || id >= nVocab) throw new InvalidOptionError(`prompt token id ${id} is outside the vocabulary [0, ${nVocab - 1}]`);
  }
  if (promptTokens.length === 0) throw new InvalidOptionError('the prompt is empty (no tokens): give some text or enable BOS');
  const contextLimit = Math.min(model.config.nCtx, o.contextLength ?? model.config.nCtx);
  if (promptTokens.length > contextLimit) {
    throw new ContextOverflowError(`the prompt has ${promptTokens.length} tokens but the context holds ${contextLimit}`);
  }
  const maxTokens = o.maxTokens;

  // The cache: sized from what this request can use, or the session's (reusing the common prefix).
  const session = o.session;
  let cache: KVCache;
  let reuse = 0;
  if (session?.cache) {
    cache = session.cache;
    const limit = Math.min(session.tokens.length, cache.length, promptTokens.length - 1);
    while (reuse < limit && session.tokens[reuse] === promptTokens[reuse]) reuse++;
    cache.truncate(reuse);
  } else {
    cache = model.createCache(session ? contextLimit : Math.min(contextLimit, promptTokens.length + (Number.isFinite(maxTokens) ? maxTokens : contextLimit)));
    if (session) session.cache = cache;
  }
  const capacity = Math.min(cache.capacity, contextLimit);
  if (promptTokens.length > capacity) {
    throw new ContextOverflowError(`the prompt has ${promptTokens.length} tokens but the session's cache holds ${capacity}`);
  }
  const t0 = performance.now();
  const logits = maxTokens > 0 ? model.forward(promptTokens.slice(reuse), cache) : new Float32Array(0);
  const prefillMs = performance.now() - t0;
  if (session) session.tokens = [...promptTokens];
  return { promptTokens, cache, capacity, reuse, logits, prefillMs };
}

/**
 * The text a finished token sequence shows, as the streaming path would have emitted it:
 * decoded after the prompt, cut before a stop string, with an end-of-generation token left out.
 */
export function sequenceText(tokenizer: Tokenizer, promptTokens: readonly number[], tokens: readonly number[], stop: readonly string[], eog: ReadonlySet<number>): string {
  const decoder = createStreamDecoder(tokenizer, { context: promptTokens });
  const stopper = new StopStringMatcher(stop);
  let text = '';
  for (const id of tokens) {
    if (eog.has(id)) break;
    const scan = stopper.push(decoder.push(id));
    text += scan.emit;
    if (scan.matched !== undefined) return text;
  }
  return text + stopper.push(decoder.flush()).emit + stopper.flush();
}
