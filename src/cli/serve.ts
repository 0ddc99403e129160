/**
 * `tokenloop serve [-m MODEL] [--tokenizer FILE] [-t N] [--backend KIND] [--host 127.0.0.1] [--port 8080]
 *   [--model-name NAME] [--template FILE] [-c CTX] [--quiet]`
 *
 * Serves the model over an OpenAI-compatible HTTP API (src/server/app.ts): /v1/models,
 * /v1/completions, /v1/chat/completions (streaming with SSE), /health, and the inspector page at
 * /inspect. Prints the URL to stderr, then one line per request unless --quiet; SIGINT/SIGTERM
 * stop accepting connections, abort running generations and exit.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { startServer } from '../server/app.js';
import type { RequestRecord } from '../server/generation-route.js';
import { loadChatTemplateFile } from '../tokenizer/chat-template.js';
import { CHAT_DEFAULT_CTX } from './chat.js';
import { loadFromFlags, withModelFlags, type ModelFlags } from './model-flags.js';
import { parseInteger } from './parse-args.js';

interface ServeFlags extends ModelFlags {
  host: string;
  port: number;
  modelName?: string;
  template?: string;
  ctxSize?: number;
  quiet?: boolean;
}

function parsePort(v: string): number {
  const n = parseInteger(v);
  if (n < 0 || n > 65535) throw new InvalidArgumentError(`expected a port in [0, 65535], got "${v}"`);
  return n;
}

/** One stderr line per finished request. */
function logLine(r: RequestRecord): string {
  const what = r.finishReason === null ? `status ${r.status}` : `${r.finishReason} · ${r.promptTokens} prompt + ${r.completionTokens} completion tokens`;
  return `[${new Date().toISOString()}] POST ${r.endpoint}${r.stream ? ' (stream)' : ''} · ${what} · ${r.ms.toFixed(0)} ms\n`;
}

/** Register the `serve` command. */
export function register(program: Command): void {
  withModelFlags(program
    .command('serve')
    .description('serve the model over an OpenAI-compatible HTTP API (and the inspector page at /inspect)'))
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, 8080)
    .option('--model-name <name>', 'the model id clients use (default: the model file\'s name)')
    .option('--template <file>', 'chat template file (.jinja, or a HF tokenizer_config.json) instead of the model\'s')
    .option('-c, --ctx-size <n>', `context positions per request (default: the model's context length, at most ${CHAT_DEFAULT_CTX})`, parseInteger)
    .option('--quiet', 'do not log requests to stderr')
    .action(async (flags: ServeFlags) => {
      const lm = loadFromFlags(flags, flags.ctxSize);
      const { app, url } = await startServer({
        lm, host: flags.host, port: flags.port,
        contextLength: flags.ctxSize ?? Math.min(lm.model.config.nCtx, CHAT_DEFAULT_CTX),
        ...(flags.modelName !== undefined && { modelName: flags.modelName }),
        ...(flags.template !== undefined && { chatTemplate: loadChatTemplateFile(flags.template) }),
        ...(!flags.quiet && { onRequestEnd: (r: RequestRecord) => { process.stderr.write(logLine(r)); } }),
      });
      process.stderr.write(`tokenloop: serving ${lm.file.path} at ${url}/v1 (inspector: ${url}/inspect); Ctrl-C stops\n`);
      await new Promise<void>((resolve) => {
        const stop = (sig: NodeJS.Signals) => {
          process.removeListener('SIGINT', stop);
          process.removeListener('SIGTERM', stop);
          process.stderr.write(`tokenloop: ${sig}: shutting down\n`);
          // closeAllConnections aborts streams in flight (their generations see the disconnect).
          app.server.closeAllConnections();
          app.close().then(() => resolve(), () => resolve());
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
