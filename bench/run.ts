/**
 * `npm run bench [-- SUITE [ARGS...]]`. Suites:
 *   generation  prefill/decode tokens/s and ms/token of the default model (or --model PATH)
 *   compare     side by side with llama.cpp (node-llama-cpp): stories260K, 15M and 110M shapes × F32/F16/Q8_0/Q4_0
 *   tokenizer   encode MB/s against Hugging Face tokenizers
 *   kernels     matrix-vector GFLOP/s and GB/s, JS vs WebAssembly
 *   attention   decode attention µs/token and cache GB/s, f32 and f16 KV caches
 *   ab          this checkout against another one (--base DIR), end to end in one process
 * With no suite: generation, then compare.
 */
const SUITES: Record<string, string> = {
  generation: './generation.js', compare: './compare.js', tokenizer: './tokenizer.js', kernels: './kernels.js', attention: './attention.js',
  ab: './ab.js',
};

async function runSuite(name: string, args: string[]): Promise<number> {
  const file = SUITES[name];
  if (!file) {
    process.stderr.write(`unknown benchmark suite "${name}" (known: ${Object.keys(SUITES).join(', ')})\n`);
    return 2;
  }
  const mod = (await import(file)) as { main(argv: string[]): Promise<unknown> };
  const result = await mod.main(args);
  return typeof result === 'number' ? result : 0; // suites that print a table return their rows

}

const [first, ...rest] = process.argv.slice(2);
let code = 0;
if (first === undefined || first.startsWith('-')) {
  code = await runSuite('generation', []);
  if (code === 0) code = await runSuite('compare', first === undefined ? [] : [first, ...rest]);
} else {
  code = await runSuite(first, rest);
}
process.exitCode = code;
