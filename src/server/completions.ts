/**
 * POST /v1/completions — OpenAI's legacy text completions: one prompt (text or token ids), `n`
 * choices, optional per-token logprobs, streamed as `text_completion` chunks when `stream` is set.
 */
import type { FastifyInstance } from 'fastify';
import type { LanguageModel } from '../generate/language-model.js';
import { ApiError } from './api-error.js';
import { completionLogprobs, finishReason } from './choices.js';
import { serveGeneration, nowSeconds, responseId, type OutputFormat, type RouteContext } from './generation-route.js';
import { completionOptions, completionPrompt } from './map-options.js';
import { parseCompletionRequest } from './openai-schema.js';

/** Registers the completions route. */
export function registerCompletions(app: FastifyInstance, ctx: RouteContext & { lm: LanguageModel; modelName: string }): void {
  app.post('/v1/completions', async (request, reply) => {
    const body = request.body as Record<string, unknown> | null;
    checkModel(body, ctx.modelName);
    const req = parseCompletionRequest(body);
    const { lm } = ctx;
    const tok = lm.tokenizer;
    const id = responseId('cmpl');
    const created = nowSeconds();
    const base = { id, object: 'text_completion', created, model: ctx.modelName };
    const wantLogprobs = req.logprobs != null;
    const offsets = new Map<number, number>();
    const format: OutputFormat = {
      start: () => null,
      token(ev, content) {
        if (!content || (ev.text === '' && !wantLogprobs)) return null;
        let logprobs = null;
        if (wantLogprobs) {
          const off = offsets.get(ev.sequence) ?? 0;
          logprobs = completionLogprobs(tok, [ev.id], [ev.logprob], ev.logprobs ? [ev.logprobs] : undefined, off);
          offsets.set(ev.sequence, off + logprobs.tokens[0]!.length);
        }
        return { ...base, choices: [{ index: ev.sequence, text: ev.text, logprobs, finish_reason: null }] };
      },
      finish: (c) => ({ ...base, choices: [{ index: c.index, text: '', logprobs: null, finish_reason: finishReason(c.finishReason) }] }),
      usage: (done) => ({ ...base, choices: [], usage: usage(done.usage) }),
      response: (done, choices) => ({
        ...base,
        choices: choices.map((c) => ({
          index: c.index,
          text: c.text,
          logprobs: wantLogprobs ? completionLogprobs(tok, c.tokens, c.tokenLogprobs, c.logprobs) : null,
          finish_reason: finishReason(c.finishReason),
        })),
        usage: usage(done.usage),
      }),
    };
    await serveGeneration(ctx, request, reply, {
      endpoint: '/v1/completions', lm, prompt: completionPrompt(req), options: completionOptions(req, lm.model.config.nVocab),
      promptParam: 'prompt', stream: req.stream === true, includeUsage: req.stream_options?.include_usage === true, format,
    });
  });
}

/** OpenAI's usage object. */
export function usage(u: { promptTokens: number; completionTokens: number; totalTokens: number }): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  return { prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.totalTokens };
}

/** 404 when the request names a model this server does not serve (checked before anything else). */
export function checkModel(body: Record<string, unknown> | null, modelName: string): void {
  const m = body !== null && typeof body === 'object' ? body['model'] : undefined;
  if (typeof m === 'string' && m !== modelName) {
    throw new ApiError(404, `The model '${m}' does not exist (this server serves '${modelName}')`, 'model', 'model_not_found', 'invalid_request_error');
  }
}
