/**
 * The part every generating endpoint shares: wait for the queue, run generate(), and answer either
 * with one JSON response or as a server-sent event stream. A client that disconnects aborts its
 * generation (AbortSignal), which frees the queue for the next request; a request still waiting
 * when its client leaves never runs. Engine errors that happen before anything was streamed are
 * answered as OpenAI-style JSON errors; later ones as a final `error` event.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DoneEvent, TokenEvent } from '../generate/events.js';
import { generate, type GenerateOptions } from '../generate/generate.js';
import type { LanguageModel } from '../generate/language-model.js';
import { fromEngineError } from './api-error.js';
import { choicesOf, type ChoiceResult } from './choices.js';
import { QueueAbortError, type SerialQueue } from './queue.js';
import { SseWriter } from './sse.js';

/** What the server logs (or a test observes) when a request ends. */
export interface RequestRecord {
  endpoint: string;
  stream: boolean;
  /** 'abort' when the client went away; null when the request failed or never ran. */
  finishReason: DoneEvent['finishReason'] | null;
  status: number;
  promptTokens: number;
  completionTokens: number;
  ms: number;
}

/** Server-wide state a route needs. */
export interface RouteContext {
  queue: SerialQueue;
  /** Context positions a request may use (caps the KV cache a request allocates). */
  contextLength?: number;
  onRequestEnd?: (r: RequestRecord) => void;
}

/** How one endpoint shapes its output (OpenAI's completions and chat formats differ). */
export interface OutputFormat {
  /** Stream chunks sent for each choice before its first token (chat: the role), or null. */
  start(index: number): unknown;
  /** The chunk for one token event, or null to send nothing. `content` says whether the token is part of the text (not an end-of-generation id). */
  token(ev: TokenEvent, content: boolean): unknown;
  /** The last chunk of one choice. */
  finish(choice: ChoiceResult): unknown;
  /** The usage chunk (stream_options.include_usage). */
  usage(done: DoneEvent): unknown;
  /** The whole non-streamed response. */
  response(done: DoneEvent, choices: ChoiceResult[]): unknown;
}

/** One generation request, ready to run. */
export interface GenerationJob {
  endpoint: string;
  lm: LanguageModel;
  prompt: string | readonly number[];
  options: Omit<GenerateOptions, 'signal'>;
  /** The parameter a prompt error is reported against ('prompt' or 'messages'). */
  promptParam: string;
  stream: boolean;
  includeUsage: boolean;
  format: OutputFormat;
}

/** Runs `job` for one HTTP request and answers it. */
export async function serveGeneration(ctx: RouteContext, request: FastifyRequest, reply: FastifyReply, job: GenerationJob): Promise<void> {
  const t0 = performance.now();
  const ac = new AbortController();
  const res = reply.raw;
  const onClose = () => { if (!res.writableFinished) ac.abort(); };
  res.on('close', onClose);
  request.raw.on('aborted', onClose);
  const record: RequestRecord = { endpoint: job.endpoint, stream: job.stream, finishReason: null, status: 200, promptTokens: 0, completionTokens: 0, ms: 0 };
  try {
    await ctx.queue.run(ac.signal, () => run(job, ac.signal, reply, record, ctx.contextLength));
  } catch (e) {
    if (e instanceof QueueAbortError) {
      record.status = 499; // the client closed the request before its turn
      reply.hijack();
      res.destroy();
    } else {
      const err = fromEngineError(e, job.promptParam);
      record.status = err.status;
      throw err;
    }
  } finally {
    res.off('close', onClose);
    request.raw.off('aborted', onClose);
    record.ms = performance.now() - t0;
    ctx.onRequestEnd?.(record);
  }
}

async function run(job: GenerationJob, signal: AbortSignal, reply: FastifyReply, record: RequestRecord, contextLength: number | undefined): Promise<void> {
  const it = generate(job.lm, job.prompt, { ...job.options, signal, ...(contextLength !== undefined && { contextLength }) });
  // The first event is awaited before anything is sent: option and prompt errors surface here and
  // become a plain JSON error response, also for streamed requests.
  let next = await it.next();
  if (!job.stream) {
    let done: DoneEvent | undefined;
    while (!next.done) {
      if (next.value.type === 'done') done = next.value;
      next = await it.next();
    }
    note(record, done!);
    if (signal.aborted) { reply.hijack(); reply.raw.destroy(); return; }
    await reply.code(200).send(job.format.response(done!, choicesOf(done!)));
    return;
  }

  reply.hijack();
  const sse = new SseWriter(reply.raw);
  const eog = job.lm.endOfGeneration;
  const started = new Set<number>();
  const withUsage = (chunk: unknown) => (job.includeUsage && chunk !== null && typeof chunk === 'object' ? { ...chunk, usage: null } : chunk);
  try {
    while (!next.done) {
      const ev = next.value;
      if (ev.type === 'token') {
        if (!started.has(ev.sequence)) {
          started.add(ev.sequence);
          const s = job.format.start(ev.sequence);
          if (s !== null) await sse.send(withUsage(s));
        }
        const chunk = job.format.token(ev, !eog.has(ev.id));
        if (chunk !== null) await sse.send(withUsage(chunk));
      } else {
        note(record, ev);
        for (const c of choicesOf(ev)) {
          if (!started.has(c.index)) {
            const s = job.format.start(c.index);
            if (s !== null) await sse.send(withUsage(s));
          }
          await sse.send(withUsage(job.format.finish(c)));
        }
        if (job.includeUsage) await sse.send(job.format.usage(ev));
      }
      next = await it.next();
    }
  } catch (e) {
    // Headers are out: the error goes as a final event.
    const err = fromEngineError(e, job.promptParam);
    record.status = err.status;
    await sse.send(err.body());
  } finally {
    await it.return(undefined);
  }
  sse.done();
}

function note(record: RequestRecord, done: DoneEvent): void {
  record.finishReason = done.finishReason;
  record.promptTokens = done.usage.promptTokens;
  record.completionTokens = done.usage.completionTokens;
}

/** `id` for a response: prefix + random hex (not engine randomness: ids only need to be unique). */
export function responseId(prefix: string): string {
  return `${prefix}-${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/** Seconds since the epoch, as OpenAI's `created`. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
