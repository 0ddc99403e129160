/**
 * `npm run bench -- ab --base DIR [--model 110M|stories260K|PATH] [--type Q4_0] [--threads 1]
 * [--rounds 12] [--steps 32]`: this checkout against another checkout of tokenloop (DIR: its
 * repository root, with node_modules and its kernels built, e.g. `git worktree add /tmp/base
 * <commit>`, a symlinked node_modules and `node scripts/build-wasm.mjs` there), end to end in one
 * process. Both load the same model file through their own sources and kernel builds; each round
 * runs a 127-token prefill and `steps` greedy decode steps on each, in alternating order. On a
 * shared machine whose speed drifts by tens of percent within minutes, only such interleaved runs
 * in one process resolve changes of a few percent (separate processes minutes apart do not).
 * Prints the medians, their ratios and whether the two produced the same tokens.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Model } from '../src/model/model.js';
import { ensureModel } from './compare.js';

const REPO = join(fileURLToPath(new URL('.', import.meta.url)), '..');

/** A model loaded through one checkout's sources (the other checkout's Model has the same shape). */
type Engine = Model & { label: string; dispose?(): void };

/** Load `path` through the sources of the checkout at `root`. */
async function loadFrom(root: string, path: string, threads: number): Promise<Engine> {
  const src = (p: string) => join(root, 'src', p);
  for (const p of ['format/open.ts', 'model/registry.ts', 'model/kernels/wasm/select.ts']) {
    if (!existsSync(src(p))) throw new Error(`${root} is not a tokenloop checkout (no src/${p})`);
  }
  if (!existsSync(join(root, 'build', 'tokenloop-kernels.wasm'))) throw new Error(`${root} has no built kernels (run \`node scripts/build-wasm.mjs\` there)`);
  const { openModelFile } = await import(src('format/open.ts'));
  const { loadModel } = await import(src('model/registry.ts'));
  const { modelAllocator } = await import(src('model/kernels/wasm/select.ts'));
  const file = openModelFile(path, { allocate: modelAllocator({ threads }) });
  const model = loadModel(file, { threads, kvType: 'f16', batchSize: 128 }) as Engine;
  return Object.assign(model, { label: root });
}

function argmax(x: Float32Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i]! > x[best]!) best = i;
  return best;
}

const median = (a: number[]) => { const s = a.slice().sort((p, q) => p - q); return s[s.length >> 1]!; };

/** Run the A/B; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      base: { type: 'string' }, model: { type: 'string', default: '110M' }, type: { type: 'string', default: 'Q4_0' },
      threads: { type: 'string', default: '1' }, rounds: { type: 'string', default: '12' }, steps: { type: 'string', default: '32' },
    },
  });
  if (!values.base) { process.stderr.write('ab: --base DIR (another tokenloop checkout) is required\n'); return 2; }
  const threads = Number(values.threads), rounds = Number(values.rounds), steps = Number(values.steps);
  if (![threads, rounds, steps].every((v) => Number.isInteger(v) && v >= 1)) {
    process.stderr.write('ab: --threads, --rounds and --steps take positive integers\n');
    return 2;
  }
  const m = values.model!;
  const path = m === '110M' || m === '15M' || m === 'stories260K' ? ensureModel(m, values.type!, (s) => process.stderr.write(s + '\n')) : resolve(m);
  if (!existsSync(path)) { process.stderr.write(`ab: no model file ${path}\n`); return 2; }
  const base = isAbsolute(values.base) ? values.base : resolve(values.base);
  let engines: Engine[];
  try {
    engines = [await loadFrom(base, path, threads), await loadFrom(REPO, path, threads)];
  } catch (e) {
    process.stderr.write(`ab: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  // ids inside every model's vocabulary (stories260K has 512 tokens)
  const nVocab = engines[0]!.config.nVocab;
  const prompt = Array.from({ length: 127 }, (_, i) => (100 + ((i * 37) % 3000)) % nVocab);
  const prefill: number[][] = [[], []], decode: number[][] = [[], []];
  const tokens: number[][] = [[], []];
  try {
    for (let r = 0; r < rounds; r++) {
      for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const e = engines[i]!;
        const cache = e.createCache(prompt.length + steps + 2);
        const t0 = performance.now();
        let tok = argmax(e.forward(prompt, cache));
        const t1 = performance.now();
        const seq: number[] = [];
        for (let s = 0; s < steps; s++) { tok = argmax(e.forward([tok], cache, { reuseLogits: true })); seq.push(tok); }
        const t2 = performance.now();
        prefill[i]!.push(prompt.length / (t1 - t0) * 1000);
        decode[i]!.push(steps / (t2 - t1) * 1000);
        tokens[i] = seq;
      }
    }
  } finally {
    for (const e of engines) e.dispose?.();
  }
  const row = (i: number, name: string) => `${name.padEnd(5)} prefill ${median(prefill[i]!).toFixed(1)} tok/s, decode ${median(decode[i]!).toFixed(1)} tok/s  (${engines[i]!.label})`;
  console.log(`${path}, ${threads} thread(s), ${rounds} rounds of a ${prompt.length}-token prefill and ${steps} decode steps`);
  console.log(row(0, 'base'));
  console.log(row(1, 'this'));
  const perRound = decode[1]!.map((d, k) => (d / decode[0]![k]!).toFixed(3)).join(' ');
  console.log(`this ÷ base: prefill ${(median(prefill[1]!) / median(prefill[0]!)).toFixed(3)}, decode ${(median(decode[1]!) / median(decode[0]!)).toFixed(3)} (per round: ${perRound})`);
  // the best round of each: on a host whose interference comes in bursts, the fastest run is the
  // steadiest estimate of what the code itself costs (medians still move with the bursts)
  const best = (a: number[]) => Math.max(...a);
  console.log(`best rounds: prefill ${(best(prefill[1]!) / best(prefill[0]!)).toFixed(3)}, decode ${(best(decode[1]!) / best(decode[0]!)).toFixed(3)} (prefill per round: ${prefill[1]!.map((p, k) => (p / prefill[0]![k]!).toFixed(3)).join(' ')})`);
  console.log(`greedy tokens ${tokens[0]!.join(',') === tokens[1]!.join(',') ? 'identical' : 'differ'}`);
  return 0;
}
