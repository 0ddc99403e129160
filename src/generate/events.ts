import type { ChainDescription } from '../decode/chain.js';
import type { LogprobResult } from '../decode/logprobs.js';

/**
 * What generate() streams: one event per generated token, then one final event.
 */
export type FinishReason = 'stop' | 'length' | 'abort';

/** Why generation stopped, in detail. */
export type StopDetail =
  | { kind: 'eog'; token: number }
  | { kind: 'stop-string'; text: string }
  | { kind: 'max-tokens'; limit: number }
  | { kind: 'context'; limit: number }
  | { kind: 'abort' };

/**
 * Per-token log-probabilities when `topLogprobs` is asked for, from two clearly labelled sources:
 * `raw` — the model's own distribution (softmax of the logits over the whole vocabulary);
 * `processed` — the final distribution the token was chosen from, after every processor
 * (penalties, bias, constraints, truncation, temperature); tokens removed there have −∞.
 * With greedy decoding (temperature 0) `processed` is the distribution after the processors that
 * ran; the greedy pick itself is its argmax.
 */
export interface TokenLogprobs {
  raw: LogprobResult;
  processed: LogprobResult;
}

export interface TokenEvent {
  type: 'token';
  /** Which sequence the token belongs to (0 unless `n` > 1 samples are drawn). */
  sequence: number;
  /** 0-based index of the generated token within its sequence. */
  index: number;
  id: number;
  /** Text released by this token (may be empty while a UTF-8 character or a possible stop string is held back). */
  text: string;
  /** Natural log-probability of the token under the model's raw distribution. */
  logprob: number;
  /** Chosen token and top alternatives, raw and processed; only when `topLogprobs` is set. */
  logprobs?: TokenLogprobs;
  /** KV-cache positions and bytes after this step. */
  cacheLength: number;
  cacheBytes: number;
}

export interface Timings {
  /** Prompt processing (one forward call over the whole prompt). */
  prefillMs: number;
  /** All decode steps after prefill (forward + selection + streaming). */
  decodeMs: number;
  /** Tokens run through the model in prefill (the prompt minus any reused session prefix). */
  prefillTokens: number;
  /** Single-token forward calls after prefill (all sequences together). */
  decodeTokens: number;
  prefillTokensPerS: number;
  decodeTokensPerS: number;
  msPerToken: number;
}

/** One finished sequence of a multi-sequence request (`n` samples or beam search). */
export interface SequenceResult {
  /** Sample number (for `n` samples), or rank by beam score (beam search, best first). */
  index: number;
  tokens: number[];
  text: string;
  /** Sum of the raw log-probabilities of `tokens`. */
  logprob: number;
  /** Raw log-probability of each token. */
  tokenLogprobs: number[];
  /** Per-token details, only when `topLogprobs` is set. */
  logprobs?: TokenLogprobs[];
  finishReason: FinishReason;
  stop: StopDetail;
  /**
   * Beam search only: the beam score the sequence was ranked by, Σ processed log-probs /
   * length^lengthPenalty (Hugging Face's BeamHypotheses score).
   */
  score?: number;
}

/** The decoding strategy that ran (reported with each result, next to the chain). */
export type StrategyDescription =
  | { kind: 'sample'; n: number }
  | { kind: 'beam'; numBeams: number; lengthPenalty: number; earlyStopping: boolean | 'never'; numReturnSequences: number };

export interface DoneEvent {
  type: 'done';
  finishReason: FinishReason;
  stop: StopDetail;
  /** Prompt ids as fed to the model (BOS included when added). */
  promptTokens: number[];
  /** Generated ids (an end-of-generation token that stopped the loop is included). */
  tokens: number[];
  /** The full emitted text (stop string and what follows excluded). */
  text: string;
  /**
   * Text released only at the end that no token event carried (held back for UTF-8 or a partial
   * stop string when generation was aborted). Empty otherwise.
   */
  tail: string;
  /** Sum of the raw log-probabilities of the generated tokens. */
  logprob: number;
  /** Raw log-probability of each generated token. */
  tokenLogprobs: number[];
  /** Per-token raw and processed details, only when `topLogprobs` is set. */
  logprobs?: TokenLogprobs[];
  /**
   * Every returned sequence, for `n` > 1 or beam search (the top-level fields then describe the
   * best one: highest raw log-probability among samples, best beam score in beam search).
   */
  sequences?: SequenceResult[];
  /** The strategy that ran: sampling (greedy when the chain's sampler is greedy) or beam search. */
  strategy: StrategyDescription;
  /** Prompt tokens plus completion tokens of every returned sequence. */
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  timings: Timings;
  /** The decoding chain that was applied, in order, with its seed. */
  chain: ChainDescription;
  /** KV cache of the best sequence (length); bytes summed over every cache the request held. */
  cache: { length: number; bytes: number; capacityBytes: number };
}

export type GenerationEvent = TokenEvent | DoneEvent;
