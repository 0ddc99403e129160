/**
 * Generation benchmark on one model through the public generate() API: prefill and decode
 * tokens/s and ms/token, median of several runs. Default: the default model (stories260K).
 *   node --import tsx bench/generation.ts [--model PATH] [--prompt-tokens N] [--tokens N] [--runs N]
 */
import { parseArgs } from 'node:util';
import { generateText } from '../src/generate/generate.js';
import { loadLanguageModel } from '../src/generate/language-model.js';
import { resolveModelPath } from '../src/cli/resolve-model.js';

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: {
    model: { type: 'string' }, 'prompt-tokens': { type: 'string', default: '128' }, tokens: { type: 'string', default: '128' }, runs: { type: 'string', default: '5' },
  } });
  const path = resolveModelPath(values.model);
  const nPrompt = Number(values['prompt-tokens']), nGen = Number(values.tokens), runs = Number(values.runs);
  const lm = loadLanguageModel({ model: path });
  // A fixed, deterministic prompt of nPrompt ids: BOS then ordinary tokens cycling through the vocabulary.
  const prompt = [lm.tokenizer.bos ?? 1, ...Array.from({ length: nPrompt - 1 }, (_, i) => 300 + ((i * 7) % Math.max(1, lm.model.config.nVocab - 300)))];
  const res = [];
  // untimed runs first: V8 optimizes a function only after it has run a while, and a prefill's
  // code (TypeScript per-token loops and kernels alike) runs once per call: on the default model
  // prefill settles after ~10 calls (4k–35k tok/s before, ~58k after)
  const warm = 10;
  for (let r = 0; r < runs + warm; r++) {
    const d = await generateText(lm, prompt, { temperature: 0, maxTokens: nGen, stopAtEndOfGeneration: false });
    if (r >= warm) res.push(d.timings);
  }
  const prefill = median(res.map((t) => t.prefillTokensPerS));
  const decode = median(res.map((t) => t.decodeTokensPerS));
  const ms = median(res.map((t) => t.msPerToken));
  console.log(`generation benchmark: ${path}`);
  console.log(`  load ${lm.loadMs.toFixed(1)} ms, ${(lm.file.bytes / 1e6).toFixed(2)} MB; prompt ${nPrompt} tokens, ${nGen} generated, median of ${runs} runs`);
  console.log(`  prefill: ${prefill.toFixed(1)} tokens/s`);
  console.log(`  decode:  ${decode.toFixed(1)} tokens/s (${ms.toFixed(3)} ms/token)`);
  return 0;
}

if (process.argv[1]?.endsWith('generation.ts')) main(process.argv.slice(2)).then((c) => { process.exitCode = c; });
