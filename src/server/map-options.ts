/**
 * The one place a request's OpenAI parameters become generate() options. Each parameter is mapped
 * explicitly; the OpenAI defaults apply where the engine's differ (temperature 1, completions'
 * max_tokens 16).
 */
import type { GenerateOptions } from '../generate/generate.js';
import { ApiError } from './api-error.js';
import type { ChatRequest, CompletionRequest } from './openai-schema.js';

/** OpenAI's default max_tokens for /v1/completions. */
export const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;

/** A logit_bias map with ids checked against the vocabulary; −100 bans the token (−∞), as OpenAI documents. */
function logitBias(raw: Readonly<Record<string, number>>, vocab: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const [k, b] of Object.entries(raw)) {
    const id = Number(k);
    if (id >= vocab) throw new ApiError(400, `logit_bias: token id ${id} is outside the vocabulary [0, ${vocab - 1}]`, 'logit_bias', 'invalid_value');
    out.set(id, b <= -100 ? -Infinity : b);
  }
  return out;
}

/** Options shared by both endpoints (sampling, n, stop, seed, penalties, bias). */
function common(req: CompletionRequest | ChatRequest, vocab: number): GenerateOptions {
  const o: GenerateOptions = { temperature: req.temperature ?? 1 };
  if (req.top_p != null) o.topP = req.top_p;
  if (req.top_k != null) o.topK = req.top_k;
  if (req.min_p != null) o.minP = req.min_p;
  if (req.n != null) o.n = req.n;
  if (req.stop != null) o.stop = typeof req.stop === 'string' ? [req.stop] : req.stop.filter((s) => s !== '');
  if (req.seed != null) o.seed = req.seed;
  if (req.presence_penalty != null) o.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty != null) o.frequencyPenalty = req.frequency_penalty;
  if (req.logit_bias != null) o.logitBias = logitBias(req.logit_bias, vocab);
  return o;
}

/** generate() options for a completion request. */
export function completionOptions(req: CompletionRequest, vocab: number): GenerateOptions {
  const o = common(req, vocab);
  o.maxTokens = req.max_tokens ?? COMPLETIONS_DEFAULT_MAX_TOKENS;
  if (req.logprobs != null) o.topLogprobs = req.logprobs;
  return o;
}

/** generate() options for a chat request (max tokens default: until end of turn or a full context). */
export function chatOptions(req: ChatRequest, vocab: number): GenerateOptions {
  const o = common(req, vocab);
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max != null) o.maxTokens = max;
  if (req.logprobs === true) o.topLogprobs = req.top_logprobs ?? 0;
  const rf = req.response_format;
  if (rf?.type === 'json_object') o.jsonMode = true;
  else if (rf?.type === 'json_schema') o.jsonSchema = rf.json_schema.schema ?? {};
  return o;
}

/** The prompt of a completion request: text, or token ids used as given. */
export function completionPrompt(req: CompletionRequest): string | number[] {
  const p = req.prompt;
  if (typeof p === 'string') return p;
  const first = p[0];
  if (typeof first === 'string') return first;
  if (Array.isArray(first)) return first;
  return p as number[];
}
