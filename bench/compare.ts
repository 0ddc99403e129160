/**
 * The side-by-side benchmark: tokenloop vs llama.cpp (node-llama-cpp, prebuilt CPU binary) on
 * stories260K and synthesized Llama shapes (15M, 110M; 1B with --models 1B) in F32, F16, Q8_0 and Q4_0.
 *
 * Each measurement runs in a fresh child process per engine (so load time and peak RSS are the
 * engine's own): prefill of N tokens in one call, then N greedy decode steps. Engines alternate
 * within each repetition (order swapped every repetition); repetitions run in rounds over all the
 * cells (a cell's runs a round apart); the table reports medians.
 * Memory bandwidth is measured too, and tokenloop's decode speed is put against the bandwidth
 * roofline: weight bytes read per token × tokens/s ÷ bandwidth.
 *
 * Models are generated on first use into bench/models/ (git-ignored) with `synth`/`quantize`.
 * Usage: node --import tsx bench/compare.ts [--quick] [--models stories260K,15M,110M,1B]
 *   [--types F32,F16,Q8_0,Q4_0] [--threads 1,2] [--runs 5] [--tokens 128] [--kv-type f16|f32] [--pin] [--out FILE]
 * (--pin: both engines' one-thread processes of a round on the same CPU, helper threads included;
 * by default they run where the scheduler puts them, as a user's process does.)
 * (--types also takes Q4_K and Q6_K, written by `quantize` from the F32 model; use them with 110M or 1B.)
 * Both engines keep an f16 KV cache by default here (llama.cpp's default type; tokenloop's library
 * default is f32, `--kv-type f32` measures that). `--tokens N` sets both the prompt and the number of
 * decoded tokens (N = 1000: long-context decode, positions 1000–2000).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openGGUFSource } from '../src/tools/gguf-source.js';
import { quantizeFile } from '../src/tools/quantize.js';
import { synthFile } from '../src/tools/synth.js';
import { idleWorkerBytes } from './idle-worker.js';
import { measureBandwidth } from './bandwidth.js';
import { pinned, runLlamaCpp, tokPerSec, type LlamaCppResult } from './llama-cpp.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '..');
const SHARED = process.env['TOKENLOOP_SHARED'] ?? resolve(REPO, '..', 'shared');
const MODELS_DIR = join(HERE, 'models');
const VOCAB = join(SHARED, 'reference', 'tokenizer', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');

/** A synthesized model's shape (`tokenloop synth` options). */
export interface BenchShape { dim: number; layers: number; heads: number; kvHeads: number; hidden: number }

/** Model shapes the benchmark knows (llama2.c's stories models; the synthetic ones share their shapes). */
const SHAPES: Record<string, BenchShape | null> = {
  stories260K: null, // the real model from ../shared
  '15M': { dim: 288, layers: 6, heads: 6, kvHeads: 6, hidden: 768 },
  '110M': { dim: 768, layers: 12, heads: 12, kvHeads: 12, hidden: 2048 },
  // TinyLlama 1.1B's shape (tied embeddings here): grouped-query attention, 8 query heads per KV
  // head, and rows of 2048 and 5632 values, as 1-8B models have. Not in the default run: its F32
  // file is 3.9 GiB (it still fits wasm32's 4 GiB) and a full run of it takes about 20 minutes.
  '1B': { dim: 2048, layers: 22, heads: 32, kvHeads: 4, hidden: 5632 },
};
/** The models of a run without --models. */
export const DEFAULT_MODELS = ['stories260K', '15M', '110M'];
const TYPES = ['F32', 'F16', 'Q8_0', 'Q4_0'];
/** Also accepted by --types (not in the default run): the K-quants real downloads use (rows must be whole 256-value super-blocks: 110M, 1B). */
const MORE_TYPES = ['Q4_K', 'Q6_K'];

/** One engine's measurement. */
interface Run {
  ok: boolean; error?: string;
  loadMs: number; prefillTokens: number; prefillMs: number; decodeTokens: number; decodeMs: number;
  tokens: number[]; threads: number; peakRssBytes: number;
  /** llama.cpp only: loading node-llama-cpp's native binary (not part of loadMs). */
  binaryMs?: number;
  /**
   * The process's RSS before loading (llama.cpp: once its native binary is loaded), and (tokenloop's
   * worker reports them; a llama.cpp run is given its cell's) the model file's size and the KV
   * cache's bytes for the requested context (memoryShare).
   */
  baseRssBytes?: number; fileBytes?: number; cacheBytes?: number;
}

/** The synthesized shape of `model` (null: stories260K, the real model); throws for an unknown name. */
export function benchShape(model: string): BenchShape | null {
  const shape = SHAPES[model];
  if (shape === undefined) throw new Error(`unknown model "${model}" (known: ${Object.keys(SHAPES).join(', ')})`);
  return shape;
}

/** Path of `model` in `type`, generating it (and its F32 source) on first use. */
export function ensureModel(model: string, type: string, log: (s: string) => void = () => {}): string {
  mkdirSync(MODELS_DIR, { recursive: true });
  const shape = benchShape(model);
  const source = shape === null ? join(SHARED, 'models', 'stories260K', 'stories260K.gguf') : join(MODELS_DIR, `synth-${model}-F32.gguf`);
  if (shape !== null && !existsSync(source)) {
    log(`generating ${source}`);
    // A private temporary name, renamed into place: concurrent runs never see half a file.
    const tmp = `${source}.${process.pid}.tmp`;
    synthFile(tmp, { ...shape, ctx: 2048, seed: 1, vocabFile: VOCAB, type: 'F32' });
    renameSync(tmp, source);
  }
  if (type === 'F32') return source;
  const out = join(MODELS_DIR, `${shape === null ? 'stories260K' : 'synth-' + model}-${type}.gguf`);
  if (!existsSync(out)) {
    log(`generating ${out}`);
    const tmp = `${out}.${process.pid}.tmp`;
    quantizeFile(source, tmp, type);
    renameSync(tmp, out);
  }
  return out;
}

/** Weight bytes a decode step reads: every tensor, except that an untied token_embd is read one row at a time. */
export function bytesPerToken(path: string): number {
  const src = openGGUFSource(path);
  try {
    let total = 0;
    const tied = !src.tensors.has('output.weight');
    for (const t of src.tensors.values()) {
      if (t.name === 'token_embd.weight' && !tied) total += t.byteLength / (t.dims[1] ?? 1);
      else total += t.byteLength;
    }
    return total;
  } finally {
    src.close();
  }
}

/** One tokenloop measurement in a fresh child process (tokenloop-worker.ts). */
export function runTokenloop(modelPath: string, threads: number, tokens: number[], decode: number, kvType: string, cpu?: number): Promise<Run> {
  return new Promise((res) => {
    const [cmd, argv] = pinned(cpu, process.execPath, ['--import', 'tsx', join(HERE, 'tokenloop-worker.ts'), JSON.stringify({ modelPath, threads, tokens, decode, kvType })]);
    const child = spawn(cmd, argv, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    child.on('close', (code) => {
      const line = out.split('\n').reverse().find((l) => l.startsWith('@@RESULT@@'));
      if (!line) { res(failed(`worker exited ${code}: ${err.trim().split('\n').slice(-2).join(' | ')}`)); return; }
      const r = JSON.parse(line.slice(10)) as Run;
      res(r.ok ? r : failed(r.error ?? 'failed'));
    });
  });
}

async function runPeer(modelPath: string, threads: number, tokens: number[], decode: number, cpu?: number): Promise<Run> {
  try {
    const r: LlamaCppResult = await runLlamaCpp({ modelPath, threads, tokens, decode, cpu });
    return { ...r, ok: true };
  } catch (e) {
    return failed(e instanceof Error ? e.message : String(e));
  }
}

function failed(error: string): Run {
  return { ok: false, error, loadMs: NaN, prefillTokens: 0, prefillMs: NaN, decodeTokens: 0, decodeMs: NaN, tokens: [], threads: 0, peakRssBytes: NaN };
}

const median = (xs: number[]): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Summary { ok: boolean; error?: string; loadMs: number; binaryMs: number; prefill: number; decode: number; rssMiB: number; memory: number; memoryLessWorkers: number; threads: number; tokens: number[] }

/** `workerBytes`: what one idle Node worker thread costs (idleWorkerBytes), for memoryLessWorkers. */
function summarize(runs: Run[], workerBytes = NaN): Summary {
  const ok = runs.filter((r) => r.ok);
  if (ok.length === 0) return { ok: false, error: runs[0]?.error ?? 'no runs', loadMs: NaN, binaryMs: NaN, prefill: NaN, decode: NaN, rssMiB: NaN, memory: NaN, memoryLessWorkers: NaN, threads: 0, tokens: [] };
  return {
    ok: true,
    loadMs: median(ok.map((r) => r.loadMs)),
    binaryMs: median(ok.map((r) => r.binaryMs ?? NaN)),
    prefill: median(ok.map((r) => tokPerSec(r.prefillTokens, r.prefillMs))),
    decode: median(ok.map((r) => tokPerSec(r.decodeTokens, r.decodeMs))),
    rssMiB: median(ok.map((r) => r.peakRssBytes / 1048576)),
    memory: median(ok.map(memoryShare)),
    memoryLessWorkers: median(ok.map((r) => memoryShare(r, r.threads > 1 ? (r.threads - 1) * workerBytes : 0))),
    threads: ok[0]!.threads,
    tokens: ok[0]!.tokens,
  };
}

/**
 * What a run's engine added to its process's memory, against what it has to hold: (peak RSS −
 * the RSS before loading − `runtimeBytes`) ÷ (model file + KV cache). NaN when the run does not
 * report them. `runtimeBytes`: a further share of the runtime's own to leave out (the idle cost of
 * the run's worker threads, for compare's `less idle workers` column).
 */
export function memoryShare(r: Pick<Run, 'peakRssBytes' | 'baseRssBytes' | 'fileBytes' | 'cacheBytes'>, runtimeBytes = 0): number {
  if (r.baseRssBytes === undefined || r.fileBytes === undefined || r.cacheBytes === undefined) return NaN;
  return (r.peakRssBytes - r.baseRssBytes - runtimeBytes) / (r.fileBytes + r.cacheBytes);
}

/** Prompt ids: BOS (1) then a fixed spread over the vocabulary (ids ≥ 3 skip unk/bos/eos). */
export function benchTokens(n: number, nVocab: number): number[] {
  return Array.from({ length: n + 1 }, (_, i) => (i === 0 ? 1 : 3 + ((i * 7919) % (nVocab - 3))));
}

function vocabSize(path: string): number {
  const src = openGGUFSource(path);
  try { return src.tensors.get('token_embd.weight')!.dims[1]!; } finally { src.close(); }
}

const f = (x: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? (a / b).toFixed(2) + '×' : '–');
/** A multiple (a memory share) as a table cell. */
const timesCell = (x: number) => (Number.isFinite(x) ? x.toFixed(2) + '×' : '–');

/** Run the benchmark; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      models: { type: 'string' }, types: { type: 'string' }, threads: { type: 'string' },
      runs: { type: 'string' }, tokens: { type: 'string' }, out: { type: 'string' },
      'no-peer': { type: 'boolean', default: false },
      pin: { type: 'boolean', default: false },
      'kv-type': { type: 'string', default: 'f16' },
    },
  });
  const list = (s: string | undefined, dflt: string[]) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : dflt);
  const quick = values.quick!;
  const models = list(values.models, quick ? ['stories260K', '15M'] : DEFAULT_MODELS);
  const types = list(values.types, quick ? ['F32', 'Q8_0'] : TYPES);
  const threadList = list(values.threads, quick ? ['1'] : ['1', '2']).map(Number);
  // Five runs by default: on the bench VM a one-thread process draws a slow or a fast vCPU for
  // minutes at a time (bench/HISTORY.md, session 29), and with three runs two slow draws of one
  // engine set the median (session 30's first full run: 110M F32 decode 45.7, 45.1 and 57.7 tok/s);
  // with five it takes three.
  const runs = Number(values.runs ?? (quick ? 1 : 5));
  const nTok = Number(values.tokens ?? (quick ? 32 : 128));
  const outPath = values.out ?? join(HERE, 'results', 'latest.md');
  const kvType = values['kv-type']!;
  if (kvType !== 'f16' && kvType !== 'f32') { process.stderr.write(`--kv-type takes f16 or f32, got "${kvType}"\n`); return 2; }
  for (const m of models) if (!(m in SHAPES)) { process.stderr.write(`unknown model "${m}" (known: ${Object.keys(SHAPES).join(', ')})\n`); return 2; }
  for (const t of types) if (![...TYPES, ...MORE_TYPES].includes(t)) { process.stderr.write(`unknown type "${t}" (known: ${[...TYPES, ...MORE_TYPES].join(', ')})\n`); return 2; }
  if (threadList.some((t) => !Number.isInteger(t) || t < 1) || !Number.isInteger(runs) || runs < 1 || !Number.isInteger(nTok) || nTok < 1) {
    process.stderr.write('--threads, --runs and --tokens take positive integers\n');
    return 2;
  }
  const log = (s: string) => process.stderr.write(s + '\n');

  // Bandwidth is measured right before and right after every tokenloop run: on a shared (virtual)
  // machine it drifts by tens of percent within minutes, and a roofline share is only meaningful
  // against the bandwidth available while that run decoded. Each run's share is its decode speed
  // against the mean of its two measurements; the row reports the median share and bandwidth.
  const seen = new Map<number, number[]>();
  const bandwidth = async (t: number): Promise<number> => {
    const v = (await measureBandwidth(t, 128, 2)).bytesPerSec;
    (seen.get(t) ?? seen.set(t, []).get(t)!).push(v);
    return v;
  };
  const gb = (v: number) => (v / 1e9).toFixed(1);

  // Rounds: each round runs every cell (model × type × threads) once, both engines, so a cell's
  // runs are a round apart (about 3 minutes in the default run). This host has slow phases of a
  // minute or two that hit one engine's process and not the other's; with a cell's runs back to
  // back one such phase took all of them (and the median), spread over the rounds it takes one.
  interface Cell { model: string; type: string; threads: number; path: string; tokens: number[]; bpt: number; tl: Run[]; lc: Run[]; shares: number[]; bws: number[] }
  const cells: Cell[] = [];
  for (const model of models) {
    for (const type of types) {
      const path = ensureModel(model, type, log);
      const tokens = benchTokens(nTok, vocabSize(path));
      const bpt = bytesPerToken(path);
      for (const threads of threadList) cells.push({ model, type, threads, path, tokens, bpt, tl: [], lc: [], shares: [], bws: [] });
    }
  }
  for (let r = 0; r < runs; r++) {
    for (const c of cells) {
      const { path, threads, tokens } = c;
      // one thread: both engines of this round on the same CPU, the CPU changing round by round
      const cpu = threads === 1 && values.pin ? r % availableParallelism() : undefined;
      const ours = async () => {
        const before = await bandwidth(threads);
        const run = await runTokenloop(path, threads, tokens, nTok, kvType, cpu);
        c.tl.push(run);
        if (!run.ok) return;
        // with the threads tokenloop actually used (it never uses more than the cores)
        const bw = run.threads === threads ? (before + (await bandwidth(threads))) / 2 : await bandwidth(run.threads);
        c.bws.push(bw);
        c.shares.push((c.bpt * tokPerSec(run.decodeTokens, run.decodeMs)) / bw);
      };
      // alternate which engine goes first, so drift (thermal, neighbours) hits both alike
      if (r % 2 === 0) { await ours(); if (!values['no-peer']) c.lc.push(await runPeer(path, threads, tokens, nTok, cpu)); }
      else { if (!values['no-peer']) c.lc.push(await runPeer(path, threads, tokens, nTok, cpu)); await ours(); }
      const t = c.tl[c.tl.length - 1], l = c.lc[c.lc.length - 1];
      const rate = (x: Run | undefined) => (x?.ok ? `${f(tokPerSec(x.prefillTokens, x.prefillMs))} / ${f(tokPerSec(x.decodeTokens, x.decodeMs), 1)} tok/s` : x ? 'failed' : '–');
      log(`round ${r + 1}/${runs} ${c.model} ${c.type} ${c.threads}T${cpu === undefined ? '' : ` (CPU ${cpu})`}: tokenloop ${rate(t)}, llama.cpp ${rate(l)} (prefill / decode)`);
    }
  }

  // the runtime's cost of one idle worker thread, measured in fresh processes after the runs (a
  // failed probe leaves its column empty rather than losing the runs)
  let workerBytes = NaN;
  if (threadList.some((t) => t > 1)) {
    try { workerBytes = idleWorkerBytes(); } catch (e) { log(`idle worker probe: ${e instanceof Error ? e.message : String(e)}`); }
  }
  const rows: string[] = [];
  const binaryLoads: number[] = [];
  for (const c of cells) {
    const { model, type, threads, tl, lc, shares, bws } = c;
    // llama.cpp's memory share against the same file + the KV cache of the same context (its own
    // cache may be larger: it rounds the context up)
    const sized = tl.find((r) => r.ok && r.fileBytes !== undefined && r.cacheBytes !== undefined);
    if (sized) for (const r of lc) if (r.ok) { r.fileBytes = sized.fileBytes; r.cacheBytes = sized.cacheBytes; }
    const a = summarize(tl, workerBytes), b = values['no-peer'] ? summarize([failed('skipped (--no-peer)')]) : summarize(lc);
    if (b.ok) binaryLoads.push(b.binaryMs);
    const share = shares.length ? median(shares) : NaN, bwRow = bws.length ? median(bws) : NaN;
    const agree = a.ok && b.ok ? a.tokens.findIndex((t, i) => t !== b.tokens[i]) : -2;
    const agreeCell = agree === -2 ? '–' : agree === -1 ? `${a.tokens.length}/${a.tokens.length}` : `first ${agree}`;
    const note = [!a.ok ? `tokenloop: ${a.error}` : '', !b.ok ? `llama.cpp: ${b.error}` : '', a.ok && a.threads !== threads ? `tokenloop used ${a.threads} thread(s)` : ''].filter(Boolean).join('; ');
    const row = `| ${model} | ${type} | ${threads} | ${f(a.loadMs)} / ${f(b.loadMs)} | ${f(a.prefill)} / ${f(b.prefill)} | ${ratio(a.prefill, b.prefill)} | ${f(a.decode, 1)} / ${f(b.decode, 1)} | ${ratio(a.decode, b.decode)} | ${f(a.rssMiB)} / ${f(b.rssMiB)} | ${Number.isFinite(share) ? (share * 100).toFixed(1) + '%' : '–'} | ${gb(bwRow)} | ${agreeCell} | ${note.replace(/\|/g, '/')} | ${timesCell(a.memory)} | ${timesCell(b.memory)} | ${timesCell(a.memoryLessWorkers)} |`;
    rows.push(row);
    log(row);
  }

  const nlcVersion = (() => {
    try { return (JSON.parse(readFileSync(join(REPO, 'node_modules', 'node-llama-cpp', 'package.json'), 'utf8')) as { version: string }).version; } catch { return 'not installed'; }
  })();
  const md = [
    '# tokenloop vs llama.cpp (node-llama-cpp) — CPU',
    '',
    `Generated by \`bench/compare.ts${argv.length ? ' ' + argv.join(' ') : ''}\` on ${new Date().toISOString().slice(0, 10)}.`,
    `Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores; Node ${process.version}; node-llama-cpp ${nlcVersion} (prebuilt llama.cpp CPU binary).`,
    `Memory read bandwidth (wasm SIMD stream), measured before and after every tokenloop run: ${threadList.map((t) => { const v = seen.get(t) ?? [0]; return `${t} thread(s) ${gb(Math.min(...v))}–${gb(Math.max(...v))} GB/s`; }).join(', ')}.`,
    '',
    `Each cell: tokenloop / llama.cpp, median of ${runs} run(s), each engine in its own fresh process, runs alternated; in rounds (each round runs every cell once), so a cell's runs are a round apart.${values.pin ? ' One-thread runs (--pin): both engines of a round on the same CPU (taskset), CPU = round mod cores.' : ''}`,
    `KV cache: ${kvType} in tokenloop, f16 in llama.cpp (its default).`,
    `Prefill: ${nTok} tokens in one call. Decode: ${nTok} greedy steps after it. Load: file → ready to run (llama.cpp: model + context; loading node-llama-cpp's native binary took a further ${f(median(binaryLoads))} ms per process, median, and is left out).`,
    'Peak RSS of the whole process (tokenloop runs TypeScript through tsx, which adds its own baseline). Column `tokenloop memory`: tokenloop\'s peak RSS minus the process\'s RSS before loading, ÷ (model file + KV cache), median over the runs. Column `llama.cpp memory`: the same for llama.cpp, its baseline taken once node-llama-cpp\'s native binary is loaded, against the same file and KV cache size.' + (Number.isFinite(workerBytes) ? ` Column \`tokenloop memory less idle workers\`: the same as \`tokenloop memory\` less ${(workerBytes / 1048576).toFixed(1)} MiB per worker thread (threads − 1: the calling thread is the first), what one idle Node worker thread (nothing loaded, parked in Atomics.wait) adds to a fresh process's RSS, median of 5 (bench/idle-worker.ts).` : ''),
    'Roofline: tokenloop decode tok/s × weight bytes read per token ÷ the bandwidth measured just before and after that run (mean of the two), median over the runs; column `bandwidth GB/s`: the median of those bandwidths.',
    'Greedy: how many decoded tokens agree between the engines (`first k`: they part at step k).',
    '',
    '| model | type | threads | load ms | prefill tok/s | prefill ratio | decode tok/s | decode ratio | peak RSS MiB | tokenloop roofline | bandwidth GB/s | greedy | notes | tokenloop memory | llama.cpp memory | tokenloop memory less idle workers |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Ratios are tokenloop ÷ llama.cpp (above 1× means tokenloop is faster).',
    '',
  ].join('\n');
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(outPath, md);
  process.stdout.write(md);
  log(`wrote ${outPath}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e: unknown) => { process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`); process.exitCode = 1; });
}
