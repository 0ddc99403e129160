/**
 * Scoring a given text: teacher-forced per-token log-probabilities and perplexity.
 * The tokens are run through the model in a few batched forward calls (all positions' logits);
 * token t_i (i ≥ 1) gets log p(t_i | t_<i) = l_{i-1}[t_i] − logsumexp(l_{i-1}) under the model's
 * raw distribution. Perplexity = exp(−mean log-prob over the scored tokens).
 * With a `context`, only the tokens after it are scored (the context still conditions them).
 */
import { ContextOverflowError, InvalidOptionError } from '../errors.js';
import { rawLogprobs, validateTopLogprobs, type TokenLogprob } from '../decode/logprobs.js';
import { createStreamDecoder } from '../tokenizer/stream-decoder.js';
import type { LanguageModel } from './language-model.js';

export interface ScoreOptions {
  /**
   * Text or ids that come before the scored part and are not scored themselves. Text is encoded
   * together with the scored text (so tokens can merge across the seam) and the tokens of the
   * context alone, as far as the joint encoding starts with them, are left unscored.
   */
  context?: string | readonly number[];
  /** For text: add BOS (default: the tokenizer's setting). */
  addBos?: boolean;
  /** For text: parse special-token text (default false). */
  parseSpecial?: boolean;
  /** Also return this many top alternatives per scored token (0–20). */
  topLogprobs?: number;
  /** Positions per forward call (default 128): bounds the logits buffer to chunk × vocabulary. */
  chunkSize?: number;
}

/** One scored token. */
export interface ScoredToken {
  id: number;
  /** The text this token adds after the ones before it ('' while a UTF-8 character is incomplete). */
  text: string;
  /** Raw log-probability given every token before it. */
  logprob: number;
  /** Top alternatives at this position, best first (only with `topLogprobs`). */
  top?: TokenLogprob[];
}

export interface ScoreResult {
  /** Every token fed to the model (context included). */
  tokens: number[];
  /** How many leading tokens were context (not scored; at least 1: the first token has no prediction). */
  contextLength: number;
  /** The scored tokens, in order. */
  scored: ScoredToken[];
  /** Σ log-probs of the scored tokens. */
  logprob: number;
  /** Mean log-prob per scored token (NaN when none). */
  meanLogprob: number;
  /** exp(−meanLogprob). */
  perplexity: number;
}

/** Teacher-forced log-probabilities of `input` (text, or ids used as given). */
export function scoreText(lm: LanguageModel, input: string | readonly number[], options: ScoreOptions = {}): ScoreResult {
  const { model, tokenizer } = lm;
  const nVocab = model.config.nVocab;
  const topN = options.topLogprobs === undefined ? undefined : validateTopLogprobs(options.topLogprobs);
  const chunk = options.chunkSize ?? 128;
  if (!Number.isSafeInteger(chunk) || chunk < 1) throw new InvalidOptionError(`chunkSize must be an integer >= 1, got ${String(chunk)}`);
  const enc = (text: string) => tokenizer.encode(text, { ...(options.addBos !== undefined && { addBos: options.addBos }), parseSpecial: options.parseSpecial ?? false });
  const ctx = options.context;
  let tokens: number[];
  let contextLength: number;
  if (typeof input === 'string') {
    if (ctx !== undefined && typeof ctx !== 'string') throw new InvalidOptionError('score: give context as text when the input is text');
    tokens = enc((ctx ?? '') + input);
    if (ctx === undefined) contextLength = 0;
    else {
      const c = enc(ctx);
      contextLength = 0;
      while (contextLength < c.length && contextLength < tokens.length && c[contextLength] === tokens[contextLength]) contextLength++;
    }
  } else {
    if (ctx !== undefined && typeof ctx === 'string') throw new InvalidOptionError('score: give context as ids when the input is ids');
    tokens = [...(ctx as readonly number[] | undefined ?? []), ...input];
    contextLength = ctx === undefined ? 0 : ctx.length;
  }
  for (const id of tokens) {
    if (!Number.isSafeInteger(id) || id < 0 || id >= nVocab) throw new InvalidOptionError(`token id ${id} is outside the vocabulary [0, ${nVocab - 1}]`);
  }
  contextLength = Math.max(1, contextLength);
  if (tokens.length < 2 || contextLength >= tokens.length) {
    throw new InvalidOptionError('nothing to score: the text needs at least one token after the context (or after BOS)');
  }
  if (tokens.length > model.config.nCtx) {
    throw new ContextOverflowError(`the text has ${tokens.length} tokens but the context holds ${model.config.nCtx}`);
  }

  const cache = model.createCache(tokens.length);
  const scored: ScoredToken[] = [];
  const decoder = createStreamDecoder(tokenizer, { context: tokens.slice(0, contextLength) });
  let sum = 0;
  // Positions whose logits are needed: contextLength-1 .. length-2 (each predicts the next token).
  for (let start = 0; start < tokens.length - 1; start += chunk) {
    const end = Math.min(tokens.length - 1, start + chunk);
    const wantAny = end > contextLength - 1;
    if (!wantAny) { model.forward(tokens.slice(start, end), cache); continue; }
    const all = model.forward(tokens.slice(start, end), cache, { allLogits: true });
    for (let p = Math.max(start, contextLength - 1); p < end; p++) {
      const row = all.subarray((p - start) * nVocab, (p - start + 1) * nVocab);
      const next = tokens[p + 1]!;
      const r = rawLogprobs(row, next, topN ?? 0);
      sum += r.logprob;
      scored.push({ id: next, text: decoder.push(next), logprob: r.logprob, ...(topN !== undefined && { top: [...r.top] }) });
    }
  }
  const mean = sum / scored.length;
  return { tokens, contextLength, scored, logprob: sum, meanLogprob: mean, perplexity: Math.exp(-mean) };
}
