/**
 * Which model file the CLI uses. Resolution order:
 *  1. `-m/--model PATH` (a file, or a directory holding exactly one .gguf or one llama2.c checkpoint);
 *  2. the TOKENLOOP_MODEL environment variable (same forms);
 *  3. the default model, `../shared/models/stories260K/stories260K.bin` beside the package
 *     (with its tokenizer `tok512.bin` in the same folder).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelFormatError } from '../errors.js';

/** The package root (works from src/ under tsx and from dist/ once built). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEFAULT_MODEL = resolve(PACKAGE_ROOT, '..', 'shared', 'models', 'stories260K', 'stories260K.bin');

export function resolveModelPath(flag?: string): string {
  if (flag !== undefined && flag !== '') return resolveOne(flag, '--model');
  const env = process.env['TOKENLOOP_MODEL'];
  if (env) return resolveOne(env, 'TOKENLOOP_MODEL');
  if (existsSync(DEFAULT_MODEL)) return DEFAULT_MODEL;
  throw new ModelFormatError(`no model given and the default model was not found at ${DEFAULT_MODEL}; pass -m MODEL or set TOKENLOOP_MODEL`);
}

function resolveOne(p: string, source: string): string {
  const abs = resolve(p);
  if (!existsSync(abs)) throw new ModelFormatError(`model not found: ${p} (from ${source})`);
  if (!statSync(abs).isDirectory()) return abs;
  const names = readdirSync(abs);
  const ggufs = names.filter((n) => n.toLowerCase().endsWith('.gguf'));
  if (ggufs.length === 1) return join(abs, ggufs[0]!);
  const checkpoints = names.filter((n) => n.endsWith('.bin') && !/^tok(enizer)?\d*\.bin$/.test(n));
  if (ggufs.length === 0 && checkpoints.length === 1) return join(abs, checkpoints[0]!);
  const found = [...ggufs, ...checkpoints];
  throw new ModelFormatError(found.length === 0
    ? `no model file (.gguf or llama2.c .bin) in directory ${p}`
    : `directory ${p} holds several model files (${found.join(', ')}); pass one of them`);
}
