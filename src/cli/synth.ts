/**
 * `tokenloop synth --dim D --layers L --heads H [--kv-heads K] --hidden F [--type T] [--seed S]
 *  [--ctx N] [--untied] [--vocab-file FILE] OUT.gguf`
 *
 * Writes a Llama GGUF with seeded random weights and a real vocabulary (default: llama.cpp's
 * Llama 2 SentencePiece vocabulary from ../shared). Shapes of llama2.c's models:
 * 15M `--dim 288 --layers 6 --heads 6 --hidden 768`; 110M `--dim 768 --layers 12 --heads 12 --hidden 2048`.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { InvalidOptionError } from '../errors.js';
import { FILE_TYPES } from '../tools/file-type.js';
import { synthFile } from '../tools/synth.js';

/** The Llama 2 vocabulary in ../shared next to the checkout (or $TOKENLOOP_SHARED). */
export function defaultVocabFile(): string {
  const rel = join('reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');
  const env = process.env['TOKENLOOP_SHARED'];
  if (env) return join(env, rel);
  // Walk up from this module to the package root (works from src/ and from dist/).
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return resolve(dir, '..', 'shared', rel);
}

function int(what: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v.trim())) throw new InvalidOptionError(`${what} must be a non-negative integer, got "${v}"`);
    return Number(v);
  };
}

interface SynthFlags {
  dim: number; layers: number; heads: number; kvHeads?: number; hidden: number;
  type: string; seed: number; ctx: number; untied?: boolean; vocabFile?: string; name?: string;
}

/** Register the `synth` command. */
export function register(program: Command): void {
  program
    .command('synth')
    .description('write a Llama GGUF with seeded random weights and a real vocabulary (for benchmarks)')
    .argument('<out>', 'output GGUF')
    .requiredOption('--dim <n>', 'embedding size', int('--dim'))
    .requiredOption('--layers <n>', 'number of layers', int('--layers'))
    .requiredOption('--heads <n>', 'attention heads', int('--heads'))
    .option('--kv-heads <n>', 'key/value heads (default: --heads)', int('--kv-heads'))
    .requiredOption('--hidden <n>', 'feed-forward size', int('--hidden'))
    .option('--type <t>', `weight type: ${FILE_TYPES.map((f) => f.name).join(', ')}`, 'F32')
    .option('--seed <n>', 'random seed', int('--seed'), 1)
    .option('--ctx <n>', 'context length recorded in the file', int('--ctx'), 2048)
    .option('--untied', 'write a separate output.weight (default: shared with token_embd)')
    .option('--vocab-file <file>', 'GGUF whose tokenizer.* metadata is copied (default: ../shared Llama 2 vocabulary)')
    .option('--name <s>', 'general.name')
    .action((out: string, f: SynthFlags) => {
      const t0 = performance.now();
      const r = synthFile(out, {
        dim: f.dim, layers: f.layers, heads: f.heads, kvHeads: f.kvHeads ?? f.heads, hidden: f.hidden,
        type: f.type, seed: f.seed, ctx: f.ctx, untied: f.untied ?? false,
        vocabFile: f.vocabFile ?? defaultVocabFile(), ...(f.name !== undefined ? { name: f.name } : {}),
      });
      process.stdout.write(`wrote ${out}: ${(r.params / 1e6).toFixed(1)}M weights, vocab ${r.nVocab}, ${r.fileType.name}, ${(r.bytes / 1048576).toFixed(1)} MiB, ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    });
}
