/**
 * `tokenloop score [-m MODEL] [--tokenizer FILE] [--context TEXT] [--tokens IDS] [--top-logprobs K]
 *   [--no-bos] [--special] [--json] [TEXT]`
 *
 * Teacher-forced scoring of a given text: each token's log-probability under the model given the
 * tokens before it, their sum and the perplexity. `--context` conditions without being scored.
 * `--tokens` scores comma-separated ids instead of text. `--json` prints one object:
 * `{tokens, context_length, scored: [{id, text, logprob, top_logprobs?}], logprob, mean_logprob,
 * perplexity, model}`; plain mode prints one line per token, then a summary line.
 */
import type { Command } from 'commander';
import { InvalidOptionError } from '../errors.js';
import { scoreText, type ScoreOptions } from '../generate/score.js';
import { parseTokenList } from './eval.js';
import { parseInteger } from './parse-args.js';
import { loadFromFlags, withModelFlags, type ModelFlags } from './model-flags.js';

interface ScoreFlags extends ModelFlags {
  context?: string;
  tokens?: string;
  topLogprobs?: number;
  bos: boolean;
  special?: boolean;
  json?: boolean;
}

/** Register the `score` command. */
export function register(program: Command): void {
  withModelFlags(program
    .command('score')
    .description('teacher-forced per-token log-probabilities and perplexity of a text')
    .argument('[text]', 'the text to score (use -- before text that starts with "-")'))
    .option('--context <text>', 'text before TEXT that conditions it but is not scored')
    .option('--tokens <ids>', 'score these comma-separated token ids instead of text (the first is context)')
    .option('--top-logprobs <k>', 'also list the K most likely tokens at each position (0-20)', parseInteger)
    .option('--no-bos', 'do not add BOS to the text')
    .option('--special', 'parse special-token text')
    .option('--json', 'print one JSON object')
    .action((text: string | undefined, flags: ScoreFlags) => {
      if ((text === undefined) === (flags.tokens === undefined)) throw new InvalidOptionError('score: give either TEXT or --tokens (exactly one)');
      if (flags.tokens !== undefined && flags.context !== undefined) throw new InvalidOptionError('score: --context applies to TEXT, not to --tokens');
      const lm = loadFromFlags(flags);
      const opts: ScoreOptions = {
        ...(flags.context !== undefined && { context: flags.context }),
        ...(flags.topLogprobs !== undefined && { topLogprobs: flags.topLogprobs }),
        ...(flags.bos ? {} : { addBos: false }),
        parseSpecial: flags.special ?? false,
      };
      const input = flags.tokens !== undefined ? parseTokenList(flags.tokens, lm.model.config.nVocab) : text!;
      const r = scoreText(lm, input, opts);
      if (flags.json) {
        process.stdout.write(JSON.stringify({
          tokens: r.tokens,
          context_length: r.contextLength,
          scored: r.scored.map((s) => ({ id: s.id, text: s.text, logprob: s.logprob, ...(s.top && { top_logprobs: s.top }) })),
          logprob: r.logprob,
          mean_logprob: r.meanLogprob,
          perplexity: r.perplexity,
          model: lm.file.path,
        }) + '\n');
        return;
      }
      const lines = r.scored.map((s) => `${String(s.id).padStart(6)}  ${s.logprob.toFixed(4).padStart(9)}  ${JSON.stringify(s.text)}` +
        (s.top ? `  top: ${s.top.map((t) => `${t.id}:${t.logprob.toFixed(3)}`).join(' ')}` : ''));
      process.stdout.write(lines.join('\n') + '\n');
      process.stdout.write(`${r.scored.length} tokens scored · logprob ${r.logprob.toFixed(4)} · mean ${r.meanLogprob.toFixed(4)} · perplexity ${r.perplexity.toFixed(4)}\n`);
    });
}
