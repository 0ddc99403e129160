/**
 * `tokenloop generate [-m MODEL] [--tokenizer FILE] [-n MAX_NEW_TOKENS] [--temperature T] [--top-k K]
 *   [--top-p P] [--min-p P] [--typical-p P] [--repetition-penalty R] [--repeat-last-n N]
 *   [--presence-penalty P] [--frequency-penalty F] [--logit-bias ID=BIAS]... [--no-repeat-ngram-size N]
 *   [--order LIST] [--seed S] [--stop STR]... [--n N] [--num-beams N] [--length-penalty L]
 *   [--early-stopping true|false|never] [--num-return-sequences N] [--top-logprobs K]
 *   [--json-mode | --json-schema FILE] [--json] PROMPT`
 *
 * Plain mode streams the continuation (not the prompt) to stdout as it is produced; a summary
 * goes to stderr. With several sequences (`--n`, `--num-beams`) nothing streams: each sequence is
 * printed at the end under a header line. `--json` prints one JSON object (see README) and nothing
 * else on stdout. Ctrl-C aborts generation cleanly (finish reason `abort`).
 *
 * Beam search (`--num-beams` > 1) is deterministic: the CLI's sampling defaults (temperature,
 * top-k, top-p, min-p) are not applied to it, and giving any of them explicitly is an error.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { InvalidOptionError } from '../errors.js';
import type { SamplingOptions } from '../decode/options.js';
import type { EarlyStopping } from '../decode/beam.js';
import type { DoneEvent, SequenceResult, TokenLogprobs } from '../generate/events.js';
import { generate, type GenerateOptions } from '../generate/generate.js';
import { collect, parseInteger, parseNumber } from './parse-args.js';
import type { LanguageModel } from '../generate/language-model.js';
import type { StrategyOptions } from '../generate/strategy.js';
import { loadFromFlags, withModelFlags, type ModelFlags } from './model-flags.js';
import { CLI_DEFAULTS, samplingFromFlags, withSamplingFlags, type SamplingFlags } from './sampling-flags.js';

export { CLI_DEFAULTS } from './sampling-flags.js';

/** true | false | never for --early-stopping. */
function parseEarlyStopping(v: string): EarlyStopping {
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (v === 'never') return 'never';
  throw new InvalidArgumentError(`expected true, false or never, got "${v}"`);
}

/** Reads and parses the --json-schema file. */
function readSchema(path: string): unknown {
  let text: string;
  try { text = readFileSync(path, 'utf8'); } catch (e) {
    throw new InvalidOptionError(`--json-schema: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  try { return JSON.parse(text); } catch (e) {
    throw new InvalidOptionError(`--json-schema: ${path} is not valid JSON (${(e as Error).message})`);
  }
}

interface GenerateFlags extends ModelFlags, SamplingFlags, StrategyOptions {
  maxTokens: number;
  seed?: number;
  stop?: string[];
  json?: boolean;
  ctxSize?: number;
  bos: boolean;
  special?: boolean;
  jsonMode?: boolean;
  jsonSchema?: string;
}

export function register(program: Command): void {
  withSamplingFlags(withModelFlags(program
    .command('generate')
    .description('continue a prompt, streaming the generated text')
    .argument('<prompt>', 'the prompt text (use -- before a prompt that starts with "-"; may be empty)'))
    .option('-n, --max-tokens <n>', 'maximum new tokens', parseInteger, CLI_DEFAULTS.maxTokens))
    .option('--seed <s>', 'random seed (default: random, reported in --json output)', parseInteger)
    .option('--n <n>', 'draw N samples from the prompt (one prefill); with --num-beams, the sequences to return', parseInteger)
    .option('--num-beams <n>', 'beam search with N beams (deterministic; no sampling controls)', parseInteger)
    .option('--length-penalty <l>', 'beam score = sum logprob / length^L (default 1)', parseNumber)
    .option('--early-stopping <mode>', 'beam search stopping rule: true, false (default) or never', parseEarlyStopping)
    .option('--num-return-sequences <n>', 'beam search: return the N best hypotheses (default 1)', parseInteger)
    .option('--json-mode', 'constrain the output to one JSON object')
    .option('--json-schema <file>', 'constrain the output to JSON valid against the JSON Schema in FILE')
    .option('--top-logprobs <k>', 'report each token\'s logprob and its K best alternatives (0-20), raw and processed', parseInteger)
    .option('--stop <str>', 'stop when the text contains STR (repeatable; STR is not printed)', collect(String))
    .option('-c, --ctx-size <n>', 'context positions to allocate (default: the model\'s context length)', parseInteger)
    .option('--no-bos', 'do not add BOS to the prompt')
    .option('--special', 'parse special-token text in the prompt')
    .option('--json', 'print one JSON object with tokens, text, finish reason and timings')
    .action(async (prompt: string, flags: GenerateFlags, cmd: Command) => {
      const lm = loadFromFlags(flags, flags.ctxSize);
      const beams = (flags.numBeams ?? 1) > 1;
      // Beam search is deterministic: the CLI's sampling defaults do not apply to it.
      const given = (k: keyof GenerateFlags) => !beams || cmd.getOptionValueSource(k) !== 'default';
      const sampling: SamplingOptions = {
        ...samplingFromFlags(flags, (k) => given(k)),
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
        ...(flags.n !== undefined && { n: flags.n }),
        ...(flags.numBeams !== undefined && { numBeams: flags.numBeams }),
        ...(flags.lengthPenalty !== undefined && { lengthPenalty: flags.lengthPenalty }),
        ...(flags.earlyStopping !== undefined && { earlyStopping: flags.earlyStopping }),
        ...(flags.numReturnSequences !== undefined && { numReturnSequences: flags.numReturnSequences }),
        ...(flags.topLogprobs !== undefined && { topLogprobs: flags.topLogprobs }),
        ...(flags.jsonMode && { jsonMode: true }),
        ...(flags.jsonSchema !== undefined && { jsonSchema: readSchema(flags.jsonSchema) }),
      };
      // Several sequences (or beams, which are final only at the end) are printed at the end.
      const stream = !beams && (flags.n ?? 1) === 1;
      let done: DoneEvent | undefined;
      try {
        for await (const ev of generate(lm, prompt, options)) {
          if (ev.type === 'done') done = ev;
          else if (stream && !flags.json && ev.text) process.stdout.write(ev.text);
        }
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
      if (!done) return;
      if (flags.json) {
        process.stdout.write(JSON.stringify(jsonResult(done, lm)) + '\n');
      } else {
        if (!stream) process.stdout.write(plainSequences(done));
        else if (done.tail) process.stdout.write(done.tail);
        if (stream && process.stdout.isTTY) process.stdout.write('\n');
        const t = done.timings;
        process.stderr.write(`[load ${lm.loadMs.toFixed(0)} ms, ${(lm.file.bytes / 1048576).toFixed(1)} MiB · ${done.finishReason} (${done.stop.kind}) · ${done.usage.promptTokens} prompt + ${done.usage.completionTokens} generated tokens · ` +
          `prefill ${t.prefillTokensPerS.toFixed(1)} tok/s · decode ${t.decodeTokensPerS.toFixed(1)} tok/s (${t.msPerToken.toFixed(2)} ms/token) · ` +
          `${done.strategy.kind === 'beam' ? `${done.strategy.numBeams} beams` : `seed ${done.chain.seed}`}]\n`);
      }
    });
}

/** Plain-mode output of a buffered result: the text alone, or each sequence under a header. */
function plainSequences(done: DoneEvent): string {
  const seqs = done.sequences ?? [];
  if (seqs.length <= 1) return done.text + '\n';
  return seqs.map((s) => `--- sequence ${s.index} · logprob ${s.logprob.toFixed(4)}${s.score !== undefined ? ` · score ${s.score.toFixed(4)}` : ''} · ${s.finishReason} ---\n${s.text}\n`).join('');
}

/** Per-token details as JSON: raw top alternatives, and the processed logprob with its alternatives. */
function topJson(lps: readonly TokenLogprobs[]): { top_logprobs: { id: number; logprob: number }[][]; processed_logprobs: { logprob: number; top_logprobs: { id: number; logprob: number }[] }[] } {
  return {
    top_logprobs: lps.map((l) => l.raw.top.map((t) => ({ id: t.id, logprob: t.logprob }))),
    processed_logprobs: lps.map((l) => ({ logprob: l.processed.logprob, top_logprobs: l.processed.top.map((t) => ({ id: t.id, logprob: t.logprob })) })),
  };
}

/** One entry of `sequences` in --json output. */
function sequenceJson(s: SequenceResult): Record<string, unknown> {
  return {
    index: s.index, tokens: s.tokens, text: s.text, logprob: s.logprob, finish_reason: s.finishReason, stop_reason: s.stop,
    token_logprobs: s.tokenLogprobs, ...(s.score !== undefined && { score: s.score }), ...(s.logprobs && topJson(s.logprobs)),
  };
}

/**
 * The `--json` object: the contract fields first (snake_case), then extras. `logprob` and
 * `token_logprobs` are under the model's raw distribution; with --top-logprobs, `top_logprobs`
 * holds each token's raw alternatives and `processed_logprobs` the same from the distribution the
 * token was drawn from (after every control). `sequences` appears when several are returned; the
 * top-level fields then describe the best one.
 */
export function jsonResult(done: DoneEvent, lm: Pick<LanguageModel, 'loadMs' | 'file'>): Record<string, unknown> {
  return {
    prompt_tokens: done.promptTokens,
    tokens: done.tokens,
    text: done.text,
    finish_reason: done.finishReason,
    prefill_tokens_per_s: done.timings.prefillTokensPerS,
    decode_tokens_per_s: done.timings.decodeTokensPerS,
    stop_reason: done.stop,
    logprob: done.logprob,
    token_logprobs: done.tokenLogprobs,
    ...(done.logprobs && topJson(done.logprobs)),
    ...(done.sequences && done.sequences.length > 1 && { sequences: done.sequences.map(sequenceJson) }),
    strategy: done.strategy,
    usage: { prompt_tokens: done.usage.promptTokens, completion_tokens: done.usage.completionTokens, total_tokens: done.usage.totalTokens },
    timings: {
      load_ms: lm.loadMs,
      prefill_ms: done.timings.prefillMs,
      decode_ms: done.timings.decodeMs,
      ms_per_token: done.timings.msPerToken,
    },
    seed: done.chain.seed,
    chain: done.chain,
    cache: { length: done.cache.length, bytes: done.cache.bytes, capacity_bytes: done.cache.capacityBytes },
    model: lm.file.path,
    model_bytes: lm.file.bytes,
  };
}
