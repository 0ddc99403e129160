/**
 * llama.cpp as the peer in side-by-side benchmarks: runs node-llama-cpp (pinned devDependency,
 * prebuilt CPU binary; never builds or downloads) in its own child process on one GGUF and
 * returns load time, prefill and decode speed and the child's peak RSS.
 */
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'llama-cpp-worker.mjs');

export interface LlamaCppRunOptions {
  modelPath: string;
  threads: number;
  /** Prompt token ids: all but the last are the prefill, decoding starts from the last. */
  tokens?: number[];
  /** Or a prompt text (tokenized by the model, BOS added). */
  prompt?: string;
  /** Greedy tokens to decode. */
  decode: number;
  contextSize?: number;
  /** Kill the child after this many ms (default 300000). */
  timeoutMs?: number;
  /** Run the child on this CPU only (taskset; see pinned()). */
  cpu?: number;
}

let tasksetOk: boolean | null = null;

/**
 * [command, args] for running `cmd args` on CPU `cpu` only (Linux taskset), or as it is when cpu is
 * undefined or taskset is missing. `compare --pin` runs both engines of a one-thread pair on the
 * same CPU: the vCPUs of a shared VM are not alike from minute to minute (bench/HISTORY.md, session 29).
 */
export function pinned(cpu: number | undefined, cmd: string, args: string[]): [string, string[]] {
  if (cpu === undefined) return [cmd, args];
  tasksetOk ??= spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  return tasksetOk ? ['taskset', ['-c', String(cpu), cmd, ...args]] : [cmd, args];
}

export interface LlamaCppResult {
  ok: true;
  /** Loading the native binary. */
  binaryMs: number;
  /** Model load + context creation. */
  loadMs: number;
  prefillTokens: number;
  prefillMs: number;
  decodeTokens: number;
  decodeMs: number;
  /** The greedy tokens decoded, and their text. */
  tokens: number[];
  text: string;
  threads: number;
  peakRssBytes: number;
  /** The process's RSS once the native binary was loaded, before the model (compare's `llama.cpp memory`). */
  baseRssBytes?: number;
  buildType: string;
}

/** The native binary could not be loaded on this machine (not a benchmark failure). */
export class LlamaCppUnavailableError extends Error {}

/** Run one measurement in a fresh child process. */
export function runLlamaCpp(opts: LlamaCppRunOptions): Promise<LlamaCppResult> {
  const { timeoutMs = 300_000, cpu, ...args } = opts;
  return new Promise((resolve, reject) => {
    const [cmd, argv] = pinned(cpu, process.execPath, [WORKER, JSON.stringify(args)]);
    const child = spawn(cmd, argv, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: 'true' },
    });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').reverse().find((l) => l.startsWith('@@RESULT@@'));
      if (!line) {
        reject(new Error(`node-llama-cpp worker gave no result (exit ${code ?? signal}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
        return;
      }
      const r = JSON.parse(line.slice('@@RESULT@@'.length)) as LlamaCppResult | { ok: false; kind: string; error: string };
      if (r.ok) resolve(r);
      else if (r.kind === 'binary') reject(new LlamaCppUnavailableError(`node-llama-cpp cannot load its binary here: ${r.error}`));
      else reject(new Error(`node-llama-cpp failed on ${opts.modelPath}: ${r.error}`));
    });
  });
}

/** Tokens per second. */
export const tokPerSec = (n: number, ms: number): number => (ms > 0 ? (n * 1000) / ms : 0);

// `node --import tsx bench/llama-cpp.ts MODEL [THREADS]`: one run, JSON on stdout.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [modelPath, threads = '1'] = process.argv.slice(2);
  if (!modelPath) {
    process.stderr.write('usage: node --import tsx bench/llama-cpp.ts MODEL.gguf [THREADS]\n');
    process.exitCode = 2;
  } else {
    const tokens = Array.from({ length: 129 }, (_, i) => (i === 0 ? 1 : 3 + ((i * 7919) % 250)));
    runLlamaCpp({ modelPath, threads: Number(threads), tokens, decode: 128 }).then((r) => {
      process.stdout.write(JSON.stringify({ ...r, tokens: undefined, prefillTokPerSec: tokPerSec(r.prefillTokens, r.prefillMs), decodeTokPerSec: tokPerSec(r.decodeTokens, r.decodeMs) }, null, 2) + '\n');
    }, (e: Error) => { process.stderr.write(e.message + '\n'); process.exitCode = 1; });
  }
}
