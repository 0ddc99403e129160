/**
 * Child process for bench/compare.ts: runs tokenloop on one model and prints one result line
 * `@@RESULT@@{json}`, measured exactly like bench/llama-cpp-worker.mjs (prefill = the prompt minus
 * its last token in one forward call; decoding starts from the last prompt token, greedy).
 * Input: argv[2] = JSON { modelPath, threads, tokens: number[], decode: number, kvType?: 'f32' | 'f16' }.
 */
import { statSync } from 'node:fs';
import { openModelFile } from '../src/format/open.js';
import { loadModel, type LoadModelOptions } from '../src/model/registry.js';
import { modelOpenOptions } from '../src/model/kernels/wasm/select.js';
import type { Model } from '../src/model/model.js';

interface Input { modelPath: string; threads: number; tokens: number[]; decode: number; kvType?: 'f32' | 'f16' }

const print = (o: unknown) => process.stdout.write('@@RESULT@@' + JSON.stringify(o) + '\n');

/**
 * Load through the public API. `threads` is passed along for a model that takes it (the
 * multi-threaded backend); `threadsUsed` reports what the model says it uses (1 when it does not say).
 */
function load(path: string, threads: number, kvType: 'f32' | 'f16', batchSize: number): { model: Model; threadsUsed: number } {
  const file = openModelFile(path, modelOpenOptions({ threads }));
  const opts = { threads, kvType, batchSize } as LoadModelOptions & { threads: number };
  const model = loadModel(file, opts);
  const used = (model as unknown as { threads?: unknown }).threads;
  return { model, threadsUsed: typeof used === 'number' ? used : 1 };
}

function argmax(x: Float32Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i]! > x[best]!) best = i;
  return best;
}

function main(): void {
  const o = JSON.parse(process.argv[2] ?? '{}') as Input;
  const baseRssBytes = process.memoryUsage().rss;
  const t0 = performance.now();
  // the batch size llama-cpp-worker.mjs gives its context (both engines size their activation
  // memory by it when the context/cache is made, inside the load time)
  const { model, threadsUsed } = load(o.modelPath, o.threads, o.kvType ?? 'f32', Math.max(o.tokens.length, 32));
  const cache = model.createCache(o.tokens.length + o.decode + 1);
  const t1 = performance.now();
  model.forward(o.tokens.slice(0, -1), cache);
  const t2 = performance.now();
  const out: number[] = [];
  let tok = o.tokens[o.tokens.length - 1]!;
  for (let i = 0; i < o.decode; i++) {
    tok = argmax(model.forward([tok], cache, { reuseLogits: true }));
    out.push(tok);
  }
  const t3 = performance.now();
  print({
    ok: true, loadMs: t1 - t0, prefillTokens: o.tokens.length - 1, prefillMs: t2 - t1,
    decodeTokens: out.length, decodeMs: t3 - t2, tokens: out, threads: threadsUsed,
    weightBytes: model.weightBytes, baseRssBytes, peakRssBytes: process.resourceUsage().maxRSS * 1024,
    fileBytes: statSync(o.modelPath).size, cacheBytes: cache.capacityBytes,
  });
  (model as unknown as { dispose?: () => void }).dispose?.();
}

try {
  main();
} catch (e) {
  print({ ok: false, error: e instanceof Error ? e.message : String(e) });
  process.exitCode = 1;
}
