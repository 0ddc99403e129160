/** The final event of a generation, shared by sampling and beam search. */
import type { SamplingChain } from '../decode/chain.js';
import type { DoneEvent, SequenceResult } from './events.js';
import type { Prefilled } from './prepare.js';
import type { Strategy } from './strategy.js';

/** Builds the final event; shared by sampling and beam search. */
export function doneEvent(a: {
  pre: Prefilled; chain: SamplingChain; strategy: Strategy; sequences: SequenceResult[]; best: SequenceResult; tail: string;
  decodeMs: number; decodeForwards: number; cache: DoneEvent['cache'];
}): DoneEvent {
  const { pre, best, decodeMs, decodeForwards } = a;
  const prefillCount = pre.promptTokens.length - pre.reuse;
  const completion = a.sequences.reduce((s, q) => s + q.tokens.length, 0);
  const multi = a.strategy.kind === 'beam' || a.strategy.n > 1;
  return {
    type: 'done',
    finishReason: best.finishReason,
    stop: best.stop,
    promptTokens: pre.promptTokens,
    tokens: best.tokens,
    text: best.text,
    tail: a.tail,
    logprob: best.logprob,
    tokenLogprobs: best.tokenLogprobs,
    ...(best.logprobs && { logprobs: best.logprobs }),
    ...(multi && { sequences: a.sequences }),
    strategy: a.strategy,
    usage: { promptTokens: pre.promptTokens.length, completionTokens: completion, totalTokens: pre.promptTokens.length + completion },
    timings: {
      prefillMs: pre.prefillMs,
      decodeMs,
      prefillTokens: prefillCount,
      decodeTokens: decodeForwards,
      prefillTokensPerS: pre.prefillMs > 0 ? (prefillCount * 1000) / pre.prefillMs : 0,
      decodeTokensPerS: decodeMs > 0 ? (decodeForwards * 1000) / decodeMs : 0,
      msPerToken: decodeForwards > 0 ? decodeMs / decodeForwards : 0,
    },
    chain: a.chain.describe(),
    cache: a.cache,
  };
}

