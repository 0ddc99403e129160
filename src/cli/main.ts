/**
 * The `tokenloop` command line. Each command lives in its own file and registers itself here.
 * Errors the user can cause print one line (`tokenloop: error: ...`) and exit with code 1;
 * set TOKENLOOP_DEBUG=1 for the stack trace.
 */
import { Command, CommanderError } from 'commander';
import { TokenloopError } from '../errors.js';
import { commands } from './commands.js';

export async function main(argv: string[]): Promise<number> {
  ignoreClosedPipes();
  const program = new Command('tokenloop')
    .description('Run transformer language models locally and watch the generation loop.')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });
  for (const register of commands) register(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    return reportError(e);
  }
}

let pipesGuarded = false;
/** `tokenloop ... | head` closes stdout early: end quietly instead of crashing with EPIPE. */
function ignoreClosedPipes(): void {
  if (pipesGuarded) return;
  pipesGuarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      throw e;
    });
  }
}

/** Print an error as one line; stack traces only on request. */
export function reportError(e: unknown): number {
  if (e instanceof CommanderError) {
    // Commander already printed its message (usage errors); help/version exit 0.
    return e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 1;
  }
  const debug = !!process.env['TOKENLOOP_DEBUG'];
  if (e instanceof TokenloopError || e instanceof RangeError) {
    process.stderr.write(`tokenloop: error: ${e.message}\n`);
  } else {
    process.stderr.write(`tokenloop: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
  }
  if (debug && e instanceof Error && e.stack) process.stderr.write(e.stack + '\n');
  return 1;
}

// Run when executed directly (tsx src/cli/main.ts ...).
const self = process.argv[1] ?? '';
if (self.endsWith('cli/main.ts') || self.endsWith('cli/main.js')) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}
