/**
 * The OpenAI-compatible HTTP server (fastify). One model, requests served one at a time:
 *   GET  /health                 → { status, model, queue }
 *   GET  /v1/models[/:id]        → the served model
 *   POST /v1/completions         → text completions (completions.ts)
 *   POST /v1/chat/completions    → chat completions (chat-completions.ts)
 *   GET  /inspect, POST /inspect/run → the generation-loop inspector (inspect-routes.ts)
 * Every error — malformed JSON, a bad or unsupported parameter, an unknown model or route — is
 * answered with an OpenAI-style body `{ error: { message, type, param, code } }`.
 */
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { LanguageModel } from '../generate/language-model.js';
import { chatTemplateFromMetadata } from '../tokenizer/chat-template.js';
import { ApiError } from './api-error.js';
import { createChatSetup, registerChatCompletions, type ChatSetup } from './chat-completions.js';
import { registerCompletions } from './completions.js';
import type { RequestRecord } from './generation-route.js';
import { registerInspect } from './inspect-routes.js';
import { SerialQueue } from './queue.js';

export interface ServerOptions {
  lm: LanguageModel;
  /** The id clients use in `model` (default: the model file's basename). */
  modelName?: string;
  /** Chat template source (default: the GGUF's `tokenizer.chat_template`; none → chat requests get a 400). */
  chatTemplate?: string;
  /** Context positions one request may use (default: the model's context length). */
  contextLength?: number;
  /** Called when a generation request ends (logging, tests). */
  onRequestEnd?: (r: RequestRecord) => void;
  /** Directory of the inspector page (default: web/ in the package). */
  webDir?: string;
  /** Largest request body in bytes (default 8 MiB). */
  bodyLimit?: number;
}

/** The served model's id: the file name without directories. */
export function defaultModelName(lm: LanguageModel): string {
  return lm.file.path.split(/[\\/]/).pop() ?? lm.file.path;
}

/** The chat setup for the options, or the reason chat is unavailable. */
function chatFor(o: ServerOptions): { chat: ChatSetup | null; noChatReason: string } {
  let source = o.chatTemplate;
  let reason = '';
  if (source === undefined) {
    if (o.lm.file.kind !== 'gguf') reason = `the model ${defaultModelName(o.lm)} has no chat template (a llama2.c checkpoint): start the server with --template FILE`;
    else {
      try { source = chatTemplateFromMetadata(o.lm.file.meta); } catch (e) {
        reason = `the model has no usable chat template (${e instanceof Error ? e.message : String(e)}): start the server with --template FILE`;
      }
    }
  }
  return source === undefined ? { chat: null, noChatReason: reason } : { chat: createChatSetup(o.lm, source), noChatReason: '' };
}

/** Builds the fastify app (not listening yet). */
export function createApp(o: ServerOptions): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: o.bodyLimit ?? 8 * 1024 * 1024 });
  const modelName = o.modelName ?? defaultModelName(o.lm);
  const queue = new SerialQueue();
  const created = Math.floor(Date.now() / 1000);
  const ctx = { queue, lm: o.lm, modelName, ...(o.contextLength !== undefined && { contextLength: o.contextLength }), ...(o.onRequestEnd && { onRequestEnd: o.onRequestEnd }), ...(o.webDir !== undefined && { webDir: o.webDir }) };
  const chat = chatFor(o);

  app.setErrorHandler((err: FastifyError | ApiError, _req, reply) => {
    const e = toApiError(err);
    void reply.code(e.status).send(e.body());
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new ApiError(404, `no route for ${req.method} ${req.url}`, null, 'not_found', 'not_found_error');
    void reply.code(404).send(e.body());
  });

  const model = { id: modelName, object: 'model', created, owned_by: 'tokenloop' };
  app.get('/health', async () => ({ status: 'ok', model: modelName, queue: queue.stats }));
  app.get('/v1/models', async () => ({ object: 'list', data: [model] }));
  app.get<{ Params: { id: string } }>('/v1/models/:id', async (req) => {
    if (req.params.id !== modelName) throw new ApiError(404, `The model '${req.params.id}' does not exist (this server serves '${modelName}')`, 'model', 'model_not_found');
    return model;
  });
  registerCompletions(app, ctx);
  registerChatCompletions(app, { ...ctx, ...chat });
  registerInspect(app, ctx);
  return app;
}

/** Fastify's own errors (body parsing, content type, size) as OpenAI-style errors. */
function toApiError(err: FastifyError | ApiError): ApiError {
  if (err instanceof ApiError) return err;
  const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
  if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err instanceof SyntaxError) {
    return new ApiError(400, `the request body is not valid JSON: ${err.message}`, null, 'invalid_json');
  }
  if (status < 500) return new ApiError(status, err.message, null, err.code ?? null);
  return new ApiError(500, `internal error: ${err.message}`, null, 'internal_error');
}

/** Starts listening; returns the app and its base URL (port 0 picks a free port). */
export async function startServer(o: ServerOptions & { host?: string; port?: number }): Promise<{ app: FastifyInstance; url: string }> {
  const { host = '127.0.0.1', port = 8080, ...rest } = o;
  const app = createApp(rest);
  await app.listen({ host, port });
  const addr = app.server.address();
  const actualPort = typeof addr === 'object' && addr !== null ? addr.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { app, url: `http://${shownHost}:${actualPort}` };
}
