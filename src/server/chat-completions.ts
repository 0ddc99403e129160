/**
 * POST /v1/chat/completions — messages rendered with the model's chat template (message text is
 * never parsed as control tokens: chatPromptTokens), generation stopping at the end-of-turn token,
 * JSON output via response_format, logprobs, and `chat.completion.chunk` streaming (a first chunk
 * with the role, content deltas, a last chunk with the finish reason).
 */
import type { FastifyInstance } from 'fastify';
import { endOfTurnIds } from '../chat/end-of-turn.js';
import type { LanguageModel } from '../generate/language-model.js';
import { chatPromptTokens, ChatTemplate, type ChatMessage, type ChatTemplateVariables } from '../tokenizer/chat-template.js';
import { ApiError } from './api-error.js';
import { chatLogprobs, finishReason } from './choices.js';
import { checkModel, usage } from './completions.js';
import { serveGeneration, nowSeconds, responseId, type OutputFormat, type RouteContext } from './generation-route.js';
import { chatOptions } from './map-options.js';
import { parseChatRequest, type ChatRequestMessage } from './openai-schema.js';

/** A model ready for chat: its template, the template variables and the ids that end a turn. */
export interface ChatSetup {
  template: ChatTemplate;
  vars: Omit<ChatTemplateVariables, 'messages'>;
  /** The model with end-of-generation = its ids plus the template's end-of-turn token. */
  lm: LanguageModel;
}

/** Prepares chat for `lm` with a template source; bos_token/eos_token are the vocabulary's texts. */
export function createChatSetup(lm: LanguageModel, source: string): ChatSetup {
  const template = new ChatTemplate(source);
  const t = lm.tokenizer;
  const vars = {
    ...(t.bos !== null && { bos_token: t.piece(t.bos) }),
    ...(t.eos !== null && { eos_token: t.piece(t.eos) }),
  };
  return { template, vars, lm: { ...lm, endOfGeneration: endOfTurnIds(lm, template, vars) } };
}

/** OpenAI messages → template messages ('developer' is the newer name of 'system'; text parts are joined). */
function templateMessages(messages: readonly ChatRequestMessage[]): ChatMessage[] {
  return messages.map((m) => ({
    role: m.role === 'developer' ? 'system' : m.role,
    content: typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join(''),
  }));
}

/** Registers the chat route; `chat` is null when the model has no template (requests then get a 400). */
export function registerChatCompletions(app: FastifyInstance, ctx: RouteContext & { chat: ChatSetup | null; noChatReason: string; modelName: string }): void {
  app.post('/v1/chat/completions', async (request, reply) => {
    const body = request.body as Record<string, unknown> | null;
    checkModel(body, ctx.modelName);
    const req = parseChatRequest(body);
    const chat = ctx.chat;
    if (chat === null) throw new ApiError(400, ctx.noChatReason, 'messages', 'no_chat_template');
    const { lm } = chat;
    const tok = lm.tokenizer;
    let prompt: number[];
    try {
      prompt = chatPromptTokens(tok, chat.template, { ...chat.vars, messages: templateMessages(req.messages), add_generation_prompt: true });
    } catch (e) {
      throw new ApiError(400, `the chat template failed on these messages: ${e instanceof Error ? e.message : String(e)}`, 'messages', 'invalid_value');
    }
    const id = responseId('chatcmpl');
    const created = nowSeconds();
    const base = { id, object: 'chat.completion.chunk', created, model: ctx.modelName, system_fingerprint: null };
    const wantLogprobs = req.logprobs === true;
    const format: OutputFormat = {
      start: (index) => ({ ...base, choices: [{ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] }),
      token(ev, content) {
        if (!content || (ev.text === '' && !wantLogprobs)) return null;
        const logprobs = wantLogprobs ? { content: chatLogprobs(tok, [ev.id], [ev.logprob], ev.logprobs ? [ev.logprobs] : undefined), refusal: null } : null;
        return { ...base, choices: [{ index: ev.sequence, delta: { content: ev.text }, logprobs, finish_reason: null }] };
      },
      finish: (c) => ({ ...base, choices: [{ index: c.index, delta: {}, logprobs: null, finish_reason: finishReason(c.finishReason) }] }),
      usage: (done) => ({ ...base, choices: [], usage: usage(done.usage) }),
      response: (done, choices) => ({
        id, object: 'chat.completion', created, model: ctx.modelName, system_fingerprint: null,
        choices: choices.map((c) => ({
          index: c.index,
          message: { role: 'assistant', content: c.text, refusal: null },
          logprobs: wantLogprobs ? { content: chatLogprobs(tok, c.tokens, c.tokenLogprobs, c.logprobs), refusal: null } : null,
          finish_reason: finishReason(c.finishReason),
        })),
        usage: usage(done.usage),
      }),
    };
    await serveGeneration(ctx, request, reply, {
      endpoint: '/v1/chat/completions', lm, prompt, options: chatOptions(req, lm.model.config.nVocab),
      promptParam: 'messages', stream: req.stream === true, includeUsage: req.stream_options?.include_usage === true, format,
    });
  });
}
