/**
 * A multi-turn chat on a model with a chat template. Each turn:
 *   messages += user → render the whole conversation (add_generation_prompt) → token ids with
 *   chatPromptTokens (message content is always plain text, never control tokens) → generate()
 *   with the conversation's Session, so only the suffix that differs from what the KV cache holds
 *   is prefilled → stream the answer, stopping at end-of-turn → messages += assistant (its text).
 *
 * Re-rendering a finished answer need not give the ids that were generated (the template adds its
 * end marker, trims, or the text tokenizes differently): generate() keeps the longest common
 * prefix of the cache and recomputes from the first differing token, so the cache always matches
 * the prompt exactly and results equal a fresh generation.
 *
 * Context policy: when the rendered prompt plus a reserve for the answer does not fit, the oldest
 * turns (a user message and the replies after it) are dropped, always keeping the system message
 * and the new user message; the dropped turns are reported in a `trimmed` event. When even the
 * system message plus the new user message do not fit, the turn fails with ContextOverflowError
 * and the conversation is left as it was.
 */
import { ContextOverflowError, InvalidOptionError } from '../errors.js';
import type { DoneEvent, GenerationEvent } from '../generate/events.js';
import { createSession, generate, type GenerateOptions, type Session } from '../generate/generate.js';
import type { LanguageModel } from '../generate/language-model.js';
import {
  ChatTemplate, chatPromptTokens, chatTemplateFromMetadata, TemplateError,
  type ChatMessage, type ChatTemplateVariables, type RenderOptions,
} from '../tokenizer/chat-template.js';
import { endOfTurnIds } from './end-of-turn.js';

export interface ConversationOptions {
  /** The chat template (source or parsed). Default: the model's GGUF `tokenizer.chat_template`. */
  template?: string | ChatTemplate;
  /** A system message placed first (kept when old turns are dropped and on reset()). */
  system?: string;
  /** Context positions to use (default: the model's context length). The KV cache is allocated at this size. */
  contextLength?: number;
  /**
   * Positions kept free for the answer when deciding whether old turns must be dropped. Default:
   * the turn's maxTokens when given, else a quarter of the context.
   */
  reserve?: number;
  /** Extra template variables (e.g. tools, or bos_token/eos_token overrides). */
  variables?: Record<string, unknown>;
  /** Clock for templates that call strftime_now. */
  now?: () => Date;
}

/** Per-turn generation options: sampling, length, stop strings, abort signal. */
export type TurnOptions = Omit<GenerateOptions, 'session' | 'addBos' | 'parseSpecial' | 'contextLength'>;

/** Old turns were dropped so the prompt fits the context (emitted before generation starts). */
export interface TrimmedEvent {
  type: 'trimmed';
  /** The messages removed from the conversation, oldest first. */
  dropped: ChatMessage[];
  /** Prompt tokens after dropping them. */
  promptTokens: number;
  contextLength: number;
}

/** What a turn streams: maybe a `trimmed` event, then generate()'s token events and its done event. */
export type ChatEvent = TrimmedEvent | GenerationEvent;

/** A chat conversation bound to one model, keeping its KV cache across turns. */
export class Conversation {
  readonly lm: LanguageModel;
  readonly template: ChatTemplate;
  /** Ids that end an answer: the model's end-of-generation ids and the template's end-of-turn token. */
  readonly endOfTurn: ReadonlySet<number>;
  readonly contextLength: number;
  readonly system: string | undefined;
  /** The messages so far (system first when given). Editable: a later turn re-renders it all. */
  messages: ChatMessage[];
  /** KV cache and the ids it holds, shared by all turns. */
  readonly session: Session = createSession();
  private readonly opts: ConversationOptions;
  private readonly lmForTurns: LanguageModel;
  private busy = false;

  constructor(lm: LanguageModel, opts: ConversationOptions = {}) {
    this.lm = lm;
    this.opts = opts;
    const source = opts.template ?? templateOf(lm);
    this.template = typeof source === 'string' ? new ChatTemplate(source) : source;
    const nCtx = lm.model.config.nCtx;
    if (opts.contextLength !== undefined && (!Number.isSafeInteger(opts.contextLength) || opts.contextLength < 1)) {
      throw new InvalidOptionError(`contextLength must be an integer >= 1, got ${String(opts.contextLength)}`);
    }
    if (opts.reserve !== undefined && (!Number.isSafeInteger(opts.reserve) || opts.reserve < 0)) {
      throw new InvalidOptionError(`reserve must be an integer >= 0, got ${String(opts.reserve)}`);
    }
    this.contextLength = Math.min(nCtx, opts.contextLength ?? nCtx);
    this.system = opts.system;
    this.messages = this.initialMessages();
    this.endOfTurn = endOfTurnIds(lm, this.template, this.baseVariables());
    // generate() stops at lm.endOfGeneration; give it the end-of-turn set through a view of the model.
    this.lmForTurns = { ...lm, endOfGeneration: this.endOfTurn };
  }

  /** Forget all turns (the system message stays). The KV cache is kept: its system-prompt prefix is reused. */
  reset(): void {
    this.messages = this.initialMessages();
  }

  /** Prompt ids for the current messages, ending with the assistant's generation prompt. */
  promptTokens(messages: ChatMessage[] = this.messages): number[] {
    return chatPromptTokens(this.lm.tokenizer, this.template, { ...this.baseVariables(), messages, add_generation_prompt: true }, this.renderOptions());
  }

  /**
   * Add a user message and stream the answer. The answer (its text, also when aborted or cut
   * short) is appended as an assistant message when the stream ends, also when the consumer
   * stops iterating early. On an error before generation starts the user message is removed.
   */
  async *send(content: string, options: TurnOptions = {}): AsyncGenerator<ChatEvent, void, undefined> {
    if (typeof content !== 'string') throw new InvalidOptionError('a chat message must be a string');
    if (this.busy) throw new InvalidOptionError('a turn is already in progress on this conversation');
    // A turn appends one answer: strategies returning several sequences have no single answer.
    for (const key of ['n', 'numReturnSequences']) {
      const v = (options as Record<string, unknown>)[key];
      if (v !== undefined && v !== 1) throw new InvalidOptionError(`${key} must be 1 in a chat turn (one answer per turn), got ${String(v)}`);
    }
    this.busy = true;
    const before = this.messages;
    this.messages = [...before, { role: 'user', content }];
    let prompt: number[];
    let trimmed: TrimmedEvent | null;
    try {
      ({ prompt, trimmed } = this.fitContext(options.maxTokens));
    } catch (e) {
      this.messages = before;
      this.busy = false;
      throw e;
    }
    let text = '';
    let started = false;
    let finished = false;
    try {
      if (trimmed) yield trimmed;
      for await (const ev of generate(this.lmForTurns, prompt, { ...options, session: this.session, contextLength: this.contextLength })) {
        started = true;
        if (ev.type === 'done') {
          text = ev.text;
          finished = true;
        } else {
          text += ev.text;
        }
        yield ev;
      }
    } finally {
      if (started || finished) this.messages = [...this.messages, { role: 'assistant', content: text }];
      else this.messages = this.messages.slice(0, -1); // generate() failed before streaming anything
      this.busy = false;
    }
  }

  /** Run one turn to completion and return its done event. */
  async reply(content: string, options: TurnOptions = {}): Promise<DoneEvent> {
    let done: DoneEvent | undefined;
    for await (const ev of this.send(content, options)) if (ev.type === 'done') done = ev;
    return done!;
  }

  /** Prompt ids for this.messages, dropping the oldest turns when they do not fit. */
  private fitContext(maxTokens: number | undefined): { prompt: number[]; trimmed: TrimmedEvent | null } {
    const limit = this.contextLength;
    const reserve = Math.min(this.opts.reserve ?? (maxTokens !== undefined ? maxTokens : Math.floor(limit / 4)), limit - 1);
    let prompt = this.promptTokens();
    const dropped: ChatMessage[] = [];
    const head = this.system !== undefined ? 1 : 0;
    while (prompt.length + reserve > limit) {
      const rest = this.messages.slice(head);
      if (rest.length <= 1) break; // only the new user message is left
      // Drop the oldest user message and everything up to the next user message.
      let cut = 1;
      while (cut < rest.length - 1 && rest[cut]!.role !== 'user') cut++;
      dropped.push(...rest.slice(0, cut));
      this.messages = [...this.messages.slice(0, head), ...rest.slice(cut)];
      prompt = this.promptTokens();
    }
    if (prompt.length >= limit) {
      throw new ContextOverflowError(`the message does not fit the context: the prompt needs ${prompt.length} tokens${head ? ' with the system message' : ''} and leaves no room for an answer (context ${limit})`);
    }
    const trimmed = dropped.length ? { type: 'trimmed' as const, dropped, promptTokens: prompt.length, contextLength: limit } : null;
    return { prompt, trimmed };
  }

  private initialMessages(): ChatMessage[] {
    return this.system !== undefined ? [{ role: 'system', content: this.system }] : [];
  }

  /** bos_token / eos_token as the template sees them (the vocabulary's texts), plus user variables. */
  private baseVariables(): Omit<ChatTemplateVariables, 'messages'> {
    const t = this.lm.tokenizer;
    return {
      ...(t.bos !== null && { bos_token: t.piece(t.bos) }),
      ...(t.eos !== null && { eos_token: t.piece(t.eos) }),
      ...this.opts.variables,
    };
  }

  private renderOptions(): RenderOptions {
    return this.opts.now ? { now: this.opts.now } : {};
  }
}

/** The model's own chat template, with a clear error when it has none. */
function templateOf(lm: LanguageModel): string {
  if (lm.file.kind !== 'gguf') throw new TemplateError(`model has no chat template (${lm.file.path} is a llama2.c checkpoint); give a template`);
  return chatTemplateFromMetadata(lm.file.meta);
}
