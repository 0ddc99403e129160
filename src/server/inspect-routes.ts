/**
 * The inspector in the browser: GET /inspect serves web/inspector.html (plus its script and style,
 * no build step), POST /inspect/run runs one traced generation (src/inspect/trace.ts) and returns
 * the trace as JSON. Runs share the generation queue with the OpenAI endpoints.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { LanguageModel } from '../generate/language-model.js';
import { traceGeneration, type TraceOptions } from '../inspect/trace.js';
import { ApiError, fromEngineError } from './api-error.js';
import { parseInspectRequest } from './openai-schema.js';
import { QueueAbortError } from './queue.js';
import type { RouteContext } from './generation-route.js';

/** web/ beside src/ (and beside dist/ in a build): both are two levels below the package root. */
export const WEB_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');

/** The page's files and their content types; nothing else under web/ is served. */
const FILES: Readonly<Record<string, string>> = {
  'inspector.html': 'text/html; charset=utf-8',
  'inspector.js': 'text/javascript; charset=utf-8',
  'inspector.css': 'text/css; charset=utf-8',
};

/** Registers GET /inspect, GET /inspect/<file> and POST /inspect/run. */
export function registerInspect(app: FastifyInstance, ctx: RouteContext & { lm: LanguageModel; modelName: string; webDir?: string }): void {
  const dir = ctx.webDir ?? WEB_DIR;
  const file = (name: string): string => {
    try { return readFileSync(join(dir, name), 'utf8'); } catch {
      throw new ApiError(500, `the inspector page is missing: ${join(dir, name)} cannot be read`, null, 'internal_error');
    }
  };
  app.get('/inspect', async (_req, reply) => reply.type(FILES['inspector.html']!).send(file('inspector.html')));
  app.get<{ Params: { name: string } }>('/inspect/:name', async (req, reply) => {
    const type = FILES[req.params.name];
    if (type === undefined) throw new ApiError(404, `no such file: /inspect/${req.params.name}`, null, 'not_found', 'not_found_error');
    return reply.type(type).send(file(req.params.name));
  });
  app.post('/inspect/run', async (request, reply) => {
    const req = parseInspectRequest(request.body);
    const ac = new AbortController();
    const onClose = () => { if (!reply.raw.writableFinished) ac.abort(); };
    reply.raw.on('close', onClose);
    const options: TraceOptions = {
      signal: ac.signal, maxTokens: req.max_tokens ?? 16, temperature: req.temperature ?? 0.8,
      top: req.top ?? 10,
      ...(ctx.contextLength !== undefined && { contextLength: ctx.contextLength }),
      ...(req.top_k != null && { topK: req.top_k }),
      ...(req.top_p != null && { topP: req.top_p }),
      ...(req.min_p != null && { minP: req.min_p }),
      ...(req.seed != null && { seed: req.seed }),
    };
    try {
      const trace = await ctx.queue.run(ac.signal, () => traceGeneration(ctx.lm, req.prompt, options));
      return await reply.send({ model: ctx.modelName, ...trace });
    } catch (e) {
      if (e instanceof QueueAbortError) { reply.hijack(); reply.raw.destroy(); return reply; }
      throw fromEngineError(e, 'prompt');
    } finally {
      reply.raw.off('close', onClose);
    }
  });
}
