/**
 * Beam search over the model (Hugging Face transformers' algorithm; bookkeeping in
 * decode/beam.ts). The prompt is prefilled once; every beam decodes in its own fork of that KV
 * cache. Each step every open beam's logits go through its own clone of the processing chain
 * (penalties, bias, constraints see that beam's tokens), are log-normalised, and the 2·numBeams
 * best (beam, token) continuations by cumulative log-prob are ranked: end-of-generation tokens and
 * completed stop strings among the first numBeams become finished hypotheses, the rest fill the
 * open beams. A parent chosen by several continuations has its cache copied into a cache freed by
 * a parent chosen by none (no re-prefill, no new allocation after the first step).
 * The beams' forward calls run one after the other: the model API takes one cache per call.
 */
import { BeamHypotheses, topBeamCandidates, type BeamCandidate, type BeamStep } from '../decode/beam.js';
import { noCandidateError } from '../decode/candidates.js';
import type { SamplingChain } from '../decode/chain.js';
import { logSumExp, processedLogprobs, rawLogprobs } from '../decode/logprobs.js';
import type { ProcessorContext } from '../decode/types.js';
import type { KVCache } from '../kv/cache.js';
import { createStreamDecoder } from '../tokenizer/stream-decoder.js';
import { doneEvent } from './done-event.js';
import type { DoneEvent, FinishReason, SequenceResult, StopDetail, TokenLogprobs } from './events.js';
import type { LanguageModel } from './language-model.js';
import { sequenceText, type Prefilled } from './prepare.js';
import { StopStringMatcher } from './stop-strings.js';
import type { Strategy } from './strategy.js';

/** What beam search needs besides the strategy. */
export interface BeamSearchOptions {
  maxTokens: number;
  stop: readonly string[];
  eog: ReadonlySet<number>;
  topLogprobs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** The prefilled cache belongs to a session: leave it as it is and work on forks. */
  sessionCache: boolean;
}

interface Beam {
  chain: SamplingChain;
  cache: KVCache;
  logits: Float32Array;
  tokens: number[];
  ctx: ProcessorContext & { tokens: number[] };
  /** Cumulative processed log-prob (what beams are ranked by). */
  sum: number;
  /** Cumulative raw log-prob (what results report). */
  logprob: number;
  tokenLogprobs: number[];
  logprobs: TokenLogprobs[] | undefined;
}

interface Finished {
  tokens: number[];
  logprob: number;
  tokenLogprobs: number[];
  logprobs: TokenLogprobs[] | undefined;
  finish: { reason: FinishReason; detail: StopDetail };
}

/** Runs beam search from a prefilled prompt and returns the final event (beam search streams no tokens). */
export async function beamSearch(
  lm: LanguageModel, pre: Prefilled, chain: SamplingChain, strategy: Extract<Strategy, { kind: 'beam' }>, o: BeamSearchOptions,
): Promise<DoneEvent> {
  const { model, tokenizer } = lm;
  const { promptTokens, capacity } = pre;
  const { numBeams } = strategy;
  const topN = o.topLogprobs;
  // The last token needs no cache slot, so a full cache still allows one more token.
  const room = capacity - promptTokens.length + 1;
  const maxNew = Math.min(o.maxTokens, room);
  const lengthDetail: StopDetail = o.maxTokens <= room ? { kind: 'max-tokens', limit: o.maxTokens } : { kind: 'context', limit: capacity };
  const hyps = new BeamHypotheses<Finished>(numBeams, strategy.lengthPenalty, strategy.earlyStopping, maxNew);
  const caches = new Set<KVCache>([pre.cache]);
  const forkCapacity = Math.min(capacity, promptTokens.length + maxNew);
  const fork = (c: KVCache) => { const f = c.fork(Math.max(forkCapacity, c.length)); caches.add(f); return f; };

  let beams: Beam[] = [{
    chain, cache: o.sessionCache ? fork(pre.cache) : pre.cache, logits: pre.logits, tokens: [],
    ctx: { tokens: [...promptTokens], promptLength: promptTokens.length },
    sum: 0, logprob: 0, tokenLogprobs: [], logprobs: topN === undefined ? undefined : [],
  }];
  const stopIn = (tokens: readonly number[]): string | undefined => {
    const d = createStreamDecoder(tokenizer, { context: promptTokens });
    const m = new StopStringMatcher(o.stop);
    for (const id of tokens) { const s = m.push(d.push(id)); if (s.matched !== undefined) return s.matched; }
    return undefined;
  };
  const finishedFrom = (b: Beam, c: BeamCandidate, details: TokenLogprobs | undefined, rawLp: number, finish: Finished['finish']): Finished => ({
    tokens: [...b.tokens, c.token], logprob: b.logprob + rawLp, tokenLogprobs: [...b.tokenLogprobs, rawLp],
    logprobs: b.logprobs && [...b.logprobs, details!], finish,
  });

  const tDecode = performance.now();
  let decodeForwards = 0;
  let lastYield = performance.now();
  let aborted = false;
  let done = maxNew <= 0;
  for (let step = 1; !done && step <= maxNew && beams.length > 0; step++) {
    if (o.signal?.aborted) { aborted = true; break; }
    const steps: BeamStep[] = beams.map((b) => {
      const cands = b.chain.process(b.logits, b.ctx);
      return { sum: b.sum, cands, lse: logSumExp(cands.logits, cands.size) };
    });
    const ranked = topBeamCandidates(steps, 2 * numBeams);
    if (ranked.length === 0) {
      if (hyps.size === 0) throw noCandidateError();
      break;
    }
    const rawLse = new Map<number, number>();
    const tokenInfo = (c: BeamCandidate): { lp: number; details: TokenLogprobs | undefined } => {
      const b = beams[c.beam]!;
      let lse = rawLse.get(c.beam);
      if (lse === undefined) { lse = logSumExp(b.logits); rawLse.set(c.beam, lse); }
      const details = topN === undefined ? undefined
        : { raw: rawLogprobs(b.logits, c.token, topN), processed: processedLogprobs(steps[c.beam]!.cands, c.token, topN) };
      return { lp: b.logits[c.token]! - lse, details };
    };

    const next: { c: BeamCandidate; lp: number; details: TokenLogprobs | undefined }[] = [];
    for (let rank = 0; rank < ranked.length && next.length < numBeams; rank++) {
      const c = ranked[rank]!;
      const b = beams[c.beam]!;
      let finish: Finished['finish'] | null = null;
      if (o.eog.has(c.token)) finish = { reason: 'stop', detail: { kind: 'eog', token: c.token } };
      else if (o.stop.length > 0) {
        const hit = stopIn([...b.tokens, c.token]);
        if (hit !== undefined) finish = { reason: 'stop', detail: { kind: 'stop-string', text: hit } };
      }
      if (finish) {
        // As Hugging Face: an ending ranked below the numBeams best is not a hypothesis.
        if (rank >= numBeams) continue;
        const { lp, details } = tokenInfo(c);
        hyps.add(c.sum, step, finishedFrom(b, c, details, lp, finish));
      } else {
        next.push({ c, ...tokenInfo(c) });
      }
    }
    if (hyps.isDone(ranked[0]!.sum, step)) done = true;

    // New beams: each parent's first child takes over its chain and cache; further children get
    // a chain clone and a copy of the cache (into a cache no child claimed, else a new fork).
    const used = new Set(next.map((x) => x.c.beam));
    const free = beams.filter((_, i) => !used.has(i)).map((b) => b.cache);
    const taken = new Set<number>();
    const built = next.map(({ c, lp, details }): Beam => {
      const p = beams[c.beam]!;
      const first = !taken.has(c.beam);
      taken.add(c.beam);
      let cache = p.cache;
      if (!first) {
        const f = free.pop();
        if (f) f.copyFrom(p.cache); 
        cache = f ?? fork(p.cache);
      }
      return {
        chain: first ? p.chain : p.chain.clone(), cache, logits: p.logits,
        tokens: [...p.tokens, c.token], ctx: { tokens: [...p.ctx.tokens, c.token], promptLength: promptTokens.length },
        sum: c.sum, logprob: p.logprob + lp, tokenLogprobs: [...p.tokenLogprobs, lp],
        logprobs: p.logprobs && [...p.logprobs, details!],
      };
    });
    // Clones were taken above, before any parent chain sees its child's token.
    for (const b of built) b.chain.accept(b.tokens[b.tokens.length - 1]!);
    beams = built;
    if (done || step === maxNew) break;
    for (const b of beams) {
      b.logits = model.forward([b.tokens[b.tokens.length - 1]!], b.cache);
      decodeForwards++;
    }
    if (performance.now() - lastYield >= YIELD_MS) {
      await new Promise<void>((r) => setImmediate(r));
      lastYield = performance.now();
    }
  }
  if (!done) {
    // Search ended by length or abort: open beams compete with the finished ones (Hugging Face's finalize).
    const finish: Finished['finish'] = aborted ? { reason: 'abort', detail: { kind: 'abort' } } : { reason: 'length', detail: lengthDetail };
    for (const b of beams) {
      hyps.add(b.sum, b.tokens.length, { tokens: b.tokens, logprob: b.logprob, tokenLogprobs: b.tokenLogprobs, logprobs: b.logprobs, finish });
    }
  }
  if (maxNew <= 0 && hyps.size === 0) {
    hyps.add(0, 0, { tokens: [], logprob: 0, tokenLogprobs: [], logprobs: topN === undefined ? undefined : [], finish: { reason: 'length', detail: lengthDetail } });
  }
  const sequences: SequenceResult[] = hyps.sorted().slice(0, strategy.numReturnSequences).map(({ score, item }, index) => ({
    index, tokens: item.tokens, text: sequenceText(tokenizer, promptTokens, item.tokens, o.stop, o.eog),
    logprob: item.logprob, tokenLogprobs: item.tokenLogprobs, ...(item.logprobs && { logprobs: item.logprobs }),
    finishReason: item.finish.reason, stop: item.finish.detail, score,
  }));
  const best = sequences[0]!;
  return doneEvent({
    pre, chain, strategy, sequences, best, tail: '', decodeMs: performance.now() - tDecode, decodeForwards,
    cache: {
      length: promptTokens.length + Math.max(0, best.tokens.length - 1),
      bytes: [...caches].reduce((s, c) => s + c.bytes, 0),
      capacityBytes: [...caches].reduce((s, c) => s + c.capacityBytes, 0),
    },
  });
}

/** Yield to the macrotask queue at most this often (abort signals, I/O). */
const YIELD_MS = 4;
