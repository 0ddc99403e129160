/**
 * `tokenloop info [-m MODEL] [--ctx N] [--kv-type f32|f16] [--json]`
 *
 * What a model file holds: architecture and hyperparameters, tensor types and sizes, tokenizer
 * kind and special tokens (read straight from the metadata), chat template presence, and the
 * memory needed to run it with a context of N tokens (weights + KV cache of the given type + scratch).
 */
import type { Command } from 'commander';
import { InvalidOptionError, TokenloopError } from '../errors.js';
import { typeName } from '../format/dtypes.js';
import type { MetaValue, ModelFile } from '../format/model-file.js';
import { openModelFile } from '../format/open.js';
import { kvLength } from '../kv/cache.js';
import { loadModel } from '../model/registry.js';
import type { Model } from '../model/model.js';
import { resolveModelPath } from './resolve-model.js';

interface InfoFlags {
  model?: string;
  ctx?: string;
  kvType?: string;
  json?: boolean;
}

/** Everything `info` reports, as printed by --json. */
export interface ModelInfo {
  path: string;
  format: 'gguf' | 'llama2c';
  ggufVersion: number;
  fileBytes: number;
  name: string | null;
  architecture: string | null;
  supported: boolean;
  unsupportedReason?: string;
  hyperparameters: Record<string, number | string | boolean>;
  tensors: { count: number; byType: Record<string, { count: number; bytes: number }>; list: { name: string; dims: number[]; type: string; bytes: number }[] };
  tokenizer: { kind: string; tokens: number | null; bos: number | null; eos: number | null; unk: number | null; pad: number | null; addBos: boolean | null; chatTemplate: boolean };
  memory: { ctx: number; kvType: 'f32' | 'f16'; weightBytes: number; kvCacheBytes: number; scratchBytes: number; totalBytes: number } | null;
}

const num = (v: MetaValue | undefined): number | null => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null);

/** Gather the report for a file (the model is built only to validate it and size its memory). */
export function modelInfo(file: ModelFile, ctx?: number, kvType: 'f32' | 'f16' = 'f32'): ModelInfo {
  const arch = typeof file.meta.get('general.architecture') === 'string' ? (file.meta.get('general.architecture') as string) : null;
  let model: Model | null = null;
  let reason: string | undefined;
  try { model = loadModel(file); } catch (e) { if (e instanceof TokenloopError) reason = e.message; else throw e; }
  const hyper: Record<string, number | string | boolean> = {};
  if (arch) {
    for (const [k, v] of file.meta) {
      if (k.startsWith(arch + '.') && (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean')) hyper[k.slice(arch.length + 1)] = v;
    }
  }
  if (model) {
    const c = model.config;
    Object.assign(hyper, { n_vocab: c.nVocab, n_ctx_train: c.nCtx, n_embd: c.nEmbd, n_layer: c.nLayer, n_head: c.nHead, n_head_kv: c.nHeadKv, head_dim: c.headDim, n_ff: c.nFF });
  }
  const byType: Record<string, { count: number; bytes: number }> = {};
  const list = [...file.tensors.values()].map((t) => {
    const ty = typeName(t.type);
    const e = (byType[ty] ??= { count: 0, bytes: 0 });
    e.count++; e.bytes += t.byteLength;
    return { name: t.name, dims: t.dims, type: ty, bytes: t.byteLength };
  });
  const m = file.meta;
  const tokens = m.get('tokenizer.ggml.tokens');
  const tokenizer = {
    kind: file.kind === 'llama2c' ? 'llama2c (external tokenizer.bin)' : String(m.get('tokenizer.ggml.model') ?? 'none'),
    tokens: Array.isArray(tokens) ? tokens.length : null,
    bos: num(m.get('tokenizer.ggml.bos_token_id')),
    eos: num(m.get('tokenizer.ggml.eos_token_id')),
    unk: num(m.get('tokenizer.ggml.unknown_token_id')),
    pad: num(m.get('tokenizer.ggml.padding_token_id')),
    addBos: typeof m.get('tokenizer.ggml.add_bos_token') === 'boolean' ? (m.get('tokenizer.ggml.add_bos_token') as boolean) : null,
    chatTemplate: typeof m.get('tokenizer.chat_template') === 'string',
  };
  let memory: ModelInfo['memory'] = null;
  if (model) {
    const c = model.config;
    const n = ctx ?? c.nCtx;
    const kvCacheBytes = c.nLayer * 2 * kvLength(n, c.nHeadKv * c.headDim) * (kvType === 'f16' ? 2 : 4); // whole cache blocks
    // Decode scratch: activations of one token plus the attention scores row and the logits.
    const scratchBytes = 4 * (4 * c.nEmbd + 4 * c.nHead * c.headDim + 3 * c.nFF + n + c.nVocab);
    memory = { ctx: n, kvType, weightBytes: model.weightBytes, kvCacheBytes, scratchBytes, totalBytes: model.weightBytes + kvCacheBytes + scratchBytes };
  }
  const name = m.get('general.name');
  return {
    path: file.path, format: file.kind, ggufVersion: file.version, fileBytes: file.bytes,
    name: typeof name === 'string' ? name : null, architecture: arch, supported: model !== null,
    ...(reason ? { unsupportedReason: reason } : {}),
    hyperparameters: hyper, tensors: { count: file.tensors.size, byType, list }, tokenizer, memory,
  };
}

function mib(b: number): string {
  return `${(b / 1048576).toFixed(2)} MiB`;
}

/** Register the `info` command. */
export function register(program: Command): void {
  program
    .command('info')
    .description('show a model\'s architecture, hyperparameters, tensors, tokenizer and memory needs')
    .option('-m, --model <path>', 'model file (GGUF or llama2.c checkpoint; default: the default model)')
    .option('--ctx <n>', 'context length for the memory estimate (default: the model\'s)')
    .option('--kv-type <type>', 'KV cache element type for the memory estimate: f32 (default) or f16')
    .option('--json', 'print one JSON object')
    .action((flags: InfoFlags) => {
      let ctx: number | undefined;
      if (flags.ctx !== undefined) {
        if (!/^\d+$/.test(flags.ctx) || Number(flags.ctx) <= 0) throw new InvalidOptionError(`--ctx must be a positive integer, got "${flags.ctx}"`);
        ctx = Number(flags.ctx);
      }
      const kvType = flags.kvType ?? 'f32';
      if (kvType !== 'f32' && kvType !== 'f16') throw new InvalidOptionError(`--kv-type must be "f32" or "f16", got "${kvType}"`);
      const info = modelInfo(openModelFile(resolveModelPath(flags.model)), ctx, kvType);
      if (flags.json) { process.stdout.write(JSON.stringify(info) + '\n'); return; }
      const out: string[] = [];
      out.push(`file:          ${info.path} (${info.format}${info.format === 'gguf' ? ` v${info.ggufVersion}` : ''}, ${mib(info.fileBytes)})`);
      if (info.name) out.push(`name:          ${info.name}`);
      out.push(`architecture:  ${info.architecture ?? '(none)'}${info.supported ? '' : `  [not runnable: ${info.unsupportedReason}]`}`);
      out.push('hyperparameters:');
      for (const [k, v] of Object.entries(info.hyperparameters)) out.push(`  ${k.padEnd(40)} ${v}`);
      out.push(`tensors:       ${info.tensors.count}`);
      for (const [t, e] of Object.entries(info.tensors.byType)) out.push(`  ${t.padEnd(8)} ${String(e.count).padStart(5)} tensors  ${mib(e.bytes)}`);
      const tk = info.tokenizer;
      out.push(`tokenizer:     ${tk.kind}${tk.tokens !== null ? `, ${tk.tokens} tokens` : ''}`);
      out.push(`  bos ${tk.bos ?? '-'}  eos ${tk.eos ?? '-'}  unk ${tk.unk ?? '-'}  pad ${tk.pad ?? '-'}  add_bos ${tk.addBos ?? '-'}`);
      out.push(`chat template: ${tk.chatTemplate ? 'yes' : 'no'}`);
      if (info.memory) {
        const mm = info.memory;
        out.push(`memory (ctx ${mm.ctx}): weights ${mib(mm.weightBytes)} + ${mm.kvType.toUpperCase()} KV cache ${mib(mm.kvCacheBytes)} + scratch ${mib(mm.scratchBytes)} = ${mib(mm.totalBytes)}`);
      }
      process.stdout.write(out.join('\n') + '\n');
    });
}
