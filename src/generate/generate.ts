/**
 * The generation loop — the only one in the engine:
 *   format the prompt → prefill (one forward call) → [select → append & stream → stop?]* → done.
 * The model returns logits, the sampling chain picks, this loop appends, streams and stops.
 *
 * Strategies (see strategy.ts): one sequence (the default), `n` independent samples drawn in
 * lockstep from one prefill (each on a fork of the prefilled KV cache, with its own chain clone
 * and a seed derived from the request's), or beam search (beam-search.ts, same prefill).
 */
import { InvalidOptionError } from '../errors.js';
import type { SamplingChain } from '../decode/chain.js';
import { logSumExp, processedLogprobs, rawLogprobs } from '../decode/logprobs.js';
import { createJsonConstraint, createJsonSchemaConstraint } from '../decode/constraints/factories.js';
import { createSamplingChain, SAMPLING_OPTION_KEYS, type SamplingOptions } from '../decode/options.js';
import { createRng } from '../decode/rng.js';
import type { Candidates, ProcessorContext } from '../decode/types.js';
import type { KVCache } from '../kv/cache.js';
import { createStreamDecoder, type StreamDecoder } from '../tokenizer/stream-decoder.js';
import { beamSearch } from './beam-search.js';
import { doneEvent } from './done-event.js';
import type { DoneEvent, FinishReason, GenerationEvent, SequenceResult, StopDetail, TokenEvent, TokenLogprobs } from './events.js';
import type { LanguageModel } from './language-model.js';
import { prepare, type Session } from './prepare.js';
import { StopStringMatcher } from './stop-strings.js';
import { resolveStrategy, STRATEGY_OPTION_KEYS, type StrategyOptions } from './strategy.js';

export type { Session } from './prepare.js';

export interface GenerateOptions extends SamplingOptions, StrategyOptions {
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
   * With `n` > 1 or beam search the session keeps the prompt only (the sequences run on forks).
   */
  session?: Session;
  /** Stop at end-of-generation ids (default true). */
  stopAtEndOfGeneration?: boolean;
  /**
   * JSON mode: the output is one JSON object (grammar-constrained; the constraint runs in the
   * chain's 'processors' slot, ahead of any user processors, and closes the value within maxTokens).
   */
  jsonMode?: boolean;
  /** JSON-Schema mode: the output is JSON valid against this schema (object form of the schema). */
  jsonSchema?: unknown;
  /**
   * An observer of each step of the loop (src/inspect/trace.ts builds one). When absent the loop
   * does no extra work. Not available with beam search.
   */
  trace?: GenerationTracer;
}

/** What a tracer sees at each step (valid only during the call: buffers are reused). */
export interface TraceStepInfo {
  sequence: number;
  /** 0-based index of the generated token within its sequence. */
  index: number;
  /** The chosen id and its log-probability under the raw distribution. */
  id: number;
  logprob: number;
  /** The model's raw logits for this step. */
  logits: Float32Array;
  /** The processed candidates the sampler chose from. */
  candidates: Candidates;
  /** The chain, its processors still in the state they had when choosing (accept() not yet called). */
  chain: SamplingChain;
  /** The context the processors saw (prompt + tokens generated before this one). */
  ctx: ProcessorContext;
  /** KV-cache positions and bytes when the token was chosen (before its own forward pass). */
  cacheLength: number;
  cacheBytes: number;
  /** Time spent in the processors and the sampler. */
  selectMs: number;
}

/** An observer of the generation loop; every call is synchronous, inside the loop. */
export interface GenerationTracer {
  /** After the prompt is in the cache. */
  prefill?(info: { promptTokens: readonly number[]; ms: number; cacheLength: number; cacheBytes: number }): void;
  /** After a token is chosen, before the chain accepts it. */
  step(info: TraceStepInfo): void;
  /** After the chosen token's forward pass (the cache grew by one). */
  forward?(info: { sequence: number; index: number; ms: number; cacheLength: number; cacheBytes: number }): void;
}

export function createSession(): Session {
  return { cache: null, tokens: [] };
}

const OWN_KEYS = ['maxTokens', 'stop', 'signal', 'addBos', 'parseSpecial', 'contextLength', 'session', 'stopAtEndOfGeneration', 'jsonMode', 'jsonSchema', 'trace'] as const;
type OwnOptions = Pick<GenerateOptions, (typeof OWN_KEYS)[number]>;
const KNOWN = new Set<string>([...OWN_KEYS, ...STRATEGY_OPTION_KEYS, ...SAMPLING_OPTION_KEYS]);

/** Split and validate generate() options; unknown keys are rejected, never ignored. */
function splitOptions(options: GenerateOptions): { own: OwnOptions; strategy: StrategyOptions; sampling: SamplingOptions } {
  const own: Record<string, unknown> = {};
  const strategy: Record<string, unknown> = {};
  const sampling: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    if (!KNOWN.has(k)) throw new InvalidOptionError(`unknown generate option "${k}"`);
    if ((OWN_KEYS as readonly string[]).includes(k)) own[k] = v;
    else if ((STRATEGY_OPTION_KEYS as readonly string[]).includes(k)) { if (v !== undefined) strategy[k] = v; }
    else sampling[k] = v;
  }
  const o = own as OwnOptions;
  if (o.maxTokens !== undefined && (!Number.isSafeInteger(o.maxTokens) || o.maxTokens < 0)) {
    throw new InvalidOptionError(`maxTokens must be an integer >= 0, got ${String(o.maxTokens)}`);
  }
  if (o.contextLength !== undefined && (!Number.isSafeInteger(o.contextLength) || o.contextLength < 1)) {
    throw new InvalidOptionError(`contextLength must be an integer >= 1, got ${String(o.contextLength)}`);
  }
  if (o.stop !== undefined && (!Array.isArray(o.stop) || o.stop.some((s) => typeof s !== 'string'))) {
    throw new InvalidOptionError('stop must be an array of strings');
  }
  if (o.jsonMode !== undefined && typeof o.jsonMode !== 'boolean') throw new InvalidOptionError(`jsonMode must be a boolean, got ${typeof o.jsonMode}`);
  if (o.jsonMode === true && o.jsonSchema !== undefined) throw new InvalidOptionError('jsonMode and jsonSchema are exclusive: a schema already implies JSON output');
  if (o.jsonSchema !== undefined && (typeof o.jsonSchema !== 'object' || o.jsonSchema === null || Array.isArray(o.jsonSchema)) && typeof o.jsonSchema !== 'boolean') {
    throw new InvalidOptionError('jsonSchema must be a JSON Schema object');
  }
  if (o.trace !== undefined && (typeof o.trace !== 'object' || o.trace === null || typeof o.trace.step !== 'function')) {
    throw new InvalidOptionError('trace must be an object with a step() method');
  }
  return { own: o, strategy: strategy as StrategyOptions, sampling: sampling as SamplingOptions };
}

/** Yield to the macrotask queue at most this often, so abort signals and I/O get a turn. */
export const YIELD_EVERY_MS = 4;

/**
 * A seed for sample `i` of a request seeded with `seed` (sample 0 keeps `seed`, so n = 1 and the
 * first of n samples agree). A splitmix32-style mix of (seed, i), so samples draw unrelated streams.
 */
export function deriveSeed(seed: number, i: number): number {
  if (i === 0) return seed;
  let z = ((Math.trunc(seed) >>> 0) + Math.imul(i, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

/** Adds the JSON / JSON-Schema constraint (if asked) in front of the user's processors. */
function withConstraint(lm: LanguageModel, sampling: SamplingOptions, own: OwnOptions, maxTokens: number): SamplingOptions {
  if (own.jsonMode !== true && own.jsonSchema === undefined) return sampling;
  if (sampling.processors !== undefined && !Array.isArray(sampling.processors)) return sampling; // the chain reports the bad value
  const opts = { endOfGeneration: lm.endOfGeneration, ...(Number.isFinite(maxTokens) && { maxTokens }) };
  const constraint = own.jsonSchema !== undefined
    ? createJsonSchemaConstraint(own.jsonSchema, lm.tokenizer, opts)
    : createJsonConstraint(lm.tokenizer, opts);
  return { ...sampling, processors: [constraint, ...(sampling.processors ?? [])] };
}

/** One sequence being sampled. */
interface Track {
  index: number;
  chain: SamplingChain;
  cache: KVCache;
  logits: Float32Array;
  tokens: number[];
  ctx: ProcessorContext & { tokens: number[] };
  decoder: StreamDecoder;
  stopper: StopStringMatcher;
  text: string;
  tail: string;
  logprob: number;
  tokenLogprobs: number[];
  logprobs: TokenLogprobs[] | undefined;
  finish: { reason: FinishReason; detail: StopDetail } | null;
}

/**
 * Generate a continuation of `prompt` (text, or token ids used as given). Streams one event per
 * generated token (with `n` > 1 samples, each event names its `sequence`; beam search streams
 * none, since no beam is final before the search ends), then a `done` event. Breaking out of the
 * iteration cancels cleanly.
 */
export async function* generate(lm: LanguageModel, prompt: string | readonly number[], options: GenerateOptions = {}): AsyncGenerator<GenerationEvent, void, undefined> {
  const { own, strategy: strategyOptions, sampling: userSampling } = splitOptions(options);
  const strategy = resolveStrategy(strategyOptions, userSampling);
  const { model, tokenizer } = lm;
  const maxTokens = own.maxTokens ?? Infinity;
  const sampling = withConstraint(lm, userSampling, own, maxTokens);
  // Beam search ranks by the processed distribution and picks no token at random: its chain is
  // built greedy, so the reported sampler is what really decides (argmax over beams).
  const chain = createSamplingChain(strategy.kind === 'beam' ? { ...sampling, temperature: 0 } : sampling, model.config.nVocab);
  const pre = prepare(lm, prompt, { ...own, maxTokens });
  const eog = own.stopAtEndOfGeneration === false ? new Set<number>() : lm.endOfGeneration;
  const stop = own.stop ?? [];
  if (strategy.kind === 'beam') {
    if (own.trace !== undefined) throw new InvalidOptionError('trace is not supported with beam search (numBeams > 1)');
    yield await beamSearch(lm, pre, chain, strategy, { maxTokens, stop, eog, topLogprobs: strategyOptions.topLogprobs, signal: own.signal, sessionCache: own.session !== undefined });
    return;
  }

  const session = own.session;
  const { promptTokens, capacity } = pre;
  const topN = strategyOptions.topLogprobs;
  const n = strategy.n;
  // Sample 0 decodes in the prefilled cache itself unless a session owns it; the others fork it.
  const forkCapacity = Math.min(capacity, promptTokens.length + (Number.isFinite(maxTokens) ? maxTokens : capacity));
  const tracks: Track[] = [];
  for (let i = 0; i < n; i++) {
    const history = [...promptTokens];
    tracks.push({
      index: i,
      chain: i === 0 ? chain : chain.clone(createRng(deriveSeed(chain.seed, i))),
      cache: i === 0 && (n === 1 || !session) ? pre.cache : pre.cache.fork(Math.max(forkCapacity, pre.cache.length)),
      logits: pre.logits,
      tokens: [],
      ctx: { tokens: history, promptLength: promptTokens.length },
      decoder: createStreamDecoder(tokenizer, { context: promptTokens }),
      stopper: new StopStringMatcher(stop),
      text: '', tail: '', logprob: 0, tokenLogprobs: [],
      logprobs: topN === undefined ? undefined : [],
      finish: null,
    });
  }
  const useSession = session !== undefined && n === 1;
  const tracer = own.trace;
  tracer?.prefill?.({ promptTokens, ms: pre.prefillMs, cacheLength: pre.cache.length, cacheBytes: pre.cache.bytes });

  // One sequence samples each step's logits right after the forward call that made them (no await
  // in between, see below), so the model may hand back the same array every step; several keep
  // theirs while the others step.
  const forwardOpts = n === 1 ? { reuseLogits: true } : {};
  const tDecode = performance.now();
  let decodeForwards = 0;
  let lastYield = performance.now();
  try {
    if (maxTokens === 0) for (const t of tracks) t.finish = { reason: 'length', detail: { kind: 'max-tokens', limit: 0 } };
    let open = maxTokens === 0 ? 0 : n;
    while (open > 0) {
      for (const t of tracks) {
        if (t.finish) continue;
        if (own.signal?.aborted) {
          for (const u of tracks) if (!u.finish) u.finish = { reason: 'abort', detail: { kind: 'abort' } };
          open = 0;
          break;
        }
        const logits = t.logits;
        const tSelect = tracer ? performance.now() : 0;
        const id = t.chain.sample(logits, t.ctx);
        const lp = logits[id]! - logSumExp(logits);
        if (tracer) {
          tracer.step({ sequence: t.index, index: t.tokens.length, id, logprob: lp, logits, candidates: t.chain.candidates!, chain: t.chain,
            ctx: t.ctx, cacheLength: t.cache.length, cacheBytes: t.cache.bytes, selectMs: performance.now() - tSelect });
        }
        let details: TokenLogprobs | undefined;
        if (topN !== undefined) {
          details = { raw: rawLogprobs(logits, id, topN), processed: processedLogprobs(t.chain.candidates!, id, topN) };
          t.logprobs!.push(details);
        }
        t.chain.accept(id);
        t.logprob += lp;
        t.tokenLogprobs.push(lp);
        t.tokens.push(id);
        t.ctx.tokens.push(id);

        let delta = '';
        let finish: Track['finish'] = null;
        if (eog.has(id)) {
          finish = { reason: 'stop', detail: { kind: 'eog', token: id } };
        } else {
          const scan = t.stopper.push(t.decoder.push(id));
          delta = scan.emit;
          if (scan.matched !== undefined) finish = { reason: 'stop', detail: { kind: 'stop-string', text: scan.matched } };
          else if (t.tokens.length >= maxTokens) finish = { reason: 'length', detail: { kind: 'max-tokens', limit: maxTokens } };
          else if (t.cache.length >= capacity) finish = { reason: 'length', detail: { kind: 'context', limit: capacity } };
        }
        if (finish && finish.detail.kind !== 'stop-string') delta += t.stopper.push(t.decoder.flush()).emit + t.stopper.flush();
        t.text += delta;
        t.finish = finish;
        const ev: TokenEvent = { type: 'token', sequence: t.index, index: t.tokens.length - 1, id, text: delta, logprob: lp, cacheLength: t.cache.length, cacheBytes: t.cache.bytes };
        if (details) ev.logprobs = details;
        yield ev;
        if (finish) { open--; continue; }

        // Let other work run now and then: here, never between a forward call and the sampling of
        // its logits, which may be the model's reused array (another generation on the same model
        // would overwrite it).
        if (performance.now() - lastYield >= YIELD_EVERY_MS) {
          await new Promise<void>((r) => setImmediate(r));
          lastYield = performance.now();
          if (own.signal?.aborted) continue;
        }
        const tForward = tracer ? performance.now() : 0;
        t.logits = model.forward([id], t.cache, forwardOpts);
        decodeForwards++;
        if (tracer?.forward) tracer.forward({ sequence: t.index, index: t.tokens.length - 1, ms: performance.now() - tForward, cacheLength: t.cache.length, cacheBytes: t.cache.bytes });
        if (useSession) session.tokens.push(id);
      }
    }
  } finally {
    // Reached on completion, on a consumer's break (return()), and on errors.
    for (const t of tracks) if (!t.finish) t.finish = { reason: 'abort', detail: { kind: 'abort' } };
  }
  for (const t of tracks) {
    if (t.finish!.reason === 'abort') {
      t.tail = t.stopper.push(t.decoder.flush()).emit + t.stopper.flush();
      t.text += t.tail;
    }
  }
  let best = tracks[0]!;
  for (const t of tracks) if (t.logprob > best.logprob) best = t;
  const sequences: SequenceResult[] = tracks.map((t) => ({
    index: t.index, tokens: t.tokens, text: t.text, logprob: t.logprob, tokenLogprobs: t.tokenLogprobs,
    ...(t.logprobs && { logprobs: t.logprobs }), finishReason: t.finish!.reason, stop: t.finish!.detail,
  }));
  const caches = new Set<KVCache>([pre.cache, ...tracks.map((t) => t.cache)]);
  yield doneEvent({
    pre, chain, strategy, sequences, best: sequences[best.index]!, tail: best.tail,
    decodeMs: performance.now() - tDecode, decodeForwards,
    cache: {
      length: best.cache.length,
      bytes: [...caches].reduce((s, c) => s + c.bytes, 0),
      capacityBytes: [...caches].reduce((s, c) => s + c.capacityBytes, 0),
    },
  });
}

/** Run generate() to completion and return its final event. */
export async function generateText(lm: LanguageModel, prompt: string | readonly number[], options: GenerateOptions = {}): Promise<DoneEvent> {
  let done: DoneEvent | undefined;
  for await (const ev of generate(lm, prompt, options)) if (ev.type === 'done') done = ev;
  return done!;
}
