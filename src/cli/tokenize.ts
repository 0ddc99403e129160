/**
 * `tokenloop tokenize [-m MODEL | --tokenizer FILE] [--no-bos] [--special] [--json] TEXT`
 *
 * Prints the token ids of TEXT and their vocabulary pieces: one `ID -> "PIECE"` line per token,
 * or with `--json` exactly one JSON object `{"ids": [...], "pieces": [...]}` on stdout.
 * `--no-bos` adds no BOS (nor EOS); `--special` parses special-token text such as `</s>`.
 * `--` ends the options, so TEXT may start with '-' or be empty.
 * Without -m/--tokenizer the default model (see resolve-model.ts) supplies the tokenizer.
 */
import type { Command } from 'commander';
import { openModelFile } from '../format/open.js';
import { loadTokenizer } from '../tokenizer/load.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { resolveModelPath } from './resolve-model.js';

interface TokenizeFlags {
  model?: string;
  tokenizer?: string;
  bos: boolean;
  special?: boolean;
  json?: boolean;
}

/** Register the `tokenize` command. */
export function register(program: Command): void {
  program
    .command('tokenize')
    .description('show the token ids and pieces of a text')
    .argument('<text>', 'the text to tokenize (use -- before text that starts with "-")')
    .option('-m, --model <path>', 'model file whose tokenizer is used (default: the default model)')
    .option('--tokenizer <file>', 'tokenizer file: llama2.c tokenizer.bin, GGUF, or tokenizer.json')
    .option('--no-bos', 'do not add BOS (or any other automatic special token)')
    .option('--special', 'parse special-token text (e.g. </s>) into special ids')
    .option('--json', 'print one JSON object {ids, pieces} and nothing else')
    .action((text: string, flags: TokenizeFlags) => {
      const tok = tokenizerFor(flags);
      const ids = tok.encode(text, {
        parseSpecial: flags.special ?? false,
        ...(flags.bos ? {} : { addBos: false, addEos: false }),
      });
      const pieces = ids.map((id) => tok.piece(id));
      if (flags.json) {
        process.stdout.write(JSON.stringify({ ids, pieces }) + '\n');
      } else {
        process.stdout.write(ids.map((id, i) => `${String(id).padStart(6)} -> ${JSON.stringify(pieces[i])}\n`).join(''));
      }
    });
}

/** An explicit tokenizer file alone needs no model; otherwise the (default) model's tokenizer. */
function tokenizerFor(flags: TokenizeFlags): Tokenizer {
  if (flags.tokenizer !== undefined && flags.model === undefined) return loadTokenizer({ tokenizerPath: flags.tokenizer });
  const modelFile = openModelFile(resolveModelPath(flags.model));
  return loadTokenizer(flags.tokenizer !== undefined ? { modelFile, tokenizerPath: flags.tokenizer } : { modelFile });
}
