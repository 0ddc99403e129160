/**
 * `tokenloop inspect [-m MODEL] [-n MAX_NEW_TOKENS] [--temperature T] [--top-k K] [--top-p P]
 *   [--min-p P] [--typical-p P] [--repetition-penalty R] [--presence-penalty P] [--frequency-penalty F]
 *   [--seed S] [--top K] [--json] PROMPT`
 *
 * Runs the generation loop with a tracer (src/inspect/trace.ts) and prints each step: position,
 * chosen token, its raw probability and rank, the probability it had where it was sampled, how
 * many candidates survive each stage of the chain, the KV cache, and the top-K raw candidates.
 * `--json` prints the whole trace as one JSON object (every stage's top-K too).
 * Sampling defaults are generate's (llama.cpp's); -n defaults to 16.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { formatTraceTable } from '../inspect/format-table.js';
import { MAX_TRACE_TOP, traceGeneration, type TraceOptions } from '../inspect/trace.js';
import { samplingFromFlags, withSamplingFlags, type SamplingFlags } from './sampling-flags.js';
import { loadFromFlags, withModelFlags, type ModelFlags } from './model-flags.js';
import { parseInteger } from './parse-args.js';

interface InspectFlags extends ModelFlags, SamplingFlags {
  maxTokens: number;
  seed?: number;
  top: number;
  json?: boolean;
}

function parseTop(v: string): number {
  const n = parseInteger(v);
  if (n < 1 || n > MAX_TRACE_TOP) throw new InvalidArgumentError(`expected an integer in [1, ${MAX_TRACE_TOP}], got "${v}"`);
  return n;
}

/** Register the `inspect` command. */
export function register(program: Command): void {
  withSamplingFlags(withModelFlags(program
    .command('inspect')
    .description('show each step of the generation loop: logits → probabilities → filtered candidates → chosen token, cache growth')
    .argument('<prompt>', 'the prompt text (use -- before a prompt that starts with "-")'))
    .option('-n, --max-tokens <n>', 'maximum new tokens', parseInteger, 16))
    .option('--seed <s>', 'random seed (default: random, shown in the header)', parseInteger)
    .option('--top <k>', `candidates listed per step (1-${MAX_TRACE_TOP})`, parseTop, 5)
    .option('--json', 'print the whole trace as one JSON object')
    .action(async (prompt: string, flags: InspectFlags) => {
      const lm = loadFromFlags(flags);
      const options: TraceOptions = {
        ...samplingFromFlags(flags),
        maxTokens: flags.maxTokens, top: flags.top,
        ...(flags.seed !== undefined && { seed: flags.seed }),
      };
      const trace = await traceGeneration(lm, prompt, options);
      if (flags.json) process.stdout.write(JSON.stringify({ model: lm.file.path, ...trace }) + '\n');
      else process.stdout.write(formatTraceTable(trace));
    });
}
