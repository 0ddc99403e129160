/**
 * `tokenloop eval [-m MODEL] --tokens ID,ID,... [--json]`
 *
 * Teacher-forced scoring: runs the given token ids through the model in one batch and prints the
 * full logits vector of every position. With `--json`, exactly one JSON object on stdout:
 * `{"architecture", "tokens", "nVocab", "logits": [[...nVocab], ... one per token]}`.
 * Without it, one line per position: the token, the argmax next token and its logit.
 */
import type { Command } from 'commander';
import { InvalidOptionError } from '../errors.js';
import { openModelFile } from '../format/open.js';
import { loadModel } from '../model/registry.js';
import { resolveModelPath } from './resolve-model.js';

interface EvalFlags {
  model?: string;
  tokens: string;
  json?: boolean;
  exactGelu?: boolean;
}

/** Parse "1,2,3" into ids, each an integer in [0, nVocab). */
export function parseTokenList(s: string, nVocab: number): number[] {
  const parts = s.split(',').map((p) => p.trim());
  if (parts.length === 0 || (parts.length === 1 && parts[0] === '')) throw new InvalidOptionError('--tokens needs at least one token id');
  return parts.map((p, i) => {
    if (!/^\d+$/.test(p)) throw new InvalidOptionError(`--tokens: "${p}" (item ${i}) is not a non-negative integer token id`);
    const id = Number(p);
    if (id >= nVocab) throw new InvalidOptionError(`--tokens: token id ${id} (item ${i}) is out of range; the vocabulary has ${nVocab} tokens`);
    return id;
  });
}

/** Register the `eval` command. */
export function register(program: Command): void {
  program
    .command('eval')
    .description('print the logits of every position of a token sequence (teacher-forced, one batch)')
    .option('-m, --model <path>', 'model file (GGUF or llama2.c checkpoint; default: the default model)')
    .requiredOption('--tokens <ids>', 'comma-separated token ids, e.g. 1,403,407')
    .option('--json', 'print one JSON object with the logits of every position')
    .option('--exact-gelu', 'exact tanh-GELU instead of ggml\'s F16 table')
    .action((flags: EvalFlags) => {
      const model = loadModel(openModelFile(resolveModelPath(flags.model)), { exactGelu: flags.exactGelu ?? false });
      const V = model.config.nVocab;
      const tokens = parseTokenList(flags.tokens, V);
      const cache = model.createCache(Math.min(model.config.nCtx, Math.max(1, tokens.length)));
      const all = model.forward(tokens, cache, { allLogits: true });
      const rows = tokens.map((_, p) => Array.from(all.subarray(p * V, (p + 1) * V)));
      if (flags.json) {
        process.stdout.write(JSON.stringify({ architecture: model.config.architecture, tokens, nVocab: V, logits: rows }) + '\n');
        return;
      }
      const lines = rows.map((r, p) => {
        let best = 0;
        for (let i = 1; i < r.length; i++) if (r[i]! > r[best]!) best = i;
        return `${String(p).padStart(5)}  token ${String(tokens[p]).padStart(6)}  argmax next ${String(best).padStart(6)}  logit ${r[best]!.toFixed(5)}`;
      });
      process.stdout.write(lines.join('\n') + '\n');
    });
}
