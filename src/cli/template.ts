/**
 * `tokenloop template [-m MODEL | --template FILE.jinja] --messages FILE.json [--add-generation-prompt]
 *  [--bos-token S] [--eos-token S] [--name NAME]`
 *
 * Renders a chat template the way Hugging Face transformers does and prints the prompt exactly
 * (no newline added). The template comes from `--template` (a .jinja file, or a
 * tokenizer_config.json) or from the model's GGUF metadata (`tokenizer.chat_template`, or
 * `tokenizer.chat_template.NAME` with --name); with a model, bos_token/eos_token are the texts
 * of its BOS/EOS tokens unless overridden. The messages file is a JSON array of messages, or an
 * object with `messages` plus any other template variables (`tools`, `documents`, ...).
 * A template that raises fails with its own message.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { InvalidOptionError } from '../errors.js';
import { openModelFile } from '../format/open.js';
import {
  chatTemplateFromMetadata, ggufSpecialTokenText, loadChatTemplateFile, renderChat, TemplateError,
  type ChatMessage, type ChatTemplateVariables,
} from '../tokenizer/chat-template.js';
import { resolveModelPath } from './resolve-model.js';

interface TemplateFlags {
  model?: string;
  template?: string;
  messages: string;
  addGenerationPrompt?: boolean;
  bosToken?: string;
  eosToken?: string;
  name?: string;
}

/** Register the `template` command. */
export function register(program: Command): void {
  program
    .command('template')
    .description('render a chat template for a conversation and print the prompt exactly')
    .option('-m, --model <path>', 'model whose GGUF metadata holds the chat template (default: the default model)')
    .option('--template <file>', 'chat template file: .jinja, or a HF tokenizer_config.json')
    .requiredOption('--messages <file>', 'JSON file: an array of messages, or {"messages": [...], other variables}')
    .option('--add-generation-prompt', 'end with the header of the assistant turn')
    .option('--bos-token <text>', 'bos_token variable (default: the model\'s BOS text)')
    .option('--eos-token <text>', 'eos_token variable (default: the model\'s EOS text)')
    .option('--name <name>', 'a named template (tokenizer.chat_template.NAME / tokenizer_config list entry)')
    .action((flags: TemplateFlags) => {
      if (flags.model !== undefined && flags.template !== undefined) {
        throw new InvalidOptionError('give either -m/--model or --template, not both');
      }
      const vars = readMessagesFile(flags.messages);
      let source: string;
      if (flags.template !== undefined) {
        source = loadChatTemplateFile(flags.template, flags.name);
      } else {
        const file = openModelFile(resolveModelPath(flags.model));
        if (file.kind !== 'gguf') throw new TemplateError(`model has no chat template (${file.path} is a llama2.c checkpoint)`);
        source = chatTemplateFromMetadata(file.meta, flags.name);
        const bos = ggufSpecialTokenText(file.meta, 'bos');
        const eos = ggufSpecialTokenText(file.meta, 'eos');
        if (bos !== undefined && vars.bos_token === undefined) vars.bos_token = bos;
        if (eos !== undefined && vars.eos_token === undefined) vars.eos_token = eos;
      }
      if (flags.bosToken !== undefined) vars.bos_token = flags.bosToken;
      if (flags.eosToken !== undefined) vars.eos_token = flags.eosToken;
      if (flags.addGenerationPrompt) vars.add_generation_prompt = true;
      process.stdout.write(renderChat(source, vars));
    });
}

/** Read and validate the messages file into template variables. */
function readMessagesFile(path: string): ChatTemplateVariables {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InvalidOptionError(code === 'ENOENT' ? `messages file not found: ${path}` : `cannot read messages file ${path}: ${(e as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new InvalidOptionError(`${path}: invalid JSON (${(e as Error).message})`);
  }
  const vars: Record<string, unknown> = Array.isArray(data) ? { messages: data }
    : data !== null && typeof data === 'object' ? { ...(data as Record<string, unknown>) } : {};
  const messages = vars['messages'];
  if (!Array.isArray(messages)) {
    throw new InvalidOptionError(`${path}: expected a JSON array of messages or an object with a "messages" array`);
  }
  messages.forEach((m: unknown, i) => {
    if (m === null || typeof m !== 'object' || typeof (m as ChatMessage).role !== 'string') {
      throw new InvalidOptionError(`${path}: message ${i} must be an object with a string "role"`);
    }
  });
  return vars as ChatTemplateVariables;
}
