/**
 * Flags shared by every command that runs a model (generate, chat, score): which model, which
 * tokenizer, how many threads, which kernel backend — and the one function that loads from them.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { loadLanguageModel, type LanguageModel } from '../generate/language-model.js';
import { positiveInteger } from './parse-args.js';
import { resolveModelPath } from './resolve-model.js';

export interface ModelFlags {
  model?: string;
  tokenizer?: string;
  threads?: number;
  backend?: 'wasm' | 'js';
  kvType?: 'f32' | 'f16';
  batchSize?: number;
}

function parseKvType(v: string): 'f32' | 'f16' {
  if (v !== 'f32' && v !== 'f16') throw new InvalidArgumentError(`expected "f32" or "f16", got "${v}"`);
  return v;
}

function parseBackend(v: string): 'wasm' | 'js' {
  if (v !== 'wasm' && v !== 'js') throw new InvalidArgumentError(`expected "wasm" or "js", got "${v}"`);
  return v;
}

const parseBatchSize = positiveInteger('a batch size');
const parseThreads = positiveInteger('a thread count');

/** Add -m/--model, --tokenizer, --threads, --backend, --kv-type and --batch-size to a command. */
export function withModelFlags(cmd: Command): Command {
  return cmd
    .option('-m, --model <path>', 'GGUF file or llama2.c checkpoint (default: $TOKENLOOP_MODEL, then ../shared/models/stories260K/stories260K.bin)')
    .option('--tokenizer <file>', 'tokenizer file (default: the model\'s own; tok512.bin beside a llama2.c checkpoint)')
    .option('-t, --threads <n>', 'compute threads (default: the number of cores)', parseThreads)
    .option('--backend <kind>', 'kernels: wasm (SIMD, default) or js (the TypeScript reference)', parseBackend)
    .option('--kv-type <type>', 'KV cache element type: f32 (default, exact) or f16 (half the memory, faster decode)', parseKvType)
    .option('--batch-size <n>', 'most prompt tokens per forward pass (default 512); longer prompts run in batches', parseBatchSize);
}

/** Load the model the flags name; `contextLength` is the context the command will use. */
export function loadFromFlags(flags: ModelFlags, contextLength?: number): LanguageModel {
  return loadLanguageModel({
    model: resolveModelPath(flags.model),
    ...(flags.tokenizer !== undefined && { tokenizer: flags.tokenizer }),
    ...(flags.threads !== undefined && { threads: flags.threads }),
    ...(flags.backend !== undefined && { backend: flags.backend }),
    ...(flags.kvType !== undefined && { kvType: flags.kvType }),
    ...(flags.batchSize !== undefined && { batchSize: flags.batchSize }),
    ...(contextLength !== undefined && { contextLength }),
  });
}
