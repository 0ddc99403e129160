/**
 * Errors as the OpenAI API reports them: an HTTP status and a body
 * `{ error: { message, type, param, code } }`. Every client-caused failure of the server is one of
 * these, so clients written for the OpenAI API read our errors the same way.
 */
import { ContextOverflowError, InvalidOptionError, UnsupportedError } from '../errors.js';
import { TemplateError } from '../tokenizer/chat-template.js';

/** The `error` object of an OpenAI-style error body. */
export interface ApiErrorBody {
  message: string;
  type: 'invalid_request_error' | 'not_found_error' | 'server_error';
  param: string | null;
  code: string | null;
}

/** A failure with its HTTP status and OpenAI-style body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type: ApiErrorBody['type'] = status >= 500 ? 'server_error' : 'invalid_request_error',
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The JSON body sent to the client. */
  body(): { error: ApiErrorBody } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** 400 for a request parameter the server does not implement (never silently ignored). */
export function unsupportedParam(param: string, why: string): ApiError {
  return new ApiError(400, `${param} is not supported: ${why}`, param, 'unsupported_parameter');
}

/** Engine option names (camelCase) → the request parameter they come from. */
const ENGINE_PARAMS: Readonly<Record<string, string>> = {
  temperature: 'temperature', topK: 'top_k', topP: 'top_p', minP: 'min_p', n: 'n', seed: 'seed',
  logitBias: 'logit_bias', presencePenalty: 'presence_penalty', frequencyPenalty: 'frequency_penalty',
  maxTokens: 'max_tokens', topLogprobs: 'logprobs', jsonSchema: 'response_format', jsonMode: 'response_format',
};

/**
 * Maps an engine error to an ApiError: option and prompt errors are the client's (400, with the
 * parameter when the message names one), anything else is a 500.
 */
export function fromEngineError(e: unknown, promptParam: string): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof ContextOverflowError) return new ApiError(400, e.message, promptParam, 'context_length_exceeded');
  if (e instanceof InvalidOptionError || e instanceof UnsupportedError || e instanceof TemplateError) {
    const first = /^(\w+)/.exec(e.message)?.[1] ?? '';
    const param = e.message.startsWith('prompt') ? promptParam
      : e.message.includes('constraint') || e.message.includes('schema') ? 'response_format'
        : ENGINE_PARAMS[first] ?? null;
    return new ApiError(400, e.message, param, 'invalid_value');
  }
  return new ApiError(500, `internal error: ${e instanceof Error ? e.message : String(e)}`, null, 'internal_error');
}
