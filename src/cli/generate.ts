/**
 * `tokenloop generate [-m MODEL] [--tokenizer FILE] [-n MAX_NEW_TOKENS] [--temperature T] [--top-k K]
 *   [--top-p P] [--min-p P] [--seed S] [--stop STR]... [--json] PROMPT`
 *
 * Plain mode streams the continuation (not the prompt) to stdout as it is produced; a summary
 * goes to stderr. `--json` prints one JSON object (see README) and nothing else on stdout.
 * Ctrl-C aborts generation cleanly (finish reason `abort`).
 */
import type { Command } from 'commander';
import type { SamplingOptions } from '../decode/options.js';
import type { DoneEvent } from '../generate/events.js';
import { generate, type GenerateOptions } from '../generate/generate.js';
import { loadLanguageModel } from '../generate/language-model.js';
import { collect, parseInteger, parseNumber } from './parse-args.js';
import { resolveModelPath } from './resolve-model.js';

/** The CLI's sampling defaults (llama.cpp's); the library's own defaults are neutral. */
export const CLI_DEFAULTS = { maxTokens: 256, temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05 } as const;

interface GenerateFlags {
  model?: string;
  tokenizer?: string;
  maxTokens: number;
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  seed?: number;
  stop?: string[];
  json?: boolean;
  ctxSize?: number;
  bos: boolean;
  special?: boolean;
}

export function register(program: Command): void {
  program
    .command('generate')
    .description('continue a prompt, streaming the generated text')
    .argument('<prompt>', 'the prompt text (use -- before a prompt that starts with "-"; may be empty)')
    .option('-m, --model <path>', 'GGUF file or llama2.c checkpoint (default: $TOKENLOOP_MODEL, then ../shared/models/stories260K/stories260K.bin)')
    .option('--tokenizer <file>', 'tokenizer file (default: the model\'s own; tok512.bin beside a llama2.c checkpoint)')
    .option('-n, --max-tokens <n>', 'maximum new tokens', parseInteger, CLI_DEFAULTS.maxTokens)
    .option('--temperature <t>', 'sampling temperature; 0 = greedy', parseNumber, CLI_DEFAULTS.temperature)
    .option('--top-k <k>', 'keep the k most likely tokens; 0 = off', parseInteger, CLI_DEFAULTS.topK)
    .option('--top-p <p>', 'nucleus sampling threshold in (0, 1]; 1 = off', parseNumber, CLI_DEFAULTS.topP)
    .option('--min-p <p>', 'drop tokens below p × the top probability; 0 = off', parseNumber, CLI_DEFAULTS.minP)
    .option('--seed <s>', 'random seed (default: random, reported in --json output)', parseInteger)
    .option('--stop <str>', 'stop when the text contains STR (repeatable; STR is not printed)', collect(String))
    .option('-c, --ctx-size <n>', 'context positions to allocate (default: the model\'s context length)', parseInteger)
    .option('--no-bos', 'do not add BOS to the prompt')
    .option('--special', 'parse special-token text in the prompt')
    .option('--json', 'print one JSON object with tokens, text, finish reason and timings')
    .action(async (prompt: string, flags: GenerateFlags) => {
      const lm = loadLanguageModel({ model: resolveModelPath(flags.model), ...(flags.tokenizer !== undefined && { tokenizer: flags.tokenizer }) });
      const sampling: SamplingOptions = {
        temperature: flags.temperature, topK: flags.topK, topP: flags.topP, minP: flags.minP,
        ...(flags.seed !== undefined && { seed: flags.seed }),
      };
      const abort = new AbortController();
      const onSigint = () => abort.abort();
      process.once('SIGINT', onSigint);
      const options: GenerateOptions = {
        ...sampling,
        maxTokens: flags.maxTokens,
        stop: flags.stop ?? [],
        signal: abort.signal,
        parseSpecial: flags.special ?? false,
        ...(flags.bos ? {} : { addBos: false }),
        ...(flags.ctxSize !== undefined && { contextLength: flags.ctxSize }),
      };
      let done: DoneEvent | undefined;
      try {
        for await (const ev of generate(lm, prompt, options)) {
          if (ev.type === 'done') done = ev;
          else if (!flags.json && ev.text) process.stdout.write(ev.text);
        }
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
      if (!done) return;
      if (flags.json) {
        process.stdout.write(JSON.stringify(jsonResult(done, lm.loadMs, lm.file.path)) + '\n');
      } else {
        if (done.tail) process.stdout.write(done.tail);
        if (process.stdout.isTTY) process.stdout.write('\n');
        const t = done.timings;
        process.stderr.write(`[${done.finishReason} (${done.stop.kind}) · ${done.usage.promptTokens} prompt + ${done.usage.completionTokens} generated tokens · ` +
          `prefill ${t.prefillTokensPerS.toFixed(1)} tok/s · decode ${t.decodeTokensPerS.toFixed(1)} tok/s (${t.msPerToken.toFixed(2)} ms/token) · seed ${done.chain.seed}]\n`);
      }
    });
}

/** The `--json` object: the contract fields first (snake_case), then extras. */
export function jsonResult(done: DoneEvent, loadMs: number, modelPath: string): Record<string, unknown> {
  return {
    prompt_tokens: done.promptTokens,
    tokens: done.tokens,
    text: done.text,
    finish_reason: done.finishReason,
    prefill_tokens_per_s: done.timings.prefillTokensPerS,
    decode_tokens_per_s: done.timings.decodeTokensPerS,
    stop_reason: done.stop,
    logprob: done.logprob,
    usage: { prompt_tokens: done.usage.promptTokens, completion_tokens: done.usage.completionTokens, total_tokens: done.usage.totalTokens },
    timings: {
      load_ms: loadMs,
      prefill_ms: done.timings.prefillMs,
      decode_ms: done.timings.decodeMs,
      ms_per_token: done.timings.msPerToken,
    },
    seed: done.chain.seed,
    chain: done.chain,
    cache: { length: done.cache.length, bytes: done.cache.bytes, capacity_bytes: done.cache.capacityBytes },
    model: modelPath,
  };
}
