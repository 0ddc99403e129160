/**
 * The generation loop — the only one in the engine:
 *   format the prompt → prefill (one forward call) → [select → append & stream → stop?]* → done.
 * The model returns logits, the sampling chain picks, this loop appends, streams and stops.
 */
import { ContextOverflowError, InvalidOptionError } from '../errors.js';
import { createSamplingChain, SAMPLING_OPTION_KEYS, type SamplingOptions } from '../decode/options.js';
import { logSumExp } from '../decode/logprobs.js';
import type { KVCache } from '../kv/cache.js';
import { createStreamDecoder } from '../tokenizer/stream-decoder.js';
import type { DoneEvent, FinishReason, GenerationEvent, StopDetail, TokenEvent } from './events.js';
import type { LanguageModel } from './language-model.js';
import { StopStringMatcher } from './stop-strings.js';

export interface GenerateOptions extends SamplingOptions {
  /** Most tokens to generate (integer ≥ 0). Default: until the context is full. */
  maxTokens?: number;
  /** Stop strings: generation ends when the text contains one; it and what follows are not emitted. */
  stop?: readonly string[];
  /** Aborting ends generation with finish reason `abort`. */
  signal?: AbortSignal;
  /** For a text prompt: add BOS (default: the tokenizer's setting). */
  addBos?: boolean;
  /** For a text prompt: parse special-token text (default false: user text stays text). */
  parseSpecial?: boolean;
  /** Cap on positions held in the KV cache (default: the model's context length). */
  contextLength?: number;
  /**
   * Reuse a session's KV cache: the longest common prefix of the session's tokens and this
   * prompt is not recomputed (multi-turn chat prefills only the new turn). Updated in place.
   */
  session?: Session;
  /** Stop at end-of-generation ids (default true). */
  stopAtEndOfGeneration?: boolean;
}

/** A KV cache plus the tokens it holds, carried across generate() calls. */
export interface Session {
  cache: KVCache | null;
  tokens: number[];
}

export function createSession(): Session {
  return { cache: null, tokens: [] };
}

const OWN_KEYS = ['maxTokens', 'stop', 'signal', 'addBos', 'parseSpecial', 'contextLength', 'session', 'stopAtEndOfGeneration'] as const;
const KNOWN = new Set<string>([...OWN_KEYS, ...SAMPLING_OPTION_KEYS]);

/** Split and validate generate() options; unknown keys are rejected, never ignored. */
function splitOptions(options: GenerateOptions): { own: Pick<GenerateOptions, (typeof OWN_KEYS)[number]>; sampling: SamplingOptions } {
  const own: Record<string, unknown> = {};
  const sampling: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    if (!KNOWN.has(k)) throw new InvalidOptionError(`unknown generate option "${k}"`);
    if ((OWN_KEYS as readonly string[]).includes(k)) own[k] = v; else sampling[k] = v;
  }
  const o = own as Pick<GenerateOptions, (typeof OWN_KEYS)[number]>;
  if (o.maxTokens !== undefined && (!Number.isSafeInteger(o.maxTokens) || o.maxTokens < 0)) {
    throw new InvalidOptionError(`maxTokens must be an integer >= 0, got ${String(o.maxTokens)}`);
  }
  if (o.contextLength !== undefined && (!Number.isSafeInteger(o.contextLength) || o.contextLength < 1)) {
    throw new InvalidOptionError(`contextLength must be an integer >= 1, got ${String(o.contextLength)}`);
  }
  if (o.stop !== undefined && (!Array.isArray(o.stop) || o.stop.some((s) => typeof s !== 'string'))) {
    throw new InvalidOptionError('stop must be an array of strings');
  }
  return { own: o, sampling: sampling as SamplingOptions };
}

/** Yield to the macrotask queue at most this often, so abort signals and I/O get a turn. */
const YIELD_EVERY_MS = 4;

/**
 * Generate a continuation of `prompt` (text, or token ids used as given). Streams one event per
 * generated token, then a `done` event. Breaking out of the iteration cancels cleanly.
 */
export async function* generate(lm: LanguageModel, prompt: string | readonly number[], options: GenerateOptions = {}): AsyncGenerator<GenerationEvent, void, undefined> {
  const { own, sampling } = splitOptions(options);
  const { model, tokenizer } = lm;
  const nVocab = model.config.nVocab;
  const chain = createSamplingChain(sampling, nVocab);

  const promptTokens = typeof prompt === 'string'
    ? tokenizer.encode(prompt, { ...(own.addBos !== undefined && { addBos: own.addBos }), parseSpecial: own.parseSpecial ?? false })
    : [...prompt];
  for (const id of promptTokens) {
    if (!Number.isSafeInteger(id) || id < 0 || id >= nVocab) throw new InvalidOptionError(`prompt token id ${id} is outside the vocabulary [0, ${nVocab - 1}]`);
  }
  if (promptTokens.length === 0) throw new InvalidOptionError('the prompt is empty (no tokens): give some text or enable BOS');
  const contextLimit = Math.min(model.config.nCtx, own.contextLength ?? model.config.nCtx);
  if (promptTokens.length > contextLimit) {
    throw new ContextOverflowError(`the prompt has ${promptTokens.length} tokens but the context holds ${contextLimit}`);
  }
  const maxTokens = own.maxTokens ?? Infinity;

  // The cache: sized from what this request can use, or the session's (reusing the common prefix).
  const session = own.session;
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

  const tokens: number[] = [];
  const history: number[] = [...promptTokens];
  const ctx = { tokens: history, promptLength: promptTokens.length };
  const decoder = createStreamDecoder(tokenizer, { context: promptTokens });
  const stopper = new StopStringMatcher(own.stop ?? []);
  const eog = own.stopAtEndOfGeneration === false ? new Set<number>() : lm.endOfGeneration;
  let text = '';
  let logprob = 0;
  let finish: { reason: FinishReason; detail: StopDetail } | null = null;
  let tail = '';

  const tPrefill = performance.now();
  let logits = maxTokens > 0 ? model.forward(promptTokens.slice(reuse), cache) : new Float32Array(0);
  const prefillMs = performance.now() - tPrefill;
  if (session) session.tokens = [...promptTokens];
  const tDecode = performance.now();
  let decodeForwards = 0;
  let lastYield = performance.now();

  try {
    if (maxTokens === 0) finish = { reason: 'length', detail: { kind: 'max-tokens', limit: 0 } };
    while (!finish) {
      if (own.signal?.aborted) { finish = { reason: 'abort', detail: { kind: 'abort' } }; break; }
      const id = chain.sample(logits, ctx);
      chain.accept(id);
      const lp = logits[id]! - logSumExp(logits);
      logprob += lp;
      tokens.push(id);
      history.push(id);

      let delta = '';
      if (eog.has(id)) {
        finish = { reason: 'stop', detail: { kind: 'eog', token: id } };
      } else {
        const scan = stopper.push(decoder.push(id));
        delta = scan.emit;
        if (scan.matched !== undefined) finish = { reason: 'stop', detail: { kind: 'stop-string', text: scan.matched } };
        else if (tokens.length >= maxTokens) finish = { reason: 'length', detail: { kind: 'max-tokens', limit: maxTokens } };
        else if (cache.length >= capacity) finish = { reason: 'length', detail: { kind: 'context', limit: capacity } };
      }
      if (finish && finish.detail.kind !== 'stop-string') delta += stopper.push(decoder.flush()).emit + stopper.flush();
      text += delta;
      const ev: TokenEvent = { type: 'token', index: tokens.length - 1, id, text: delta, logprob: lp, cacheLength: cache.length, cacheBytes: cache.bytes };
      yield ev;
      if (finish) break;

      logits = model.forward([id], cache);
      decodeForwards++;
      if (session) session.tokens.push(id);
      if (performance.now() - lastYield >= YIELD_EVERY_MS) {
        await new Promise<void>((r) => setImmediate(r));
        lastYield = performance.now();
      }
    }
  } finally {
    // Reached on completion, on a consumer's break (return()), and on errors.
    if (!finish) finish = { reason: 'abort', detail: { kind: 'abort' } };
  }
  if (finish.reason === 'abort') {
    tail = stopper.push(decoder.flush()).emit + stopper.flush();
    text += tail;
  }
  const decodeMs = performance.now() - tDecode;
  const prefillCount = promptTokens.length - reuse;
  const done: DoneEvent = {
    type: 'done',
    finishReason: finish.reason,
    stop: finish.detail,
    promptTokens,
    tokens,
    text,
    tail,
    logprob,
    usage: { promptTokens: promptTokens.length, completionTokens: tokens.length, totalTokens: promptTokens.length + tokens.length },
    timings: {
      prefillMs,
      decodeMs,
      prefillTokens: prefillCount,
      decodeTokens: decodeForwards,
      prefillTokensPerS: prefillMs > 0 ? (prefillCount * 1000) / prefillMs : 0,
      decodeTokensPerS: decodeMs > 0 ? (decodeForwards * 1000) / decodeMs : 0,
      msPerToken: decodeForwards > 0 ? decodeMs / decodeForwards : 0,
    },
    chain: chain.describe(),
    cache: { length: cache.length, bytes: cache.bytes, capacityBytes: cache.capacityBytes },
  };
  yield done;
}

/** Run generate() to completion and return its final event. */
export async function generateText(lm: LanguageModel, prompt: string | readonly number[], options: GenerateOptions = {}): Promise<DoneEvent> {
  let done: DoneEvent | undefined;
  for await (const ev of generate(lm, prompt, options)) if (ev.type === 'done') done = ev;
  return done!;
}
