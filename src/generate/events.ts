import type { ChainDescription } from '../decode/chain.js';

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

export interface TokenEvent {
  type: 'token';
  /** 0-based index of the generated token. */
  index: number;
  id: number;
  /** Text released by this token (may be empty while a UTF-8 character or a possible stop string is held back). */
  text: string;
  /** Natural log-probability of the token under the model's raw distribution. */
  logprob: number;
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
  /** Single-token forward calls after prefill. */
  decodeTokens: number;
  prefillTokensPerS: number;
  decodeTokensPerS: number;
  msPerToken: number;
}

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
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  timings: Timings;
  /** The decoding chain that was applied, in order, with its seed. */
  chain: ChainDescription;
  cache: { length: number; bytes: number; capacityBytes: number };
}

export type GenerationEvent = TokenEvent | DoneEvent;
