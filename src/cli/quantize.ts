/**
 * `tokenloop quantize [--pure] [--quiet] IN.gguf OUT.gguf TYPE`
 *
 * Rewrites a GGUF model with its weight matrices in TYPE (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K), keeping all
 * metadata; see src/tools/quantize.ts for which tensors change. Prints one line per tensor and a
 * summary unless --quiet.
 */
import type { Command } from 'commander';
import { typeName } from '../format/dtypes.js';
import { FILE_TYPES } from '../tools/file-type.js';
import { quantizeFile } from '../tools/quantize.js';

const MiB = (n: number) => (n / 1048576).toFixed(2) + ' MiB';

/** Register the `quantize` command. */
export function register(program: Command): void {
  program
    .command('quantize')
    .description('convert a GGUF model\'s weight matrices to another type')
    .argument('<in>', 'input GGUF (F32, F16 or BF16 weights)')
    .argument('<out>', 'output GGUF')
    .argument('<type>', `target type: ${FILE_TYPES.map((f) => f.name).join(', ')}`)
    .option('--pure', 'give every weight matrix TYPE (no Q8_0 classifier in Q4_0 files)')
    .option('-q, --quiet', 'print only the summary')
    .action((inPath: string, outPath: string, type: string, flags: { pure?: boolean; quiet?: boolean }) => {
      const t0 = performance.now();
      const r = quantizeFile(inPath, outPath, type, {
        pure: flags.pure ?? false,
        onTensor: flags.quiet ? undefined : ({ name, dims, from, to }) => {
          process.stdout.write(`${name.padEnd(28)} [${dims.join(', ')}] ${typeName(from)} -> ${typeName(to)}\n`);
        },
      });
      const counts = Object.entries(r.counts).map(([k, v]) => `${v} ${k}`).join(', ');
      process.stdout.write(`wrote ${outPath}: ${r.fileType.name} (file_type ${r.fileType.ftype}), ${MiB(r.inputBytes)} -> ${MiB(r.outputBytes)}, tensors: ${counts}, ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    });
}
