/**
 * From generate()'s results to OpenAI choices: the per-choice view of a done event, and token
 * log-probabilities in the two wire formats (legacy completions, chat). Log-probabilities are the
 * model's raw distribution (softmax of its logits), as the OpenAI API reports them. An
 * end-of-generation token that ended a choice is not part of its text and is left out of its logprobs.
 */
import type { DoneEvent, FinishReason, StopDetail, TokenLogprobs } from '../generate/events.js';
import { pieceOf } from '../inspect/trace.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';

/** One returned sequence, whichever strategy produced it. */
export interface ChoiceResult {
  index: number;
  text: string;
  /** Generated ids without an end-of-generation id that stopped the choice. */
  tokens: number[];
  tokenLogprobs: number[];
  logprobs: TokenLogprobs[] | undefined;
  finishReason: FinishReason;
}

/** The choices of a finished request, in index order. */
export function choicesOf(done: DoneEvent): ChoiceResult[] {
  const seqs = done.sequences && done.sequences.length > 0 ? done.sequences
    : [{ index: 0, text: done.text, tokens: done.tokens, tokenLogprobs: done.tokenLogprobs, logprobs: done.logprobs, finishReason: done.finishReason, stop: done.stop }];
  return [...seqs].sort((a, b) => a.index - b.index).map((s) => {
    const keep = visibleTokens(s.tokens.length, s.stop);
    return {
      index: s.index, text: s.text, tokens: s.tokens.slice(0, keep), tokenLogprobs: s.tokenLogprobs.slice(0, keep),
      logprobs: s.logprobs?.slice(0, keep), finishReason: s.finishReason,
    };
  });
}

/** How many of a sequence's tokens are content (all but an end-of-generation id that stopped it). */
export function visibleTokens(count: number, stop: StopDetail): number {
  return stop.kind === 'eog' ? Math.max(0, count - 1) : count;
}

/** OpenAI finish reasons: ours are 'stop' | 'length' ('abort' only happens when no client is left to tell). */
export function finishReason(r: FinishReason): 'stop' | 'length' {
  return r === 'length' ? 'length' : 'stop';
}

/** `logprobs` of a legacy completion choice: tokens, their logprobs, top alternatives, text offsets. */
export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Array<Record<string, number>>;
  text_offset: number[];
}

/** Legacy-completions logprobs for `ids` (text offsets count from the start of the completion, by token piece). */
export function completionLogprobs(tok: Tokenizer, ids: readonly number[], lps: readonly number[], details: readonly TokenLogprobs[] | undefined, startOffset = 0): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let offset = startOffset;
  ids.forEach((id, i) => {
    const piece = pieceOf(tok, id);
    out.tokens.push(piece);
    out.token_logprobs.push(lps[i]!);
    const top: Record<string, number> = {};
    for (const t of details?.[i]?.raw.top ?? []) {
      const p = pieceOf(tok, t.id);
      if (!(p in top)) top[p] = t.logprob; // two ids with one text: the likelier one is listed
    }
    out.top_logprobs.push(top);
    out.text_offset.push(offset);
    offset += piece.length;
  });
  return out;
}

/** One entry of a chat choice's `logprobs.content`. */
export interface ChatTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

/** Chat logprobs content for `ids`. */
export function chatLogprobs(tok: Tokenizer, ids: readonly number[], lps: readonly number[], details: readonly TokenLogprobs[] | undefined): ChatTokenLogprob[] {
  return ids.map((id, i) => ({
    token: pieceOf(tok, id),
    logprob: lps[i]!,
    bytes: [...tok.tokenBytes(id)],
    top_logprobs: (details?.[i]?.raw.top ?? []).map((t) => ({ token: pieceOf(tok, t.id), logprob: t.logprob, bytes: [...tok.tokenBytes(t.id)] })),
  }));
}
