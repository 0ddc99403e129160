/**
 * The request bodies the server accepts, as zod schemas (OpenAI wire names, snake_case), and the
 * one function that validates a body against them. Every parameter is listed: unknown keys are
 * rejected ("Unrecognized request argument"), known OpenAI parameters this engine does not
 * implement are rejected by name with the reason, and every value is range-checked — nothing is
 * silently ignored. `null` means "absent", as in the OpenAI API.
 *
 * Extensions beyond the OpenAI API: `top_k` and `min_p` (as in vLLM and llama.cpp's server).
 */
import { z } from 'zod';
import { ApiError, unsupportedParam } from './api-error.js';

/** Most stop sequences per request (OpenAI's limit). */
export const MAX_STOP = 4;
/** Most top alternatives per token (the engine's and OpenAI's limit). */
export const MAX_LOGPROBS = 20;
/** Most choices per request. */
export const MAX_N = 16;

const stop = z.union([z.string(), z.array(z.string()).max(MAX_STOP)]).nullish();

/** Parameters shared by both endpoints. */
const sampling = {
  model: z.string(),
  max_tokens: z.number().int().min(0).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  n: z.number().int().min(1).max(MAX_N).nullish(),
  stop,
  seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  logit_bias: z.record(z.string().regex(/^(0|[1-9][0-9]*)$/, 'keys must be token ids'), z.number().min(-100).max(100)).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.strictObject({ include_usage: z.boolean().nullish() }).nullish(),
  /** An end-user id: accepted for compatibility; it has no effect on generation (as in OpenAI's API). */
  user: z.string().nullish(),
};

/** POST /v1/completions. */
export const completionRequest = z.strictObject({
  ...sampling,
  prompt: z.union([
    z.string(),
    z.array(z.string()).length(1),
    z.array(z.number().int()).min(1),
    z.array(z.array(z.number().int()).min(1)).length(1),
  ], { error: 'expected a string, a non-empty array of token ids, or a one-element array of either' }),
  logprobs: z.number().int().min(0).max(MAX_LOGPROBS).nullish(),
  echo: z.boolean().nullish(),
  best_of: z.number().int().min(1).max(MAX_N).nullish(),
  suffix: z.string().nullish(),
});
export type CompletionRequest = z.infer<typeof completionRequest>;

const textPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const message = z.strictObject({
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z.union([z.string(), z.array(textPart)]),
});
export type ChatRequestMessage = z.infer<typeof message>;

const responseFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    json_schema: z.strictObject({
      name: z.string(),
      description: z.string().nullish(),
      schema: z.record(z.string(), z.unknown()).nullish(),
      /** The output always validates (constrained decoding), so strict true and false behave alike. */
      strict: z.boolean().nullish(),
    }),
  }),
]);

/** POST /v1/chat/completions. */
export const chatRequest = z.strictObject({
  ...sampling,
  messages: z.array(message).min(1),
  max_completion_tokens: z.number().int().min(0).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(MAX_LOGPROBS).nullish(),
  response_format: responseFormat.nullish(),
});
export type ChatRequest = z.infer<typeof chatRequest>;

/** POST /inspect/run (the inspector page's request). */
export const inspectRequest = z.strictObject({
  prompt: z.string(),
  max_tokens: z.number().int().min(1).max(256).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_k: z.number().int().min(0).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).nullish(),
  top: z.number().int().min(1).max(50).nullish(),
});
export type InspectRequest = z.infer<typeof inspectRequest>;

/** OpenAI parameters this server does not implement, with the reason given in the 400. */
const UNSUPPORTED_COMMON: Readonly<Record<string, string>> = {
  service_tier: 'there is one local model and no tiers',
  store: 'completions are not stored',
  metadata: 'completions are not stored',
};
const UNSUPPORTED_CHAT: Readonly<Record<string, string>> = {
  ...UNSUPPORTED_COMMON,
  tools: 'tool calling is not implemented',
  tool_choice: 'tool calling is not implemented',
  parallel_tool_calls: 'tool calling is not implemented',
  functions: 'function calling is not implemented',
  function_call: 'function calling is not implemented',
  audio: 'audio output is not implemented',
  modalities: 'only text output is implemented',
  prediction: 'predicted outputs are not implemented',
  reasoning_effort: 'the model has no reasoning-effort control',
  web_search_options: 'web search is not implemented',
  verbosity: 'the model has no verbosity control',
};

/** Checks for a known-but-unsupported parameter (non-null); throws its 400. */
function rejectUnsupported(body: Record<string, unknown>, table: Readonly<Record<string, string>>): void {
  for (const [k, why] of Object.entries(table)) {
    if (body[k] !== undefined && body[k] !== null) throw unsupportedParam(k, why);
  }
}

/** `a.b[0].c` for a zod issue path. */
function paramName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out;
}

/** Validates a body with a schema; the first problem becomes an OpenAI-style 400 naming the parameter. */
function validate<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    const param = paramName([...issue.path, key]);
    return fail(new ApiError(400, `Unrecognized request argument supplied: ${param}`, param, 'unknown_parameter'));
  }
  const param = paramName(issue.path);
  const code = issue.code === 'invalid_type' ? 'invalid_type' : 'invalid_value';
  return fail(new ApiError(400, `Invalid value for ${param || 'the request body'}: ${issue.message}`, param || null, code));
}

function fail(e: ApiError): never {
  throw e;
}

/** The body must be a JSON object. */
function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(400, 'the request body must be a JSON object', null, 'invalid_request_body');
  }
  return body as Record<string, unknown>;
}

/** Cross-parameter rules shared by both endpoints. */
function checkStreamOptions(req: { stream?: boolean | null; stream_options?: unknown }): void {
  if (req.stream_options != null && req.stream !== true) {
    throw new ApiError(400, 'stream_options is only allowed when stream is true', 'stream_options', 'invalid_value');
  }
}

/** Validates a /v1/completions body. */
export function parseCompletionRequest(body: unknown): CompletionRequest {
  const o = asObject(body);
  rejectUnsupported(o, UNSUPPORTED_COMMON);
  if (o['echo'] === true) throw unsupportedParam('echo', 'echoing the prompt is not implemented (echo must be false)');
  const prompt = o['prompt'];
  if (Array.isArray(prompt) && prompt.length > 1 && prompt.every((p) => typeof p === 'string' || Array.isArray(p))) {
    throw unsupportedParam('prompt', `a batch of ${prompt.length} prompts cannot be served in one request: send one prompt per request`);
  }
  if (typeof o['suffix'] === 'string' && o['suffix'] !== '') throw unsupportedParam('suffix', 'insertion (fill-in-the-middle) is not implemented');
  const req = validate(completionRequest, o);
  checkStreamOptions(req);
  const n = req.n ?? 1;
  if (req.best_of != null && req.best_of > n) throw unsupportedParam('best_of', `best_of > n (${req.best_of} > ${n}) would rank samples server-side, which is not implemented`);
  if (req.best_of != null && req.best_of < n) throw new ApiError(400, `best_of (${req.best_of}) must be >= n (${n})`, 'best_of', 'invalid_value');
  if (req.stream === true && req.best_of != null && req.best_of > 1) throw unsupportedParam('best_of', 'best_of > 1 cannot be streamed');
  return req;
}

/** Validates a /v1/chat/completions body. */
export function parseChatRequest(body: unknown): ChatRequest {
  const o = asObject(body);
  rejectUnsupported(o, UNSUPPORTED_CHAT);
  const messages = o['messages'];
  if (Array.isArray(messages)) {
    messages.forEach((m: unknown, i) => {
      if (typeof m !== 'object' || m === null) return; // zod reports it
      const msg = m as Record<string, unknown>;
      if (msg['role'] === 'tool' || msg['role'] === 'function') throw unsupportedParam(`messages[${i}].role`, `"${String(msg['role'])}" messages need tool calling, which is not implemented`);
      for (const k of ['tool_calls', 'function_call', 'tool_call_id', 'audio']) {
        if (msg[k] !== undefined && msg[k] !== null) throw unsupportedParam(`messages[${i}].${k}`, 'tool calling and audio are not implemented');
      }
      if (msg['name'] !== undefined && msg['name'] !== null) throw unsupportedParam(`messages[${i}].name`, 'participant names are not passed to chat templates');
      if (msg['refusal'] === null) delete msg['refusal']; // clients echo an assistant message's null refusal back
      if (Array.isArray(msg['content'])) {
        (msg['content'] as unknown[]).forEach((p, j) => {
          const type = typeof p === 'object' && p !== null ? (p as Record<string, unknown>)['type'] : undefined;
          if (typeof type === 'string' && type !== 'text') throw unsupportedParam(`messages[${i}].content[${j}].type`, `"${type}" content parts are not implemented (text only)`);
        });
      }
    });
  }
  const req = validate(chatRequest, o);
  checkStreamOptions(req);
  if (req.top_logprobs != null && req.logprobs !== true) {
    throw new ApiError(400, 'top_logprobs requires logprobs to be true', 'top_logprobs', 'invalid_value');
  }
  if (req.max_tokens != null && req.max_completion_tokens != null && req.max_tokens !== req.max_completion_tokens) {
    throw new ApiError(400, 'max_tokens and max_completion_tokens differ: give one of them', 'max_completion_tokens', 'invalid_value');
  }
  return req;
}

/** Validates a /inspect/run body. */
export function parseInspectRequest(body: unknown): InspectRequest {
  return validate(inspectRequest, asObject(body));
}
