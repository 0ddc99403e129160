/**
 * `tokenloop chat [-m MODEL] [--tokenizer FILE] [--system TEXT] [--template FILE] [-n MAX_TOKENS_PER_TURN]
 *   [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--seed S] [-c CTX] [--verbose]`
 *
 * Interactive multi-turn chat on a model with a chat template. User lines come from stdin: with a
 * prompt ("> ") when stdin is a terminal, plain line by line when piped. Each answer streams to
 * stdout and ends with a newline; the KV cache is kept across turns, so only the new turn is
 * prefilled. Lines `/reset` (forget the conversation, keep the system message) and `/exit`
 * (or end of input) are commands; empty lines are skipped. Ctrl-C during an answer stops that
 * answer (its text so far stays in the conversation); Ctrl-C at the prompt quits.
 * Notes (aborted answer, dropped turns, cut answers) and, with --verbose, per-turn statistics go
 * to stderr. A failed turn (e.g. a message longer than the context) prints one error line, leaves
 * the conversation as it was and the chat goes on; the exit status is then 1.
 *
 * Context: -c defaults to the model's context length capped at 4096 (the KV cache is allocated
 * at that size). When a turn does not fit, the oldest turns are dropped (see Conversation).
 */
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { Conversation, type TurnOptions } from '../chat/conversation.js';
import { TokenloopError } from '../errors.js';
import type { DoneEvent } from '../generate/events.js';
import type { LanguageModel } from '../generate/language-model.js';
import { loadChatTemplateFile, TemplateError } from '../tokenizer/chat-template.js';
import { samplingFromFlags, withSamplingFlags, type SamplingFlags } from './sampling-flags.js';
import { parseInteger } from './parse-args.js';
import { loadFromFlags, withModelFlags, type ModelFlags } from './model-flags.js';

/** Default cap on the context (and so the KV cache allocation) when -c is not given. */
export const CHAT_DEFAULT_CTX = 4096;

interface ChatFlags extends ModelFlags, SamplingFlags {
  system?: string;
  template?: string;
  maxTokens?: number;
  seed?: number;
  ctxSize?: number;
  verbose?: boolean;
}

/** Register the `chat` command. */
export function register(program: Command): void {
  withSamplingFlags(withModelFlags(program
    .command('chat')
    .description('chat with a model using its chat template (reads user lines from stdin)')))
    .option('--system <text>', 'system message')
    .option('--template <file>', 'chat template file (.jinja, or a HF tokenizer_config.json) instead of the model\'s')
    .option('-n, --max-tokens <n>', 'maximum tokens per answer (default: until end of turn or a full context)', parseInteger)
    .option('--seed <s>', 'random seed (turn i uses seed + i)', parseInteger)
    .option('-c, --ctx-size <n>', `context positions (default: the model's context length, at most ${CHAT_DEFAULT_CTX})`, parseInteger)
    .option('--verbose', 'print per-turn statistics (prefilled tokens, speed) to stderr')
    .action(async (flags: ChatFlags) => {
      const lm = loadFromFlags(flags, flags.ctxSize);
      const conversation = new Conversation(lm, {
        template: flags.template !== undefined ? loadChatTemplateFile(flags.template) : modelTemplateOrError(lm),
        ...(flags.system !== undefined && { system: flags.system }),
        contextLength: flags.ctxSize ?? Math.min(lm.model.config.nCtx, CHAT_DEFAULT_CTX),
      });
      const ok = await chatLoop(conversation, flags);
      if (!ok) process.exitCode = 1;
    });
}

/** The model's template source, or an error that says how to give one. */
function modelTemplateOrError(lm: LanguageModel): string {
  const v = lm.file.kind === 'gguf' ? lm.file.meta.get('tokenizer.chat_template') : undefined;
  if (typeof v === 'string') return v;
  const why = lm.file.kind === 'gguf' ? 'tokenizer.chat_template is not in its metadata' : 'a llama2.c checkpoint has none';
  throw new TemplateError(`model has no chat template (${why}); pass --template FILE`);
}

/** Read lines and run turns until /exit or end of input. Returns false when some turn failed. */
async function chatLoop(conversation: Conversation, flags: ChatFlags): Promise<boolean> {
  const interactive = process.stdin.isTTY === true;
  const rl = createInterface({ input: process.stdin, ...(interactive && { output: process.stdout, prompt: '> ' }), terminal: interactive });
  let answering: AbortController | null = null;
  // Ctrl-C: stop the current answer, or quit at the prompt. A terminal in raw mode reports it
  // through readline; piped input gets the process signal.
  const onInterrupt = () => {
    if (answering) answering.abort();
    else rl.close();
  };
  rl.on('SIGINT', onInterrupt);
  process.on('SIGINT', onInterrupt);
  const base: TurnOptions = {
    ...samplingFromFlags(flags),
    ...(flags.maxTokens !== undefined && { maxTokens: flags.maxTokens }),
  };
  let turn = 0;
  let allOk = true;
  try {
    if (interactive) rl.prompt();
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === '/exit' || line === '/quit') break;
      if (line === '/reset') {
        conversation.reset();
        process.stderr.write('[conversation cleared]\n');
      } else if (/^\/\w+$/.test(line)) {
        process.stderr.write(`[unknown command ${line}; commands: /reset, /exit]\n`);
      } else if (line !== '') {
        answering = new AbortController();
        const options: TurnOptions = { ...base, signal: answering.signal, ...(flags.seed !== undefined && { seed: flags.seed + turn }) };
        turn++;
        try {
          await runTurn(conversation, raw, options, flags.verbose === true);
        } catch (e) {
          if (!(e instanceof TokenloopError)) throw e;
          process.stderr.write(`tokenloop: error: ${e.message}\n`);
          allOk = false;
        } finally {
          answering = null;
        }
      }
      if (interactive) rl.prompt();
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    rl.close();
  }
  return allOk;
}

/** One turn: stream the answer to stdout, notes to stderr. */
async function runTurn(conversation: Conversation, text: string, options: TurnOptions, verbose: boolean): Promise<void> {
  let done: DoneEvent | undefined;
  for await (const ev of conversation.send(text, options)) {
    if (ev.type === 'trimmed') {
      process.stderr.write(`[context full: dropped the ${ev.dropped.length} oldest messages; the prompt is now ${ev.promptTokens} of ${ev.contextLength} tokens]\n`);
    } else if (ev.type === 'done') {
      done = ev;
    } else if (ev.text) {
      process.stdout.write(ev.text);
    }
  }
  if (!done) return;
  process.stdout.write(done.tail + '\n');
  if (done.finishReason === 'abort') process.stderr.write('[answer stopped]\n');
  else if (done.stop.kind === 'context') process.stderr.write(`[answer cut: the context (${done.stop.limit} tokens) is full]\n`);
  if (verbose) {
    const t = done.timings;
    process.stderr.write(`[${done.finishReason} (${done.stop.kind}) · prompt ${done.usage.promptTokens} tokens, ${t.prefillTokens} prefilled ` +
      `(${done.usage.promptTokens - t.prefillTokens} reused) at ${t.prefillTokensPerS.toFixed(1)} tok/s · ${done.usage.completionTokens} generated at ` +
      `${t.decodeTokensPerS.toFixed(1)} tok/s · seed ${done.chain.seed}]\n`);
  }
}
